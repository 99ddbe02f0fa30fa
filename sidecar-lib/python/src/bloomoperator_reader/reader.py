"""The reader: judges each announced manifest, loads what it accepts, serves one filter.

:class:`Acceptance` is the whole acceptance rule, pure and in Java's order; :class:`SnapshotReader`
carries out its verdicts for one filter, fetching chunks through a :class:`ConfigMapGetter`, and
swaps the served snapshot with one reference assignment of an immutable object. It does no I/O
of its own and keeps no thread: a watch (or a poll loop, or a test) calls :meth:`on_manifest` or
:meth:`refresh` whenever the manifest ConfigMap may have changed, from one thread at a time;
lookups may come from any number of threads meanwhile.
"""

from __future__ import annotations

import dataclasses
import enum
import time
from collections.abc import Callable, Iterable, Mapping

import numpy as np

from . import decoder, names
from .bits import BloomFilter
from .configmaps import (
    Announced,
    ConfigMap,
    ConfigMapGetter,
    chunk_source,
    read_canary,
    read_manifest,
)
from .errors import LoadFailureReason, RefusedError, SnapshotError, VerificationError
from .fetch import DEFAULT_FETCH_PARALLELISM, fetch_parallelism as checked_parallelism
from .limits import SnapshotLimits
from .manifest import KeyType, Manifest
from .signature import TrustedKeys
from .store import ObjectStore, stores_by_name, store_chunk_source


class Verdict(enum.Enum):
    LOAD = "load"
    SAME = "same"


@dataclasses.dataclass(frozen=True)
class Acceptance:
    """The reader's one rule for an announced manifest, judged before anything is fetched.

    In order: a trusted signature (when keys are trusted); the filter name, size limits and
    canonical chunk names; an object store the reader knows (when the chunks are in one); then
    the snapshot already served is ``SAME``; a manifest older than ``max_manifest_age`` is
    refused (``TOO_OLD``); with trusted keys, one not published after the served one is refused
    (``ROLLBACK``: a re-created filter's version 1 was created later, so it loads); last, another
    key type is refused (``VERIFICATION``: Long keys against String hashes give plausible wrong
    answers). Without trusted keys a lower version loads: it is the operator's current truth.
    """

    namespace: str
    filter_name: str
    key_type: KeyType
    limits: SnapshotLimits = SnapshotLimits()
    trusted_keys: TrustedKeys = dataclasses.field(default_factory=TrustedKeys)
    max_manifest_age_seconds: float | None = None
    stores: frozenset[str] = frozenset()

    def judge(self, announced: Announced, served: Announced | None, now_ns: int) -> Verdict:
        """``LOAD`` or ``SAME``.

        :raises VerificationError: the manifest is refused (a :class:`RefusedError` with its
            reason, or a plain ``VERIFICATION`` error for another key type)
        """
        manifest = announced.manifest
        self.trusted_keys.verify(self.namespace, announced.json, announced.signature)
        self.limits.check(manifest, self.filter_name)
        if manifest.store is not None and manifest.store not in self.stores:
            # Only a name is in the manifest: where a store is and how to reach it is the
            # reader's own configuration.
            raise RefusedError(
                LoadFailureReason.UNKNOWN_STORE,
                f"{self._what(manifest)} keeps its chunks in object store '{manifest.store}', "
                "which this reader is not configured for "
                + (f"(it knows {sorted(self.stores)})" if self.stores else "(it has no object store)"),
            )
        if announced.same_snapshot(served):
            return Verdict.SAME
        if self.max_manifest_age_seconds is not None:
            seconds, nanos = manifest.created
            oldest = now_ns - int(self.max_manifest_age_seconds * 1_000_000_000)
            if seconds * 1_000_000_000 + nanos < oldest:
                raise RefusedError(
                    LoadFailureReason.TOO_OLD,
                    f"signed {self._what(manifest)} was created at {manifest.created_at}, more "
                    f"than {self.max_manifest_age_seconds} s ago; refused as too old",
                )
        if served is not None and self.trusted_keys and not manifest.published_after(
            served.manifest
        ):
            raise RefusedError(
                LoadFailureReason.ROLLBACK,
                f"signed {self._what(manifest)} created {manifest.created_at} is not published "
                f"after the served v{served.version} created {served.manifest.created_at}; "
                "refused as a rollback",
            )
        if manifest.key_type is not self.key_type:
            raise VerificationError(
                f"snapshot v{manifest.version} of '{manifest.filter_name}' holds "
                f"{manifest.key_type.value} keys but this reader serves {self.key_type.value} keys"
            )
        return Verdict.LOAD

    def _what(self, manifest: Manifest) -> str:
        return f"manifest of {self.namespace}/{self.filter_name} v{manifest.version}"


@dataclasses.dataclass(frozen=True)
class ServedSnapshot:
    """A verified filter and the announcement it was loaded from. Immutable."""

    announced: Announced
    filter: BloomFilter

    @property
    def manifest(self) -> Manifest:
        return self.announced.manifest

    @property
    def version(self) -> int:
        return self.announced.version

    @property
    def sha256(self) -> str:
        return self.announced.manifest.sha256


class Action(enum.Enum):
    LOAD = "load"
    """A new snapshot is served."""
    KEEP = "keep"
    """Nothing changed: the served snapshot was announced again, or the manifest is gone."""
    REFUSE = "refuse"
    """Not loaded; :attr:`Outcome.reason` says why, and the served snapshot stays."""


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one look at the manifest ConfigMap did.

    :param version: the version announced (of the canary, when this reader followed it), or None
        when no manifest could be read
    :param retry: a failed load worth trying again with backoff (a refusal is not retried until
        the manifest changes)
    :param canary_failure: a canary this reader is in the share of but did not accept: its
        version and why (the reader followed the stable manifest instead)
    """

    action: Action
    version: int | None = None
    reason: LoadFailureReason | None = None
    error: Exception | None = None
    retry: bool = False
    canary: bool = False
    canary_failure: tuple[int, LoadFailureReason] | None = None


def reason_of(error: BaseException) -> LoadFailureReason:
    """The reason reported for a failed load (``LoadFailureReason.of`` in Java)."""
    if isinstance(error, SnapshotError):
        return error.reason
    if isinstance(error, MemoryError):
        return LoadFailureReason.HEAP
    return LoadFailureReason.API


class NotReadyError(RuntimeError):
    """No snapshot has been loaded yet (see ``before_first``)."""


class SnapshotReader:
    """Follows one filter's manifest ConfigMap and serves the snapshot it last accepted.

    :param trusted_keys: Ed25519 public keys (PEM SubjectPublicKeyInfo text or key objects);
        none: signatures are ignored and any version loads
    :param pod_name: this reader's pod name, which decides its canary share; None: never in one
    :param max_manifest_age_seconds: refuse signed manifests created longer ago (``TOO_OLD``)
    :param before_first: what lookups answer before the first load: ``True`` (maybe present,
        Java's default ``FAIL_OPEN``), ``False`` (``FAIL_CLOSED``) or None to raise
        :class:`NotReadyError`
    :param clock: nanoseconds since the epoch, for the maximum age
    :param object_stores: the object stores this reader reads chunks from, by the name a
        manifest's ``store`` gives (e.g. ``{"primary": S3ObjectStore(...)}``); a manifest naming
        another store is refused (``UNKNOWN_STORE``) before anything is fetched
    :param fetch_parallelism: chunks fetched at once, 1..16 (default 4; 1 fetches one at a time):
        each is checked (size, SHA-256) as it arrives and used in order, at most this many are
        held at once, and the first failure cancels the fetches not started yet. The getter (or
        object store) is called from this many threads at once and must be safe for that.
    :raises ValueError: a maximum age without a trusted key, or ``fetch_parallelism`` not 1..16
    """

    def __init__(
        self,
        namespace: str,
        filter_name: str,
        key_type: KeyType | str,
        *,
        trusted_keys: Iterable[object] = (),
        limits: SnapshotLimits | None = None,
        pod_name: str | None = None,
        max_manifest_age_seconds: float | None = None,
        before_first: bool | None = True,
        clock: Callable[[], int] = time.time_ns,
        object_stores: Mapping[str, ObjectStore] | None = None,
        fetch_parallelism: int = DEFAULT_FETCH_PARALLELISM,
    ):
        self.fetch_parallelism = checked_parallelism(fetch_parallelism)
        keys = TrustedKeys(trusted_keys)  # type: ignore[arg-type]
        self._stores = stores_by_name(object_stores)
        if max_manifest_age_seconds is not None and not keys:
            raise ValueError("a maximum manifest age needs a trusted key")
        self.acceptance = Acceptance(
            namespace=namespace,
            filter_name=filter_name,
            key_type=KeyType(key_type) if isinstance(key_type, str) else key_type,
            limits=limits or SnapshotLimits(),
            trusted_keys=keys,
            max_manifest_age_seconds=max_manifest_age_seconds,
            stores=frozenset(self._stores),
        )
        self.pod_name = pod_name or None
        self._before_first = before_first
        self._clock = clock
        self._served: ServedSnapshot | None = None
        self._refused_canary: Announced | None = None
        # The counters behind the metrics (module metrics), under the Java reader's meanings.
        # Lookups are counted without a lock: under many threads at once an increment can be
        # lost (a thread switch between read and write), never invented.
        self.lookups = 0
        self.maybe_present = 0
        self.swaps = 0
        self.load_failures: dict[LoadFailureReason, int] = dict.fromkeys(LoadFailureReason, 0)

    # ------------------------------------------------------------------------------ serving

    @property
    def served(self) -> ServedSnapshot | None:
        """The snapshot served now, or None before the first load: one attribute read."""
        return self._served

    @property
    def manifest_name(self) -> str:
        return names.manifest_name(self.acceptance.filter_name)

    def might_contain(self, key: str | int) -> bool:
        """False: ``key`` is not in the served version. True: it probably is."""
        served = self._served
        answer = self._not_ready() if served is None else served.filter.might_contain(key)
        self.lookups += 1
        if answer:
            self.maybe_present += 1
        return answer

    def might_contain_many(self, keys: Iterable[str] | Iterable[int] | np.ndarray) -> np.ndarray:
        """Answers for many keys, all against the same version."""
        served = self._served
        if served is None:
            keys = keys if isinstance(keys, (list, tuple, np.ndarray)) else list(keys)
            answers = np.full(len(keys), self._not_ready(), dtype=bool)
        else:
            answers = served.filter.might_contain_many(keys)
        self.lookups += len(answers)
        self.maybe_present += int(np.count_nonzero(answers))
        return answers

    def _not_ready(self) -> bool:
        if self._before_first is None:
            raise NotReadyError(f"no snapshot of {self.acceptance.filter_name} is loaded yet")
        return self._before_first

    # ----------------------------------------------------------------------------- following

    def refresh(self, configmaps: ConfigMapGetter) -> Outcome:
        """Reads the manifest ConfigMap through ``configmaps`` and acts on it (a poll)."""
        try:
            configmap = configmaps(self.acceptance.namespace, self.manifest_name)
        except Exception as e:  # noqa: BLE001 - whatever the getter raises is an API failure
            return self._counted(Outcome(Action.REFUSE, reason=reason_of(e), error=e, retry=True))
        return self.on_manifest(configmap, configmaps)

    def _counted(self, outcome: Outcome) -> Outcome:
        if outcome.action is Action.LOAD:
            self.swaps += 1
        elif outcome.action is Action.REFUSE and outcome.reason is not None:
            self.load_failures[outcome.reason] += 1
        if outcome.canary_failure is not None:
            self.load_failures[outcome.canary_failure[1]] += 1
        return outcome

    def on_manifest(self, configmap: ConfigMap | None, configmaps: ConfigMapGetter) -> Outcome:
        """Acts on the manifest ConfigMap as announced now (None: it is gone).

        Follows the canary when this pod is in its share and the canary is acceptable; loads
        what :class:`Acceptance` accepts, fetching its chunks through ``configmaps``; on any
        failure the served snapshot stays.
        """
        return self._counted(self._on_manifest(configmap, configmaps))

    def _on_manifest(self, configmap: ConfigMap | None, configmaps: ConfigMapGetter) -> Outcome:
        """The work of :meth:`on_manifest`, its outcome not counted yet."""
        if configmap is None:
            # Its chunks went with it: nothing to load, and nothing served changes.
            return Outcome(Action.KEEP)
        try:
            announced = read_manifest(configmap)
        except VerificationError as e:
            return Outcome(Action.REFUSE, reason=e.reason, error=e)
        served = self._served
        served_announced = served.announced if served is not None else None
        now = self._clock()
        canary_failure = None
        following_canary = False
        canary = self._canary(configmap)
        if canary is not None:
            try:
                self.acceptance.judge(canary, served_announced, now)
                announced, following_canary = canary, True
            except VerificationError as e:
                # Reported once per canary: the operator halts a canary on it.
                if not canary.same_snapshot(self._refused_canary):
                    self._refused_canary = canary
                    canary_failure = (canary.version, e.reason)
        try:
            verdict = self.acceptance.judge(announced, served_announced, now)
        except VerificationError as e:
            return Outcome(
                Action.REFUSE, announced.version, e.reason, e,
                canary=following_canary, canary_failure=canary_failure,
            )  # fmt: skip
        if verdict is Verdict.SAME:
            return Outcome(
                Action.KEEP, announced.version,
                canary=following_canary, canary_failure=canary_failure,
            )  # fmt: skip
        try:
            loaded = self._fetch(announced, served, configmaps)
        except Exception as e:  # noqa: BLE001 - every failure keeps the served filter
            return Outcome(
                Action.REFUSE, announced.version, reason_of(e), e, retry=True,
                canary=following_canary, canary_failure=canary_failure,
            )  # fmt: skip
        self._served = loaded  # the swap: one reference assignment
        return Outcome(
            Action.LOAD, announced.version,
            canary=following_canary, canary_failure=canary_failure,
        )  # fmt: skip

    def _canary(self, configmap: ConfigMap) -> Announced | None:
        """The canary this pod is in the share of, or None (none, not in it, or malformed)."""
        if self.pod_name is None:
            return None
        try:
            canary = read_canary(configmap)
        except VerificationError:
            return None
        if canary is None or not canary.includes(self.pod_name):
            return None
        return canary.announced

    def _fetch(
        self, announced: Announced, held: ServedSnapshot | None, configmaps: ConfigMapGetter
    ) -> ServedSnapshot:
        manifest = announced.manifest
        if manifest.store is None:
            source = chunk_source(configmaps, self.acceptance.namespace)
        else:
            # Acceptance refused unknown names; every key is built before the first request.
            source = store_chunk_source(
                self._stores[manifest.store],
                self.acceptance.namespace,
                self.acceptance.filter_name,
                manifest,
            )
        parallel = self.fetch_parallelism
        if held is None:
            bits = decoder.decode(manifest, source, fetch_parallelism=parallel)
        else:
            bits = decoder.update(
                manifest, held.filter, held.version, held.sha256, source, fetch_parallelism=parallel
            )
        return ServedSnapshot(announced, bits)
