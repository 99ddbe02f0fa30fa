"""Following a filter in a cluster with the official ``kubernetes`` client.

:class:`KubernetesConfigMaps` is a :class:`ConfigMapGetter` that GETs one ConfigMap by name per
call (a chunk is never found by listing: a list of chunks would cost the API server a scan and the
reader memory for every version at once). :class:`FilterWatcher` is one thread that watches only
the manifest ConfigMap ``<filter>-bloom`` (``fieldSelector=metadata.name=...``), hands every event
to the core (:meth:`SnapshotReader.on_manifest`), polls the manifest every ``resync_seconds``,
resumes a broken watch after the last event it processed (as client-go does), lists again
only when the API server answers that the resourceVersion is gone (410: counted in
:attr:`FilterWatcher.watch_expirations` and logged as "relist after 410"), and retries failed loads
with exponential backoff. The swap itself is the core's: lookups on any thread see either the old or the
new snapshot, never a mix. Given a :class:`~bloomoperator_reader.reports.ReaderReporter`, the same
thread writes the pod's reader report (docs/reader-protocol.md) at start, after each swap, when a
newer version starts failing, and as a heartbeat.

Metrics: :class:`~bloomoperator_reader.metrics.ReaderCollector` takes the watcher (or its reader).
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from .configmaps import ConfigMap
from .reader import Action, Outcome, SnapshotReader
from .reports import ReaderReporter

_log = logging.getLogger(__name__)

_GONE = 410
_NOT_FOUND = 404


class KubernetesConfigMaps:
    """A :class:`ConfigMapGetter` over a ``kubernetes.client.CoreV1Api``: one GET per name.

    ConfigMaps come back in the API server's JSON shape (``binaryData`` as Base64 text), read
    from the raw response so the client's model classes never copy a chunk. Safe to call from
    several threads at once (the reader fetches ``fetch_parallelism`` chunks at once): each call
    is one request on the client's connection pool.
    """

    def __init__(self, core_v1_api: Any, request_timeout_seconds: float = 30.0):
        self._api = core_v1_api
        self._timeout = request_timeout_seconds

    def __call__(self, namespace: str, name: str) -> ConfigMap | None:
        from kubernetes.client.exceptions import ApiException

        try:
            response = self._api.read_namespaced_config_map(
                name, namespace, _preload_content=False, _request_timeout=self._timeout
            )
        except ApiException as e:
            if e.status == _NOT_FOUND:
                return None
            raise
        try:
            status = getattr(response, "status", 200)
            if status == _NOT_FOUND:
                return None
            body = response.data
            if not 200 <= status <= 299:
                raise RuntimeError(f"GET configmap {namespace}/{name}: HTTP {status}: {body[:200]!r}")
            return json.loads(body)
        finally:
            _close(response)


class _WatchGone(Exception):
    """The watch's resourceVersion is too old (410 Gone): list again."""


class FilterWatcher:
    """Follows one filter's manifest ConfigMap on a daemon thread and serves what it loads.

    :param reader: the core, configured with the namespace, filter, key type, trusted keys,
        limits and ``before_first`` (what lookups answer before the first load: ``True`` fail
        open, ``False`` fail closed, None raise :class:`NotReadyError`)
    :param core_v1_api: a ``kubernetes.client.CoreV1Api``; None: one from the default kubeconfig
        (``KUBECONFIG`` or ``~/.kube/config``), else the in-cluster service account
    :param resync_seconds: the manifest is also read (GET) this often, whatever the watch says
    :param backoff_seconds: the first retry delay of a failed load or a failed API call,
        doubled up to ``max_backoff_seconds``
    :param reporter: writes this pod's reader report (docs/reader-protocol.md); None: none
    :param start: start the thread now (else call :meth:`start`)
    """

    def __init__(
        self,
        reader: SnapshotReader,
        core_v1_api: Any = None,
        *,
        resync_seconds: float = 60.0,
        backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 60.0,
        request_timeout_seconds: float = 30.0,
        reporter: ReaderReporter | None = None,
        start: bool = True,
    ):
        if resync_seconds <= 0 or backoff_seconds <= 0 or max_backoff_seconds < backoff_seconds:
            raise ValueError("resync and backoff must be positive, and max backoff >= backoff")
        self.reader = reader
        self._api = core_v1_api if core_v1_api is not None else _default_api()
        self.configmaps = KubernetesConfigMaps(self._api, request_timeout_seconds)
        self._resync = resync_seconds
        self._backoff_initial = backoff_seconds
        self._backoff_max = max_backoff_seconds
        self._request_timeout = request_timeout_seconds
        self._backoff = backoff_seconds
        self._retry_at: float | None = None
        self._resync_at = 0.0
        self.reporter = reporter
        self._heartbeat_at: float | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._response: Any = None
        self._lock = threading.Lock()
        self.loads = 0
        self.failures = 0
        self.refusals = 0
        self.relists = 0
        self.watch_expirations = 0
        self.resource_version: str | None = None
        """The resourceVersion the watch resumes from: the last event processed (or the list's);
        None until the first list and after a 410 Gone."""
        self.last_outcome: Outcome | None = None
        self.last_failure: Outcome | None = None
        self._thread = threading.Thread(
            target=self._run, name=f"bloom-watch-{reader.acceptance.filter_name}", daemon=True
        )
        if start:
            self.start()

    # ------------------------------------------------------------------------------ serving

    def start(self) -> FilterWatcher:
        self._thread.start()
        return self

    @property
    def ready(self) -> bool:
        """Whether a snapshot has been loaded (and is served)."""
        return self._ready.is_set()

    def wait_ready(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    @property
    def version(self) -> int | None:
        """The version served now, or None before the first load."""
        served = self.reader.served
        return served.version if served is not None else None

    def might_contain(self, key: str | int) -> bool:
        return self.reader.might_contain(key)

    def might_contain_many(self, keys: Iterable[str] | Iterable[int] | np.ndarray) -> np.ndarray:
        return self.reader.might_contain_many(keys)

    def close(self, timeout: float | None = 10.0) -> None:
        """Stops the thread: the watch connection is closed so that it does not wait for its
        timeout. The last snapshot keeps being served."""
        self._stop.set()
        with self._lock:
            response = self._response
        if response is not None:
            # The watch thread is blocked reading the response, holding its buffer's lock, which
            # a plain close would wait for (until the server sends something or the watch times
            # out): shut the socket down for reading first, which wakes the read up.
            with contextlib.suppress(Exception):
                response.shutdown()
            _close(response)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def __enter__(self) -> FilterWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------- following

    def _run(self) -> None:
        if self.reporter is not None:
            self.reporter.write()  # counted from its start, before it serves anything
            self._schedule_heartbeat()
        while not self._stop.is_set():
            try:
                if self.resource_version is None:
                    self.resource_version = self._list()
                self._watch()
                self._heartbeat_if_due()
                if self._due():
                    self._act(self.reader.refresh(self.configmaps))
            except _WatchGone:
                self.watch_expirations += 1
                _log.info(
                    "watch of %s expired (410 Gone) at resourceVersion %s: relist after 410",
                    self._name(), self.resource_version,
                )  # fmt: skip
                self.resource_version = None
            except Exception as e:  # noqa: BLE001 - an API outage: wait, then resume
                if self._stop.is_set():
                    break
                # The watch resumes from the last event it processed, as client-go's reflector
                # does, so nothing already acted on is replayed (a list of a moment ago would
                # cost the same as resuming only when that version is gone, which the API
                # server answers with 410); a failed list is listed again.
                _log.warning("watch of %s failed, resuming: %s", self._name(), e)
                self._stop.wait(self._next_backoff())

    def _list(self) -> str:
        """Lists the manifest alone and acts on it; returns the list's resourceVersion."""
        self.relists += 1
        response = self._api.list_namespaced_config_map(
            self.reader.acceptance.namespace,
            field_selector=f"metadata.name={self.reader.manifest_name}",
            _preload_content=False,
            _request_timeout=self._request_timeout,
        )
        try:
            listed = json.loads(response.data)
        finally:
            _close(response)
        items = listed.get("items") or []
        self._act(self.reader.on_manifest(items[0] if items else None, self.configmaps))
        return listed["metadata"]["resourceVersion"]

    def _watch(self) -> None:
        """Watches from :attr:`resource_version` until the next resync or retry is due.

        :attr:`resource_version` follows every event once it is processed (bookmarks included),
        so a watch that breaks off mid-stream is resumed after the last event acted on, never
        from where it started: events it replayed would hand older manifests to the reader again.
        """
        resource_version = self.resource_version
        from kubernetes.watch.watch import iter_resp_lines

        from kubernetes.client.exceptions import ApiException

        seconds = max(1, int(self._seconds_until_due() + 0.999))
        try:
            response = self._api.list_namespaced_config_map(
                self.reader.acceptance.namespace,
                field_selector=f"metadata.name={self.reader.manifest_name}",
                watch=True,
                allow_watch_bookmarks=True,
                resource_version=resource_version,
                timeout_seconds=seconds,
                _preload_content=False,
                _request_timeout=(self._request_timeout, seconds + self._request_timeout),
            )
        except ApiException as e:
            # Usually an ERROR event on an open stream (below), sometimes the response's status.
            if e.status == _GONE:
                raise _WatchGone() from None
            raise
        with self._lock:
            self._response = response
        try:
            if self._stop.is_set():
                return
            for line in iter_resp_lines(response):
                if not line:
                    continue
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == _GONE:
                        raise _WatchGone()
                    raise RuntimeError(f"watch error: {obj.get('reason')}: {obj.get('message')}")
                if kind in ("ADDED", "MODIFIED"):
                    self._act(self.reader.on_manifest(obj, self.configmaps))
                elif kind == "DELETED":
                    self._act(self.reader.on_manifest(None, self.configmaps))
                version = (obj.get("metadata") or {}).get("resourceVersion")
                if isinstance(version, str) and version:
                    self.resource_version = version  # processed: never replayed
                if self._stop.is_set() or self._due() or self._heartbeat_due():
                    break
        except Exception:
            if self._stop.is_set():
                return
            raise
        finally:
            with self._lock:
                self._response = None
            _close(response)

    def _act(self, outcome: Outcome) -> None:
        """Counts an outcome, schedules what comes next (a resync, or a retry) and reports it."""
        self._count(outcome)
        reporter = self.reporter
        if reporter is None:
            return
        changed = False
        if outcome.action is Action.LOAD and outcome.version is not None:
            reporter.loaded(outcome.version)
            changed = True
        elif outcome.action is Action.REFUSE:
            changed = reporter.failed(outcome.version, outcome.reason)
        if outcome.canary_failure is not None:
            changed = reporter.failed(*outcome.canary_failure) or changed
        if changed:
            reporter.write()

    def _count(self, outcome: Outcome) -> None:
        now = time.monotonic()
        self.last_outcome = outcome
        self._resync_at = now + self._resync
        if outcome.action is Action.REFUSE:
            self.last_failure = outcome
            if outcome.retry:
                self.failures += 1
                self._retry_at = now + self._next_backoff()
            else:
                # Refused before any fetch: the same manifest will be refused again, so only
                # a new one (an event) or the periodic resync looks again.
                self.refusals += 1
                self._retry_at = None
            _log.warning(
                "%s v%s not loaded (%s): %s",
                self._name(), outcome.version, outcome.reason, outcome.error,
            )  # fmt: skip
            return
        self._backoff = self._backoff_initial
        self._retry_at = None
        if outcome.action is Action.LOAD:
            self.loads += 1
            self._ready.set()
            _log.info("%s v%s loaded", self._name(), outcome.version)

    def _next_backoff(self) -> float:
        delay = self._backoff
        self._backoff = min(self._backoff * 2, self._backoff_max)
        return delay

    def _refresh_at(self) -> float:
        return self._resync_at if self._retry_at is None else min(self._resync_at, self._retry_at)

    def _seconds_until_due(self) -> float:
        """Until the next resync, retry or heartbeat: how long the watch may wait."""
        due = self._refresh_at()
        if self._heartbeat_at is not None:
            due = min(due, self._heartbeat_at)
        return max(0.0, due - time.monotonic())

    def _heartbeat_due(self) -> bool:
        return self._heartbeat_at is not None and self._heartbeat_at <= time.monotonic()

    def _heartbeat_if_due(self) -> None:
        if self.reporter is not None and self._heartbeat_due():
            self.reporter.write()
            self._schedule_heartbeat()

    def _schedule_heartbeat(self) -> None:
        # A reporter that stopped for good (no identity, no RBAC) needs no heartbeat, and the
        # watch then need not wake up for one.
        reporter = self.reporter
        if reporter is None or reporter.refused:
            self._heartbeat_at = None
        else:
            self._heartbeat_at = time.monotonic() + reporter.next_heartbeat_seconds()

    def _due(self) -> bool:
        """Whether a resync or a retry is due (heartbeats write a report, never read)."""
        return self._refresh_at() <= time.monotonic()

    def _name(self) -> str:
        return f"{self.reader.acceptance.namespace}/{self.reader.acceptance.filter_name}"


def _default_api() -> Any:
    from kubernetes import client, config

    try:
        config.load_kube_config()
    except Exception:  # noqa: BLE001 - no kubeconfig: the pod's service account
        config.load_incluster_config()
    return client.CoreV1Api()


def _close(response: Any) -> None:
    for method in ("close", "release_conn"):
        try:
            getattr(response, method)()
        except Exception:  # noqa: BLE001 - closing a response already closed or reset
            pass
