"""The reader report's pacing and shape (docs/reader-protocol.md), without a server: a write per
newer failing version or reason, never per retry; heartbeats 0.8..1.2 × the interval; stale after 3
heartbeats within 1 s..1 h. On a real API server: tests/test_cluster.py."""

import datetime

import pytest

from bloomoperator_reader import LoadFailureReason, names
from bloomoperator_reader.reports import ReaderReporter

T0 = datetime.datetime(2026, 12, 3, 9, 0, 0, 123456, tzinfo=datetime.timezone.utc)


def _reporter(**kwargs) -> ReaderReporter:
    return ReaderReporter(
        None, "shop", "ids", pod_name="app-0", pod_uid="u-1", clock=lambda: T0, **kwargs
    )


@pytest.mark.parametrize(
    ("heartbeat", "stale"), [(60.0, 180), (0.1, 1), (1.0, 3), (7200.0, 3600)]
)
def test_stale_after_is_three_heartbeats_within_bounds(heartbeat, stale):
    assert _reporter(heartbeat_seconds=heartbeat).stale_after_seconds == stale


@pytest.mark.parametrize("jitter", [0.0, 0.5, 0.999999])
def test_heartbeats_are_spread(jitter):
    delay = _reporter(jitter=lambda: jitter).next_heartbeat_seconds()
    assert 48.0 <= delay <= 72.0


def test_failures_are_written_once_per_version_and_reason():
    r = _reporter()
    assert not r.failed(None, LoadFailureReason.VERIFICATION)  # an unreadable manifest
    assert not r.failed(0, LoadFailureReason.VERIFICATION)
    assert r.failed(3, LoadFailureReason.VERIFICATION)
    assert not r.failed(3, LoadFailureReason.VERIFICATION)  # a retry failing the same way
    assert r.failed(3, LoadFailureReason.CHUNK) and r.failed(4, LoadFailureReason.CHUNK)
    r.loaded(2)
    assert r.failing_version == 4  # an older swap does not resolve a newer failure
    assert not r.failed(2, LoadFailureReason.ROLLBACK) and not r.failed(1, LoadFailureReason.ROLLBACK)
    r.loaded(4)
    assert r.failing_version == 0 and r.failing_reason is None


def test_lease_is_the_one_the_operator_reads():
    r = _reporter()
    before = r.lease()
    assert names.ANNOTATION_SERVED not in before["metadata"]["annotations"]
    assert "acquireTime" not in before["spec"]
    r.loaded(7)
    r.failed(9, LoadFailureReason.TOO_LARGE)
    lease = r.lease()
    assert lease["metadata"]["name"] == names.reader_report_name("ids", "u-1")
    assert lease["metadata"]["labels"] == {
        "bloomoperator.io/role": "reader-report", "bloomoperator.io/filter": "ids",
    }  # fmt: skip
    assert lease["metadata"]["annotations"] == {
        "bloomoperator.io/filter": "ids",
        "bloomoperator.io/served-version": "7",
        "bloomoperator.io/failing-version": "9",
        "bloomoperator.io/failing-reason": "TOO_LARGE",
    }
    assert lease["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Pod", "name": "app-0", "uid": "u-1"}
    ]
    assert lease["spec"] == {
        "holderIdentity": "app-0",
        "leaseDurationSeconds": 180,
        "renewTime": "2026-12-03T09:00:00.123456Z",
        "acquireTime": "2026-12-03T09:00:00.123456Z",
    }


def test_without_a_pod_identity_nothing_is_written(caplog):
    r = ReaderReporter(None, "shop", "ids", pod_name="", pod_uid="")
    assert r.refused
    r.write()  # no API object: would raise if it tried
    assert "POD_NAME" in caplog.text
