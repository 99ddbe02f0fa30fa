"""A canary the operator publishes (``spec.rollout.canary``), driven by the operator's
``io.bloomoperator.rollout.ForeignReaderCanaryTest``.

Two watchers, one as a pod inside the share and one as a pod outside it (``BLOOM_CANARY_PYTHON_IN``
and ``BLOOM_CANARY_PYTHON_OUT``: ``"<pod name> <pod uid>"`` of Pods Java made), each writing its
reader report. Step 1 is the stable v1 for both; step 2 the canary for the one inside
(``s2.canary.keys``) while the other stays on v1 (``s2.stable.keys``); step 3, after the canary was
aborted, the stable payload republished above it for both. Answers must be Java's; this side writes
``s<N>.python.seen``. Skipped without that environment.
"""

from __future__ import annotations

import os
import pathlib

import pytest

from bloomoperator_reader import SnapshotReader
from bloomoperator_reader.reports import ReaderReporter
from bloomoperator_reader.watch import FilterWatcher
from test_cluster import _assert_answers, _until
from test_store import _step

_ENV = (
    "KUBECONFIG", "BLOOM_CLUSTER_NAMESPACE", "BLOOM_CLUSTER_FILTER", "BLOOM_CLUSTER_DIR",
    "BLOOM_CANARY_PYTHON_IN", "BLOOM_CANARY_PYTHON_OUT",
)  # fmt: skip
_MISSING = [name for name in _ENV if not os.environ.get(name)]

pytestmark = pytest.mark.skipif(
    bool(_MISSING),
    reason="needs a real API server and the operator; run by the operator's "
    f"ForeignReaderCanaryTest (missing {', '.join(_MISSING)})",
)


def _watcher(api_client, variable: str) -> FilterWatcher:
    from kubernetes import client

    pod_name, _, pod_uid = os.environ[variable].partition(" ")
    assert pod_name and pod_uid, f"{variable} is not '<pod name> <pod uid>'"
    namespace, filter_name = os.environ["BLOOM_CLUSTER_NAMESPACE"], os.environ["BLOOM_CLUSTER_FILTER"]
    reporter = ReaderReporter(
        client.CoordinationV1Api(api_client), namespace, filter_name,
        pod_name=pod_name, pod_uid=pod_uid, heartbeat_seconds=1.0,
    )  # fmt: skip
    reader = SnapshotReader(namespace, filter_name, "String", pod_name=pod_name, before_first=False)
    return FilterWatcher(
        reader, client.CoreV1Api(api_client), resync_seconds=2.0, backoff_seconds=0.2,
        max_backoff_seconds=1.0, reporter=reporter,
    )  # fmt: skip


def test_the_share_serves_the_operators_canary_and_comes_back_when_it_is_withdrawn():
    from kubernetes import config

    directory = pathlib.Path(os.environ["BLOOM_CLUSTER_DIR"])
    api_client = config.new_client_from_config(os.environ["KUBECONFIG"])
    with _watcher(api_client, "BLOOM_CANARY_PYTHON_IN") as inside, _watcher(
        api_client, "BLOOM_CANARY_PYTHON_OUT"
    ) as outside:
        for step in (1, 2, 3):
            for watcher, role in ((inside, "canary"), (outside, "stable")):
                version, keys, answers = _step(directory, step, role)
                _until(
                    lambda w=watcher, v=version: w.version == v,
                    f"the {role} reader to serve v{version} ({watcher.last_outcome})",
                )
                _assert_answers(watcher, keys, answers)
                assert watcher.failures == 0 and watcher.refusals == 0, watcher.last_failure
            (directory / f"s{step}.python.seen").touch()
        # Stays until Java is done: the reports of both keep being renewed.
        _until(lambda: (directory / "done").exists(), "the Java side to finish")
