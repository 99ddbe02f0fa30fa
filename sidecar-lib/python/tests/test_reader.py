"""The reader end to end on snapshots laid out as the operator lays them out (tests/snapshots.py)."""

from __future__ import annotations

import copy
import json
import threading

import numpy as np
import pytest

from bloomoperator_reader import (
    Action,
    ConfigMapSet,
    LoadFailureReason,
    SnapshotLimits,
    SnapshotReader,
)
from snapshots import NAMESPACE, Filter, Publisher, Signer, chunk_configmap

R = LoadFailureReason
STRINGS = [f"sku-{i}" for i in range(40)]
ABSENT = [f"absent-{i}" for i in range(400)]


def reader(key_type="String", **kwargs) -> SnapshotReader:
    return SnapshotReader(NAMESPACE, "products", key_type, **kwargs)


def step(r: SnapshotReader, publisher: Publisher, objects=None):
    return r.refresh(ConfigMapSet(objects if objects is not None else publisher.configmaps()))


def assert_answers(r: SnapshotReader, bits: Filter, keys) -> None:
    """Scalar and batch answers agree with each other and with the filter that was written."""
    scalar = [r.might_contain(key) for key in keys]
    batch = r.might_contain_many(keys).tolist()
    assert scalar == batch
    expected = [Filter(bits.layout, bits.key_type, bits.num_bits, bits.k).add(k).bits for k in keys]
    assert scalar == [bool(np.all(bits.bits[e])) for e in expected]


@pytest.fixture(params=["Guava", "SplitBlock"])
def layout(request):
    return request.param


def new_filter(layout, key_type="String"):
    return Filter(layout, key_type, 2048, 5 if layout == "Guava" else 8)


def test_loads_a_whole_snapshot_and_answers_like_the_written_filter(layout):
    p = Publisher()
    bits = new_filter(layout).add(*STRINGS)
    p.whole(1, bits)
    r = reader()
    outcome = step(r, p)
    assert (outcome.action, outcome.version) == (Action.LOAD, 1)
    assert r.served.version == 1
    assert all(r.might_contain(key) for key in STRINGS)
    assert_answers(r, bits, STRINGS + ABSENT)
    assert r.served.filter.payload_sha256() == p.published["sha256"]


def test_long_keys_in_both_layouts(layout):
    p = Publisher()
    keys = [0, 1, -1, 2**63 - 1, -(2**63), 42, 10**15]
    bits = new_filter(layout, "Long").add(*keys)
    p.whole(1, bits)
    r = reader("Long")
    assert step(r, p).action is Action.LOAD
    probes = keys + list(range(1000, 1400))
    assert_answers(r, bits, probes)
    assert r.might_contain_many(np.array(probes, dtype=np.int64)).tolist() == [
        r.might_contain(k) for k in probes
    ]
    with pytest.raises(TypeError):
        r.might_contain("1")


def test_the_same_snapshot_announced_again_is_kept(layout):
    p = Publisher()
    p.whole(1, new_filter(layout).add("a"))
    r = reader()
    step(r, p)
    served = r.served
    assert step(r, p).action is Action.KEEP
    assert r.served is served


def test_a_delta_is_applied_to_a_copy_of_the_held_version(layout):
    p = Publisher()
    v1 = new_filter(layout).add(*STRINGS[:20])
    p.whole(1, v1)
    r = reader()
    step(r, p)
    held = r.served
    held_words = held.filter.words.copy()
    v2 = new_filter(layout).add(*STRINGS[10:30])
    p.delta(2, v2)
    # Only the delta's chunks are there: the base's must not be needed.
    objects = [cm for cm in p.configmaps() if "-v1-" not in cm["metadata"]["name"]]
    outcome = step(r, p, objects)
    assert (outcome.action, outcome.version) == (Action.LOAD, 2)
    assert_answers(r, v2, STRINGS + ABSENT)
    assert np.array_equal(held.filter.words, held_words)
    with pytest.raises(ValueError):
        held.filter.words[0] = 1


def test_a_chain_loads_from_nothing_and_from_an_intermediate_version(layout):
    p = Publisher()
    v1 = new_filter(layout).add(*STRINGS[:10])
    p.whole(1, v1)
    v2 = new_filter(layout).add(*STRINGS[:20])
    p.delta(2, v2)
    middle = reader()
    step(middle, p)
    v3 = new_filter(layout).add(*STRINGS[5:35])
    p.delta(3, v3)
    cold = reader()
    assert step(cold, p).action is Action.LOAD
    assert_answers(cold, v3, STRINGS + ABSENT)
    # Holding v2, a reader needs only v3's delta.
    objects = [cm for cm in p.configmaps() if "-v3-d" in cm["metadata"]["name"]
               or cm["metadata"]["name"] == p.manifest_name]  # fmt: skip
    assert step(middle, p, objects).action is Action.LOAD
    assert_answers(middle, v3, STRINGS + ABSENT)


def test_a_held_version_not_in_the_chain_loads_base_and_chain():
    p = Publisher()
    p.whole(1, new_filter("Guava").add("x"))
    r = reader()
    step(r, p)
    q = Publisher()
    q.second = 100
    q.whole(5, new_filter("Guava").add("y"))
    v6 = new_filter("Guava").add("y", "z")
    q.delta(6, v6)
    assert step(r, q).action is Action.LOAD
    assert_answers(r, v6, ["x", "y", "z"] + ABSENT)


def test_without_trusted_keys_a_lower_version_loads():
    p = Publisher()
    p.whole(5, new_filter("Guava").add("a"))
    r = reader()
    step(r, p)
    q = Publisher()
    q.whole(1, new_filter("Guava").add("b"))
    assert step(r, q).action is Action.LOAD
    assert r.served.version == 1


def test_signed_manifests_load_and_rollbacks_are_refused():
    signer = Signer()
    p = Publisher(signer=signer)
    p.whole(1, new_filter("Guava").add("a"))
    old_objects = copy.deepcopy(p.configmaps())
    p.whole(2, new_filter("Guava").add("b"))
    r = reader(trusted_keys=[signer.public_pem])
    assert step(r, p).action is Action.LOAD
    outcome = step(r, p, old_objects)
    assert (outcome.action, outcome.reason, outcome.version) == (Action.REFUSE, R.ROLLBACK, 1)
    assert r.served.version == 2
    # A re-created filter's v1 is created later: not a rollback.
    p.whole(1, new_filter("Guava").add("c"))
    assert step(r, p).action is Action.LOAD
    assert r.might_contain("c")


def test_signature_refusals(layout):
    signer, stranger = Signer(), Signer()
    p = Publisher(signer=signer)
    manifest = p.whole(1, new_filter(layout).add("a"))
    r = reader(trusted_keys=[signer.public_pem])
    text = json.dumps(manifest, indent=2)

    p.announce(manifest, text=text, signature=None)
    assert step(r, p).reason is R.UNSIGNED
    p.announce(manifest, text=text, signature=stranger.sign(text))
    assert step(r, p).reason is R.UNTRUSTED_KEY
    p.announce(manifest, text=text, signature=signer.sign(text, namespace="elsewhere"))
    assert step(r, p).reason is R.BAD_SIGNATURE
    p.announce(manifest, text=text + " ", signature=signer.sign(text))
    assert step(r, p).reason is R.BAD_SIGNATURE
    p.announce(manifest, text=text, signature='{"algorithm":"RSA","keyId":"x","signature":"x"}')
    assert step(r, p).reason is R.BAD_SIGNATURE
    p.announce(manifest, text=text, signature="not json")
    assert step(r, p).reason is R.BAD_SIGNATURE
    assert r.served is None
    p.announce(manifest, text=text, signature=signer.sign(text))
    assert step(r, p).action is Action.LOAD


def test_a_served_snapshot_announced_with_a_bad_signature_is_refused_not_kept():
    signer = Signer()
    p = Publisher(signer=signer)
    manifest = p.whole(1, new_filter("Guava").add("a"))
    r = reader(trusted_keys=[signer.public_pem])
    step(r, p)
    p.announce(manifest, signature=None)
    outcome = step(r, p)
    assert (outcome.action, outcome.reason) == (Action.REFUSE, R.UNSIGNED)
    assert r.served.version == 1


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda m: m.update(filterName="other"), R.WRONG_FILTER),
        (lambda m: m["chunks"][1].update(name="elsewhere"), R.FOREIGN_CHUNK),
        (lambda m: m["chunks"][0].update(name="products-bloom-v2-0"), R.FOREIGN_CHUNK),
        (lambda m: m.update(keyType="Long"), R.VERIFICATION),
        (lambda m: m.update(totalBytes=m["totalBytes"] + 1), R.VERIFICATION),
        (lambda m: m.update(format="guava-bloomfilter-v2"), R.VERIFICATION),
        (lambda m: m.update(version=0), R.VERIFICATION),
        (lambda m: m.update(version=10**18), R.VERIFICATION),
        (lambda m: m.update(createdAt="yesterday"), R.VERIFICATION),
        (lambda m: m.update(numBits=m["numBits"] + 1.0), R.VERIFICATION),
        (lambda m: m.pop("sha256"), R.VERIFICATION),
        (lambda m: m.update(store="bucket-1"), R.UNKNOWN_STORE),
    ],
)
def test_manifest_refusals_before_any_chunk_is_fetched(edit, reason):
    p = Publisher()
    manifest = copy.deepcopy(p.whole(1, new_filter("Guava").add("a")))
    edit(manifest)
    p.announce(manifest)
    fetched = []

    def getter(namespace, name):
        if name != p.manifest_name:
            fetched.append(name)
        return ConfigMapSet(p.configmaps())(namespace, name)

    outcome = reader().refresh(getter)
    assert (outcome.action, outcome.reason) == (Action.REFUSE, reason)
    assert fetched == []


def test_limits_are_checked_before_anything_is_fetched():
    p = Publisher()
    p.whole(1, new_filter("Guava").add("a"))  # 6 + 256 bytes in 5 chunks
    assert step(reader(limits=SnapshotLimits(261, 100)), p).reason is R.TOO_LARGE
    assert step(reader(limits=SnapshotLimits(262, 4)), p).reason is R.TOO_LARGE
    assert step(reader(limits=SnapshotLimits(262, 5)), p).action is Action.LOAD


def test_a_chunk_announced_larger_than_a_configmap_is_too_large():
    p = Publisher(chunk_size=1024 * 1024 + 1)
    p.whole(1, Filter("Guava", "String", 8 * (1024 * 1024 + 64), 1))
    assert step(reader(), p).reason is R.TOO_LARGE


def test_chunk_failures_keep_the_served_filter(layout):
    p = Publisher()
    p.whole(1, new_filter(layout).add("a"))
    r = reader()
    step(r, p)
    p.whole(2, new_filter(layout).add("b"))
    name = "products-bloom-v2-1"
    good = p.objects[name]

    def outcome_with(chunk):
        objects = {**p.objects}
        if chunk is None:
            del objects[name]
        else:
            objects[name] = chunk
        return step(r, p, list(objects.values()))

    missing = outcome_with(None)
    assert (missing.action, missing.reason, missing.retry) == (Action.REFUSE, R.VERIFICATION, True)
    text = good["binaryData"]["chunk"]
    assert outcome_with(chunk_configmap(name, b"\0" * 67)).reason is R.CHUNK  # longer base64
    # 65 bytes have the Base64 length of 64: the size check is the decoder's.
    assert outcome_with(chunk_configmap(name, b"\0" * 65)).reason is R.VERIFICATION
    assert outcome_with({"metadata": good["metadata"], "data": {"chunk": text}}).reason is R.CHUNK
    assert outcome_with(
        {"metadata": good["metadata"], "binaryData": {"chunk": "!" + text[1:]}}
    ).reason is R.CHUNK
    assert outcome_with(chunk_configmap(name, b"\1" * 64)).reason is R.VERIFICATION  # sha256
    assert r.served.version == 1
    assert step(r, p).action is Action.LOAD


def test_a_header_that_disagrees_with_the_manifest_fails_verification():
    p = Publisher()
    bits = Filter("Guava", "String", 2048, 5).add("a")
    manifest = p.whole(1, bits)
    manifest = copy.deepcopy(manifest)
    manifest["numHashFunctions"] = 6  # header says 5: digests still match
    p.announce(manifest)
    outcome = step(reader(), p)
    assert (outcome.action, outcome.reason) == (Action.REFUSE, R.VERIFICATION)
    assert "numHashFunctions" in str(outcome.error)


def test_a_delta_producing_another_payload_fails_verification(layout):
    p = Publisher()
    p.whole(1, new_filter(layout).add("a"))
    r = reader()
    step(r, p)
    manifest = copy.deepcopy(p.delta(2, new_filter(layout).add("a", "b")))
    wrong = "0" * 64
    manifest["sha256"] = wrong
    manifest["chain"]["deltas"][-1]["sha256"] = wrong
    p.announce(manifest)
    outcome = step(r, p)
    assert (outcome.action, outcome.reason) == (Action.REFUSE, R.VERIFICATION)
    assert r.served.version == 1


def test_a_deleted_manifest_changes_nothing():
    p = Publisher()
    p.whole(1, new_filter("Guava").add("a"))
    r = reader()
    step(r, p)
    assert step(r, p, []).action is Action.KEEP
    assert r.served.version == 1


def test_canary_share_follows_the_pod_name_bucket():
    p = Publisher()
    p.whole(1, new_filter("Guava").add("stable"))
    canary = copy.deepcopy(p.published)
    p.whole(2, new_filter("Guava").add("canary"))
    canary_manifest = p.published
    p.announce(canary)  # the stable manifest is v1 again; v2 is the canary
    p.set_canary(canary_manifest, "50")
    # Buckets from docs/reader-protocol.md: app-0 -> 5, app-1 -> 65, reader-7 -> 43.
    for pod, version in [("app-0", 2), ("app-1", 1), ("reader-7", 2), (None, 1)]:
        r = reader(pod_name=pod)
        outcome = step(r, p)
        assert (outcome.action, r.served.version, outcome.canary) == (
            Action.LOAD, version, version == 2,
        )  # fmt: skip
    p.set_canary(canary_manifest, "5")
    assert step(reader(pod_name="app-0"), p).version == 1
    for malformed in ["0", "101", "+50", " 50", "050 ", ""]:
        p.set_canary(canary_manifest, malformed)
        assert step(reader(pod_name="app-0"), p).version == 1


def test_a_refused_canary_is_reported_and_the_stable_manifest_followed():
    signer = Signer()
    p = Publisher(signer=signer)
    p.whole(1, new_filter("Guava").add("stable"))
    stable = copy.deepcopy(p.published)
    p.whole(2, new_filter("Guava").add("canary"))
    canary_manifest = p.published
    p.announce(stable)
    p.set_canary(canary_manifest, "100", signed=False)
    r = reader(pod_name="app-1", trusted_keys=[signer.public_pem])
    outcome = step(r, p)
    assert (outcome.action, outcome.version) == (Action.LOAD, 1)
    assert outcome.canary_failure == (2, R.UNSIGNED)
    # Reported once, not on every look.
    assert step(r, p).canary_failure is None


def test_lookups_before_the_first_snapshot():
    assert reader().might_contain("x") is True
    assert reader(before_first=False).might_contain_many(["x", "y"]).tolist() == [False, False]
    with pytest.raises(Exception, match="no snapshot"):
        reader(before_first=None).might_contain("x")


def test_a_failing_getter_is_an_api_failure():
    def getter(namespace, name):
        raise ConnectionError("no API server")

    outcome = reader().refresh(getter)
    assert (outcome.action, outcome.reason, outcome.retry) == (Action.REFUSE, R.API, True)


def test_max_manifest_age_refuses_old_signed_manifests():
    signer = Signer()
    p = Publisher(signer=signer)
    p.whole(1, new_filter("Guava").add("a"))  # created 2026-12-02T10:00:01Z
    created_ns = 1_796_205_601 * 10**9
    young = reader(trusted_keys=[signer.public_pem], max_manifest_age_seconds=60,
                   clock=lambda: created_ns + 59 * 10**9)  # fmt: skip
    assert step(young, p).action is Action.LOAD
    old = reader(trusted_keys=[signer.public_pem], max_manifest_age_seconds=60,
                 clock=lambda: created_ns + 61 * 10**9)  # fmt: skip
    assert step(old, p).reason is R.TOO_OLD
    with pytest.raises(ValueError):
        reader(max_manifest_age_seconds=60)


def test_batches_larger_than_one_array_pass_answer_like_single_lookups(layout):
    p = Publisher()
    bits = new_filter(layout, "Long").add(*range(0, 3000, 7))
    p.whole(1, bits)
    r = reader("Long")
    step(r, p)
    keys = np.arange(-70_000, 70_000, 2, dtype=np.int64)  # 70,000 keys: two passes of 2^16
    batch = r.might_contain_many(keys)
    assert batch.tolist() == [r.might_contain(k) for k in keys.tolist()]
    assert batch.any() and not batch.all()


def test_lookups_during_loads_see_one_whole_version_at_a_time():
    # v1 holds one set of keys, v2 the other: every batch must be all of one and none of the
    # other, however the swaps fall between lookups.
    p = Publisher()
    odd, even = [f"k{i}" for i in range(1, 200, 2)], [f"k{i}" for i in range(0, 200, 2)]
    v1 = Filter("Guava", "String", 1 << 16, 3).add(*odd)
    v2 = Filter("Guava", "String", 1 << 16, 3).add(*even)
    p.whole(1, v1)
    versions = [copy.deepcopy(p.configmaps())]
    p.whole(2, v2)
    versions.append(copy.deepcopy(p.configmaps()))
    r = reader()
    step(r, p, versions[0])
    expected = {tuple(r.might_contain_many(odd + even).tolist())}
    step(r, p, versions[1])
    expected.add(tuple(r.might_contain_many(odd + even).tolist()))
    assert len(expected) == 2
    stop = threading.Event()
    seen = []

    def look():
        while not stop.is_set():
            seen.append(tuple(r.might_contain_many(odd + even).tolist()))

    thread = threading.Thread(target=look)
    thread.start()
    try:
        for i in range(40):
            assert step(r, p, versions[i % 2]).action is Action.LOAD
    finally:
        stop.set()
        thread.join()
    assert seen and set(seen) <= expected
