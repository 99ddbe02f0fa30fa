"""Chunks the operator published into an object store (versitygw), driven by the operator's
``io.bloomoperator.objectstore.ForeignReaderStoreTest``.

The reader resolves the manifest's store name with its own configuration (``BLOOM_STORE_*``:
endpoint, bucket, prefix, region and the key files of a read-only user) and must answer as the
Java reader does for a whole version (step 1) and the delta on it (step 2). Java writes
``s<N>.keys`` (the version on the first line, then a key and Java's answer per line) and
``s<N>.published``; this side writes ``s<N>.python.seen``. Skipped without that environment.
"""

from __future__ import annotations

import os
import pathlib

import pytest

from bloomoperator_reader import (
    Action,
    LoadFailureReason,
    S3ObjectStore,
    SnapshotReader,
    access_key_files,
    static_credentials,
)
from bloomoperator_reader.watch import FilterWatcher
from test_cluster import _until

_ENV = (
    "KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER", "BLOOM_CLUSTER_DIR",
    "BLOOM_STORE_NAME", "BLOOM_STORE_ENDPOINT", "BLOOM_STORE_BUCKET", "BLOOM_STORE_PREFIX",
    "BLOOM_STORE_REGION", "BLOOM_STORE_ACCESS_KEY_FILE", "BLOOM_STORE_SECRET_KEY_FILE",
)  # fmt: skip
_MISSING = [name for name in _ENV if not os.environ.get(name)]

pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason="needs a real API server and S3 store; run by the operator's ForeignReaderStoreTest "
    f"(missing {', '.join(_MISSING)})",
)

def _step(
    directory: pathlib.Path, step: int, role: str | None = None
) -> tuple[int, list[str], list[bool]]:
    """Step ``step``'s version and Java's answers (for the readers of ``role``:
    ``s<N>.<role>.keys``), once Java has published it."""
    _until(lambda: (directory / f"s{step}.published").exists(), f"step {step} to be published")
    name = f"s{step}.keys" if role is None else f"s{step}.{role}.keys"
    lines = (directory / name).read_text("utf-8").splitlines()
    keys, answers = [], []
    for line in lines[1:]:
        key, answer = line.rsplit("\t", 1)
        keys.append(key)
        answers.append(answer == "1")
    return int(lines[0]), keys, answers


def _store(credentials) -> S3ObjectStore:
    return S3ObjectStore(
        os.environ["BLOOM_STORE_ENDPOINT"],
        os.environ["BLOOM_STORE_BUCKET"],
        prefix=os.environ["BLOOM_STORE_PREFIX"],
        region=os.environ["BLOOM_STORE_REGION"],
        credentials=credentials,
        attempts=2,
    )


def _reader(stores) -> SnapshotReader:
    return SnapshotReader(
        os.environ["BLOOM_CLUSTER_NAMESPACE"],
        os.environ["BLOOM_CLUSTER_FILTER"],
        "String",
        before_first=False,
        object_stores=stores,
    )


def test_reads_operator_store_snapshots_with_javas_answers():
    from kubernetes import client, config

    directory = pathlib.Path(os.environ["BLOOM_CLUSTER_DIR"])
    api = client.CoreV1Api(config.new_client_from_config(os.environ["KUBECONFIG"]))
    name = os.environ["BLOOM_STORE_NAME"]
    files = access_key_files(
        os.environ["BLOOM_STORE_ACCESS_KEY_FILE"], os.environ["BLOOM_STORE_SECRET_KEY_FILE"]
    )
    watcher = FilterWatcher(
        _reader({name: _store(files)}), api, resync_seconds=2.0, backoff_seconds=0.2,
        max_backoff_seconds=1.0, start=False,
    )  # fmt: skip
    with watcher.start():
        version, keys, answers = _step(directory, 1)
        _until(lambda: watcher.version == version, f"v{version} ({watcher.last_outcome})")
        assert watcher.might_contain_many(keys).tolist() == answers
        assert [watcher.might_contain(k) for k in keys] == answers
        assert any(answers) and not all(answers)

        # The same manifest, read by readers configured otherwise: wrong credentials are the
        # store's refusal, a store of another name is unknown; neither serves anything.
        wrong = _reader({name: _store(static_credentials("bloomreader", "not-the-secret"))})
        unknown = _reader({"another-store": _store(static_credentials("x", "y"))})
        for other, reason in (
            (wrong, LoadFailureReason.STORE_DENIED),
            (unknown, LoadFailureReason.UNKNOWN_STORE),
        ):
            outcome = other.refresh(watcher.configmaps)
            assert (outcome.action, outcome.reason) == (Action.REFUSE, reason), outcome
            assert other.served is None
        (directory / "s1.python.seen").touch()

        # Step 2: a delta on it, from the store, applied to a copy of the served bits.
        version, keys, answers = _step(directory, 2)
        _until(lambda: watcher.version == version, f"v{version} ({watcher.last_outcome})")
        assert watcher.reader.served.manifest.chain is not None, "step 2 is not a delta"
        assert watcher.might_contain_many(keys).tolist() == answers
        assert watcher.failures == 0, watcher.last_failure
        (directory / "s2.python.seen").touch()
        _until(lambda: (directory / "done").exists(), "the Java side to finish")
