"""Chunks fetched a few at once (``fetch_parallelism``): the same payload as one at a time, used in
order, at most N held, every check kept, and the first failure stops the rest (as the Go
reader's fetch_test.go)."""

from __future__ import annotations

import base64
import random
import threading
import time

import pytest

from bloomoperator_reader import (
    DEFAULT_FETCH_PARALLELISM,
    MAX_FETCH_PARALLELISM,
    Action,
    ConfigMapSet,
    LoadFailureReason,
    SnapshotReader,
)
from bloomoperator_reader.errors import VerificationError
from bloomoperator_reader.fetch import check_chunk, fetch_chunks
from bloomoperator_reader.manifest import ChunkRef
from snapshots import NAMESPACE, Filter, Publisher, sha

KEYS = [f"k-{i}" for i in range(300)]


class Getter:
    """A ConfigMapGetter over a Publisher's ConfigMaps that counts the chunk GETs under way at
    once (the most in ``peak``), every chunk asked for (``asked``, in call order) and waits
    ``delay(name)`` seconds in each, like a round trip to the API server."""

    def __init__(self, publisher: Publisher, delay=lambda name: 0.0):
        self._publisher = publisher
        self._delay = delay
        self._lock = threading.Lock()
        self.active = self.peak = 0
        self.asked: list[str] = []
        self.after_return = False

    def __call__(self, namespace: str, name: str):
        configmaps = ConfigMapSet(self._publisher.configmaps())
        if name == self._publisher.manifest_name:
            return configmaps(namespace, name)
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
            self.asked.append(name)
        try:
            time.sleep(self._delay(name))
            return configmaps(namespace, name)
        finally:
            with self._lock:
                self.active -= 1


def many_chunks() -> Publisher:
    """A Guava filter of 8,006 bytes in 81 chunks of 100 bytes."""
    p = Publisher(chunk_size=100)
    p.whole(1, Filter("Guava", "String", 64_000, 5).add(*KEYS))
    assert len(p.published["chunks"]) == 81
    return p


def chunk(p: Publisher, version: int, index: int) -> str:
    return f"{p.filter_name}-bloom-v{version}-{index}"


@pytest.mark.parametrize("parallel", [1, DEFAULT_FETCH_PARALLELISM, MAX_FETCH_PARALLELISM])
def test_parallel_fetch_gives_the_same_payload_in_order(parallel):
    p = many_chunks()
    # Later chunks answer sooner: they arrive out of order and must be used in order.
    getter = Getter(p, delay=lambda name: 0.004 - 0.00004 * int(name.rsplit("-", 1)[1].lstrip("d")))
    r = SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=parallel)
    assert r.refresh(getter).action is Action.LOAD
    assert r.served.filter.payload_sha256() == p.published["sha256"]
    assert all(r.might_contain(k) for k in KEYS)
    # Never more at once than allowed; and at once when allowed (81 GETs of a few ms each).
    assert getter.peak <= parallel and (parallel == 1 or getter.peak >= 2), getter.peak

    # A delta of several chunks on it: fetched in parallel, applied in order onto a copy.
    bits = p.filters[1].copy().add(*(f"d-{i}" for i in range(100)))
    p.chunk_size = 64
    p.delta(2, bits)
    assert len(p.published["chain"]["deltas"][0]["chunks"]) >= 3
    assert r.refresh(getter).action is Action.LOAD
    assert r.served.filter.payload_sha256() == p.published["sha256"]
    # A reader holding nothing reads base and chain, both in parallel.
    cold = SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=parallel)
    assert cold.refresh(Getter(p)).action is Action.LOAD
    assert cold.served.filter.payload_sha256() == p.published["sha256"]
    assert cold.might_contain("d-99")


def test_parallel_fetch_refuses_a_tampered_chunk_and_fetches_no_further():
    p = many_chunks()
    name = chunk(p, 1, 1)
    raw = bytearray(base64.b64decode(p.objects[name]["binaryData"]["chunk"]))
    raw[10] ^= 1  # the same size, another digest
    p.objects[name]["binaryData"]["chunk"] = base64.b64encode(bytes(raw)).decode("ascii")
    # Chunk 0 is slow: chunk 1's failure is found while chunk 0 is still being fetched.
    getter = Getter(p, delay=lambda n: 0.3 if n == chunk(p, 1, 0) else 0.0)
    r = SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=4)
    outcome = r.refresh(getter)
    assert (outcome.action, outcome.reason) == (Action.REFUSE, LoadFailureReason.VERIFICATION)
    assert "chunk 1 " in str(outcome.error) and "sha256 mismatch" in str(outcome.error)
    assert r.served is None, "serves a version with a tampered chunk"
    # Chunks 0..3 were under way; none after them was ever asked for, none runs on.
    assert getter.active == 0
    assert len(getter.asked) <= 4 and set(getter.asked) <= {chunk(p, 1, i) for i in range(4)}
    asked = len(getter.asked)
    time.sleep(0.1)
    assert len(getter.asked) == asked, "a chunk was fetched after the load returned"


def test_the_first_failure_is_reported_and_cancels_the_rest():
    p = many_chunks()
    failing = chunk(p, 1, 2)

    def getter(namespace, name):
        if name == failing:
            raise ConnectionResetError("connection reset")
        time.sleep(0.05)
        return ConfigMapSet(p.configmaps())(namespace, name)

    r = SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=8)
    start = time.monotonic()
    outcome = r.refresh(getter)
    assert (outcome.action, outcome.reason) == (Action.REFUSE, LoadFailureReason.API)
    assert isinstance(outcome.error, ConnectionResetError) and outcome.retry
    assert time.monotonic() - start < 5


def test_at_most_n_chunks_are_held():
    p = many_chunks()
    refs = [ChunkRef(**ref) for ref in p.published["chunks"]]
    configmaps = ConfigMapSet(p.configmaps())
    parallel = 4
    lock = threading.Lock()
    state = {"returned": 0, "used": 0, "most": 0}
    first_may_return = threading.Event()

    def source(index, ref):
        if index == 0:
            first_may_return.wait(5)  # the others are fetched ahead meanwhile, as far as allowed
        else:
            time.sleep(random.random() * 0.002)
        cm = configmaps(NAMESPACE, ref.name)
        with lock:
            state["returned"] += 1
            state["most"] = max(state["most"], state["returned"] - state["used"])
        return base64.b64decode(cm["binaryData"]["chunk"])

    used = []

    def use(i, data):
        used.append(i)
        with lock:
            state["most"] = max(state["most"], state["returned"] - state["used"])
        with lock:
            state["used"] += 1

    def where(i):
        return f"chunk {i}"

    runner = threading.Thread(target=fetch_chunks, args=(refs, source, parallel, where, use))
    runner.start()
    # While chunk 0 is outstanding, chunks 1..3 are fetched and held, and chunk 4 is not asked
    # for: it would be a fifth chunk held.
    deadline = time.monotonic() + 5
    while state["returned"] < parallel - 1 and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.1)
    assert state["returned"] == parallel - 1 and not used
    first_may_return.set()
    runner.join(10)
    assert used == list(range(len(refs)))
    assert state["most"] == parallel, state  # reached, never passed


def test_a_chunk_with_another_size_or_digest_or_missing_is_refused_before_use():
    data = b"x" * 10
    ref = ChunkRef(name="c", bytes=10, sha256=sha(data))
    assert check_chunk(ref, data, "chunk 0") == data
    for wrong in (None, b"x" * 9, b"y" * 10):
        with pytest.raises(VerificationError):
            check_chunk(ref, wrong, "chunk 0")
    used = []
    with pytest.raises(VerificationError, match="chunk 1"):
        fetch_chunks(
            [ref, ref, ref], lambda i, r: b"y" * 10 if i == 1 else data, 3,
            lambda i: f"chunk {i}", lambda i, d: used.append(i),
        )  # fmt: skip
    assert 1 not in used and 2 not in used


@pytest.mark.parametrize("value", [0, -1, MAX_FETCH_PARALLELISM + 1, True, 2.0, "4", None])
def test_fetch_parallelism_out_of_range_is_refused(value):
    with pytest.raises(ValueError, match="fetch_parallelism"):
        SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=value)


def test_fetch_parallelism_defaults_to_four():
    assert SnapshotReader(NAMESPACE, "products", "String").fetch_parallelism == 4
    assert SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=1).fetch_parallelism == 1
    assert SnapshotReader(NAMESPACE, "products", "String", fetch_parallelism=16).fetch_parallelism == 16
