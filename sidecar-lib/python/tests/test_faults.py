"""The watcher through an API server restart past etcd compaction and a rollback, driven by the
operator's ``io.bloomoperator.watch.ForeignReaderFaultTest`` on a restartable cluster.

Step 1 is a signed v1; step 2 is v2, published while this reader's API server was down and
etcd's history compacted past what it had seen (its watch, resumed from the resourceVersion
it held, must be answered 410 Gone, counted in ``watch_expirations``; then it must list again
and load v2); step 3 is the genuinely signed v1 written back, to be refused as ``ROLLBACK`` while
v2 keeps answering. Java writes ``s<N>.keys`` (the version to serve on the first line, then a key and Java's answer per
line) and ``s<N>.published``; this side writes ``s<N>.python.seen``. Skipped without that
environment.
"""

from __future__ import annotations

import os
import pathlib

import pytest

from bloomoperator_reader import LoadFailureReason, SnapshotReader
from bloomoperator_reader.watch import FilterWatcher
from test_cluster import _until
from test_store import _step

_ENV = (
    "KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER", "BLOOM_CLUSTER_DIR",
    "BLOOM_TRUSTED_KEY_FILE",
)  # fmt: skip
_MISSING = [name for name in _ENV if not os.environ.get(name)]

pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason="needs a restartable API server; run by the operator's ForeignReaderFaultTest "
    f"(missing {', '.join(_MISSING)})",
)


def test_relists_after_a_restart_past_compaction_and_refuses_a_rollback():
    from kubernetes import client, config

    directory = pathlib.Path(os.environ["BLOOM_CLUSTER_DIR"])
    api = client.CoreV1Api(config.new_client_from_config(os.environ["KUBECONFIG"]))
    reader = SnapshotReader(
        os.environ["BLOOM_CLUSTER_NAMESPACE"],
        os.environ["BLOOM_CLUSTER_FILTER"],
        "String",
        trusted_keys=[pathlib.Path(os.environ["BLOOM_TRUSTED_KEY_FILE"]).read_text()],
        before_first=False,
    )
    watcher = FilterWatcher(
        reader, api, resync_seconds=2.0, backoff_seconds=0.2, max_backoff_seconds=1.0, start=False
    )
    with watcher.start():
        version, keys, answers = _step(directory, 1)
        _until(lambda: watcher.version == version, f"v{version} ({watcher.last_outcome})")
        assert watcher.might_contain_many(keys).tolist() == answers
        lists, expired = watcher.relists, watcher.watch_expirations
        (directory / "s1.python.seen").touch()

        # Published while the API server was down; found after it came back, by a new list.
        version, keys, answers = _step(directory, 2)
        _until(lambda: watcher.version == version, f"v{version} ({watcher.last_outcome})")
        assert watcher.might_contain_many(keys).tolist() == answers
        assert watcher.relists > lists, "the watch was not listed again"
        # The watch resumed from the resourceVersion it held, compacted away: answered 410 Gone,
        # and the list came after that answer (not merely after the broken connection).
        assert watcher.watch_expirations > expired, "no watch answered 410 Gone across the restart"
        (directory / "s2.python.seen").touch()

        # v1 written back, genuinely signed: a rollback, refused; v2 keeps answering.
        version, keys, answers = _step(directory, 3)
        _until(
            lambda: watcher.last_failure is not None
            and (watcher.last_failure.version, watcher.last_failure.reason)
            == (1, LoadFailureReason.ROLLBACK),
            f"the rollback to be refused ({watcher.last_outcome})",
        )
        assert watcher.version == version
        assert watcher.might_contain_many(keys).tolist() == answers
        (directory / "s3.python.seen").touch()
        _until(lambda: (directory / "done").exists(), "the Java side to finish")
