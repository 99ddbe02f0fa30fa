"""The watcher against a real kube-apiserver, driven by the Java test that publishes the snapshots
(``io.bloomoperator.watch.PythonReaderClusterTest`` in sidecar-lib).

The Java side sets ``KUBECONFIG``, ``BLOOM_CLUSTER_NAMESPACE``, ``BLOOM_CLUSTER_FILTER`` and
``BLOOM_CLUSTER_DIR``, a directory the two sides meet in: Java writes ``v<N>.keys`` (one key and
Java's answer per line) and ``v<N>.published``; this side writes ``v<N>.seen`` once it has checked
a version, which lets Java publish the next one, and keeps running (its reader report renewed every
second) until Java, having read the report with the operator's parser after each step, writes
``done``. ``POD_NAME`` and ``POD_UID`` name the Pod Java made for the report. Without that environment the test is skipped, so
``test.sh`` stays offline.
"""

from __future__ import annotations

import logging
import os
import pathlib
import time

import pytest

from bloomoperator_reader import LoadFailureReason, SnapshotReader
from bloomoperator_reader.reports import ReaderReporter
from bloomoperator_reader.watch import FilterWatcher

_ENV = (
    "KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER", "BLOOM_CLUSTER_DIR",
    "POD_NAME", "POD_UID", "BLOOM_CLUSTER_KUBECONFIG_NO_LEASES",
)  # fmt: skip
_MISSING = [name for name in _ENV if not os.environ.get(name)]

pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason="needs a real API server; run by sidecar-lib's PythonReaderClusterTest "
    f"(missing {', '.join(_MISSING)})",
)

WAIT = 60.0


def _until(condition, what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


def _expected(directory: pathlib.Path, version: int) -> tuple[list[str], list[bool]]:
    path = directory / f"v{version}.keys"
    _until(lambda: (directory / f"v{version}.published").exists(), f"v{version} to be published")
    keys, answers = [], []
    for line in path.read_text("utf-8").splitlines():
        key, answer = line.rsplit("\t", 1)
        keys.append(key)
        answers.append(answer == "1")
    return keys, answers


def _assert_answers(watcher: FilterWatcher, keys: list[str], answers: list[bool]) -> None:
    single = [watcher.might_contain(k) for k in keys]
    assert single == answers, "one-key answers differ from Java's"
    assert watcher.might_contain_many(keys).tolist() == answers, "batch answers differ from Java's"
    # The key sets hold present and absent keys: a filter answering all True would not pass.
    assert any(answers) and not all(answers)


def _without_lease_rights() -> FilterWatcher:
    """The same filter followed as the account of BLOOM_CLUSTER_KUBECONFIG_NO_LEASES (ConfigMap
    rights only), reporting as a pod of its own."""
    from kubernetes import client, config

    api_client = config.new_client_from_config(os.environ["BLOOM_CLUSTER_KUBECONFIG_NO_LEASES"])
    namespace, filter_name = os.environ["BLOOM_CLUSTER_NAMESPACE"], os.environ["BLOOM_CLUSTER_FILTER"]
    reporter = ReaderReporter(
        client.CoordinationV1Api(api_client), namespace, filter_name,
        pod_name="app-1", pod_uid="00000000-0000-4000-8000-000000000001", heartbeat_seconds=1.0,
    )  # fmt: skip
    return FilterWatcher(
        SnapshotReader(namespace, filter_name, "String", before_first=False),
        client.CoreV1Api(api_client), resync_seconds=2.0, backoff_seconds=0.2,
        max_backoff_seconds=1.0, reporter=reporter, start=False,
    )  # fmt: skip


def test_follows_base_delta_refuses_tampered_chunk_and_reports(caplog):
    from kubernetes import client, config

    caplog.set_level(logging.WARNING, logger="bloomoperator_reader")
    # A second reader whose account lacks the optional Lease rule: it must serve the same and
    # say once, not at every heartbeat, that it does not report.
    unreported = _without_lease_rights().start()

    directory = pathlib.Path(os.environ["BLOOM_CLUSTER_DIR"])
    api_client = config.new_client_from_config(os.environ["KUBECONFIG"])
    api = client.CoreV1Api(api_client)
    reporter = ReaderReporter(
        client.CoordinationV1Api(api_client),
        os.environ["BLOOM_CLUSTER_NAMESPACE"],
        os.environ["BLOOM_CLUSTER_FILTER"],
        heartbeat_seconds=1.0,  # POD_NAME and POD_UID from the environment
    )
    reader = SnapshotReader(
        os.environ["BLOOM_CLUSTER_NAMESPACE"],
        os.environ["BLOOM_CLUSTER_FILTER"],
        "String",
        before_first=False,  # fail closed: an answer before the first load would be a guess
    )
    calls: list[str] = []
    watcher = FilterWatcher(
        reader, api, resync_seconds=2.0, backoff_seconds=0.2, max_backoff_seconds=1.0,
        reporter=reporter, start=False,
    )  # fmt: skip
    getter = watcher.configmaps

    def counting(namespace: str, name: str):
        calls.append(name)
        return getter(namespace, name)

    watcher.configmaps = counting  # type: ignore[assignment]
    assert watcher.might_contain("anything") is False and not watcher.ready
    with watcher.start():
        keys, answers = _expected(directory, 1)
        assert watcher.wait_ready(WAIT), f"no load; last outcome {watcher.last_outcome}"
        assert watcher.version == 1
        _assert_answers(watcher, keys, answers)
        _until(lambda: unreported.version == 1, "the reader without Lease rights to load v1")
        _assert_answers(unreported, keys, answers)
        (directory / "v1.seen").touch()

        # v2: a delta on v1, loaded onto a copy of v1's bits.
        keys, answers = _expected(directory, 2)
        _until(lambda: watcher.version == 2, f"v2 (now v{watcher.version}, {watcher.last_outcome})")
        _assert_answers(watcher, keys, answers)
        # Fetched as a delta (its chunks are GETs of "-v2-d<i>"), never as a list or a base.
        assert [n for n in calls if "-v2-" in n] and all("-v2-d" in n for n in calls if "-v2-" in n)
        (directory / "v2.seen").touch()

        # v3: a chunk changed after its digest went into the manifest. Refused, retried, and
        # v2 keeps answering meanwhile.
        _expected(directory, 3)
        _until(
            lambda: watcher.last_failure is not None and watcher.last_failure.version == 3
            and watcher.failures >= 2,
            f"v3 to be refused twice ({watcher.last_outcome})",
        )
        assert watcher.last_failure.reason in (
            LoadFailureReason.VERIFICATION, LoadFailureReason.CHUNK,
        ), watcher.last_failure  # fmt: skip
        assert "sha" in str(watcher.last_failure.error).lower(), watcher.last_failure.error
        assert watcher.version == 2
        _assert_answers(watcher, keys, answers)
        assert watcher.loads == 2
        assert reporter.failing_version == 3 and not reporter.refused
        # Several 1 s heartbeats have passed since it started: still one line.
        said = [r.getMessage() for r in caplog.records if "not reporting which version" in r.getMessage()]
        assert len(said) == 1 and "(403)" in said[0], said
        assert unreported.reporter.refused
        (directory / "v3.seen").touch()
        # Heartbeats go on meanwhile; the Java side reads them before it says done.
        _until(lambda: (directory / "done").exists(), "the Java side to finish")
    unreported.close()
    assert not watcher._thread.is_alive()
