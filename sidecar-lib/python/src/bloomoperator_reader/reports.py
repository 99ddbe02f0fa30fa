"""Reader reports (docs/reader-protocol.md): which version of a filter this pod serves.

One ``coordination.k8s.io/v1`` Lease per pod and filter, owned by the pod, which the operator counts
into the filter's ``status.readers`` (the ``Serving`` column, rollout events, canary judgements).
:class:`ReaderReporter` writes it the way the Java reader does: at start, after each swap, when a
newer version starts failing or fails for another reason (never once per retry), and as a heartbeat
every interval times a random factor in [0.8, 1.2]. It is driven by :class:`FilterWatcher`'s thread
(one write at a time, never on the lookup path).

Reporting is optional. Refused by the API server (no RBAC rule for Leases: 401/403) it stops for
good and logs that once; other failures wait for the next heartbeat. Without ``POD_NAME`` and
``POD_UID`` (the downward API) nothing is reported: the operator counts a report only when its owner
is a live pod with that name and UID.
"""

from __future__ import annotations

import datetime
import logging
import os
import random
from collections.abc import Callable
from typing import Any

from . import names
from .errors import LoadFailureReason

_log = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_SECONDS = 60.0
"""The Java reader's heartbeat: 1,000 readers write about 17 times a second."""

MIN_STALE_AFTER_SECONDS = 1
MAX_STALE_AFTER_SECONDS = 3600

_NOT_FOUND = 404
_CONFLICT = 409
_REFUSED = (401, 403)


class ReaderReporter:
    """Writes one pod's report about one filter.

    :param coordination_v1_api: a ``kubernetes.client.CoordinationV1Api``
    :param namespace: the pod's namespace, which must be the filter's
    :param filter_name: the BloomFilter read
    :param pod_name: ``metadata.name`` of the pod (default: ``POD_NAME``)
    :param pod_uid: ``metadata.uid`` of the pod (default: ``POD_UID``)
    :param heartbeat_seconds: the heartbeat interval; the report counts as stale 3 heartbeats
        (1 s to 1 h) after the last
    """

    def __init__(
        self,
        coordination_v1_api: Any,
        namespace: str,
        filter_name: str,
        *,
        pod_name: str | None = None,
        pod_uid: str | None = None,
        heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
        request_timeout_seconds: float = 10.0,
        clock: Callable[[], datetime.datetime] | None = None,
        jitter: Callable[[], float] = random.random,
    ):
        if heartbeat_seconds <= 0:
            raise ValueError("heartbeat must be positive")
        self._api = coordination_v1_api
        self.namespace = namespace
        self.filter_name = filter_name
        self.pod_name = pod_name if pod_name is not None else os.environ.get("POD_NAME", "")
        self.pod_uid = pod_uid if pod_uid is not None else os.environ.get("POD_UID", "")
        self.heartbeat_seconds = heartbeat_seconds
        self._timeout = request_timeout_seconds
        self._clock = clock or (lambda: datetime.datetime.now(datetime.timezone.utc))
        self._jitter = jitter
        self.served = 0
        self.loaded_at: datetime.datetime | None = None
        self.failing_version = 0
        self.failing_reason: LoadFailureReason | None = None
        self._resource_version: str | None = None  # of the last write; None: create (or read)
        self.refused = False
        self.writes = 0
        if not self.pod_name or not self.pod_uid:
            self.refused = True
            _log.warning(
                "%s/%s: not reporting which version this pod serves: POD_NAME and POD_UID are not"
                " both set (downward API, docs/reader-protocol.md); the filter works as before",
                namespace, filter_name,
            )  # fmt: skip

    # -------------------------------------------------------------------------------- pacing

    def next_heartbeat_seconds(self) -> float:
        """0.8 to 1.2 times the interval: readers started together (a rollout) drift apart."""
        return self.heartbeat_seconds * (0.8 + 0.4 * self._jitter())

    @property
    def stale_after_seconds(self) -> int:
        """How long after its last heartbeat the operator counts this reader as silent."""
        three = int(3 * self.heartbeat_seconds)
        return min(max(three, MIN_STALE_AFTER_SECONDS), MAX_STALE_AFTER_SECONDS)

    def loaded(self, version: int) -> None:
        """Records a swap to ``version``; a failing version up to it is resolved. Then write."""
        self.served = version
        self.loaded_at = self._clock()
        if self.failing_version and self.failing_version <= version:
            self.failing_version, self.failing_reason = 0, None

    def failed(self, version: int | None, reason: LoadFailureReason | None) -> bool:
        """Records that ``version`` failed for ``reason``; True when that changes the report (a
        newer version than the one served, failing first or for another reason)."""
        if version is None or reason is None or version <= self.served or version <= 0:
            return False  # not a newer version (or the manifest unreadable): nothing to report
        if version == self.failing_version and reason is self.failing_reason:
            return False  # a retry failing the same way: no write per retry
        self.failing_version, self.failing_reason = version, reason
        return True

    # -------------------------------------------------------------------------------- writing

    def lease(self) -> dict[str, Any]:
        """The report as the operator reads it (``ReaderReports.toLease`` in Java)."""
        annotations = {names.ANNOTATION_FILTER: self.filter_name}
        if self.served:
            annotations[names.ANNOTATION_SERVED] = str(self.served)
        if self.failing_version:
            annotations[names.ANNOTATION_FAILING_VERSION] = str(self.failing_version)
            annotations[names.ANNOTATION_FAILING_REASON] = self.failing_reason.value
        spec: dict[str, Any] = {
            "holderIdentity": self.pod_name,
            "leaseDurationSeconds": self.stale_after_seconds,
            "renewTime": _micro_time(self._clock()),
        }
        if self.loaded_at is not None:
            spec["acquireTime"] = _micro_time(self.loaded_at)
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": names.reader_report_name(self.filter_name, self.pod_uid),
                "namespace": self.namespace,
                "labels": {
                    names.LABEL_ROLE: names.ROLE_READER_REPORT,
                    names.LABEL_FILTER: names.filter_label_value(self.filter_name),
                },
                "annotations": annotations,
                # No controller, no blockOwnerDeletion: the Lease goes with the pod, nothing more.
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Pod", "name": self.pod_name, "uid": self.pod_uid}
                ],
            },
            "spec": spec,
        }

    def write(self) -> None:
        """Update with the last resourceVersion; on 404 create, on 409 read and update once;
        401/403 stop reporting for good (said once); other errors wait for the next heartbeat."""
        if self.refused:
            return
        from kubernetes.client.exceptions import ApiException

        body = self.lease()
        name = body["metadata"]["name"]
        try:
            if self._resource_version is None:
                written = self._create_or_read(body)
            else:
                body["metadata"]["resourceVersion"] = self._resource_version
                try:
                    written = self._api.replace_namespaced_lease(
                        name, self.namespace, body, _request_timeout=self._timeout
                    )
                except ApiException as e:
                    if e.status not in (_CONFLICT, _NOT_FOUND):
                        raise
                    # Changed or deleted by someone else: start over.
                    del body["metadata"]["resourceVersion"]
                    written = self._create_or_read(body)
            self._resource_version = written.metadata.resource_version if written else None
            self.writes += 1
        except ApiException as e:
            self._resource_version = None
            if e.status in _REFUSED:
                self.refused = True
                _log.warning(
                    "%s/%s: not reporting which version this pod serves: the API server refused to"
                    " write Lease %s (%s); the filter works as before. To report, grant the optional"
                    " rule in docs/reader-protocol.md (leases: get, create, update).",
                    self.namespace, self.filter_name, name, e.status,
                )  # fmt: skip
                return
            _log.debug("%s/%s: reader report not written, retrying: %s", self.namespace,
                       self.filter_name, e.status)  # fmt: skip
        except Exception as e:  # noqa: BLE001 - a connection failure: the next heartbeat retries
            self._resource_version = None
            _log.debug("%s/%s: reader report not written, retrying: %s", self.namespace,
                       self.filter_name, type(e).__name__)  # fmt: skip

    def _create_or_read(self, body: dict[str, Any]) -> Any:
        """Creates the report, or if it exists (a restart of the same pod), overwrites it."""
        from kubernetes.client.exceptions import ApiException

        try:
            return self._api.create_namespaced_lease(
                self.namespace, body, _request_timeout=self._timeout
            )
        except ApiException as e:
            if e.status != _CONFLICT:
                raise
        name = body["metadata"]["name"]
        try:
            existing = self._api.read_namespaced_lease(
                name, self.namespace, _request_timeout=self._timeout
            )
        except ApiException as e:
            if e.status == _NOT_FOUND:
                return None  # deleted in between: created at the next write
            raise
        body["metadata"]["resourceVersion"] = existing.metadata.resource_version
        return self._api.replace_namespaced_lease(
            name, self.namespace, body, _request_timeout=self._timeout
        )


def _micro_time(moment: datetime.datetime) -> str:
    # MicroTime: the API server keeps microseconds, in UTC with a 'Z'.
    utc = moment.astimezone(datetime.timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
