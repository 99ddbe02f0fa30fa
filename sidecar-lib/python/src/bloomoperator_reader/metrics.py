"""Readers' counters for Prometheus, under the Java reader's metric names
(``io.bloomoperator.watch.metrics.ReaderMetricNames``), so the project's dashboard and alert rules
work for Python readers unchanged. Needs ``prometheus-client`` (the ``metrics`` extra)::

    from prometheus_client import REGISTRY, start_http_server
    from bloomoperator_reader.metrics import ReaderCollector

    REGISTRY.register(ReaderCollector(watcher))  # one or more FilterWatchers or SnapshotReaders
    start_http_server(9090)

Exported, each with the labels ``namespace`` and ``filter``:

- ``bloomreader_snapshot_version`` (gauge; -1 before the first snapshot)
- ``bloomreader_snapshot_age_seconds`` (gauge; since the manifest's ``createdAt``; NaN before)
- ``bloomreader_swaps_total`` (counter; snapshots loaded and served)
- ``bloomreader_load_failures_total`` (counter, label ``reason``: the Java tag, e.g. ``rollback``)
- ``bloomreader_lookups_total`` and ``bloomreader_maybe_present_total`` (counters; lookups, batch
  keys included, and those answered "maybe present")
- ``bloomreader_fpp_expected`` (gauge; the manifest's ``expectedFpp``; NaN before)

and, for a :class:`~bloomoperator_reader.watch.FilterWatcher` given instead of its reader, one the
Java reader does not have (fabric8's informer recovers from a 410 inside and does not tell); the Go
reader exports it too:

- ``bloomreader_watch_expirations_total`` (counter; manifest watches answered 410 Gone, each
  followed by a new list)

The Java reader's metrics of features this reader does not have are not exported:
``bloomreader_fpp_observed`` and ``bloomreader_outcomes_total`` (no ``recordOutcome``),
``bloomreader_local_adds`` and ``bloomreader_local_adds_{refused,expired,arrived}_total`` (no
``addLocal``), ``bloomreader_deltas_in_place_total`` and
``bloomreader_in_place_digest_mismatches_total`` (deltas are always swapped in).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .errors import LoadFailureReason
from .reader import SnapshotReader

if TYPE_CHECKING:
    from .watch import FilterWatcher

__all__ = ["ReaderCollector"]

_LABELS = ["namespace", "filter"]


class ReaderCollector(Collector):
    """A collector of one or more readers; it reads their counters at scrape time.

    Each may be a :class:`SnapshotReader` or a :class:`~bloomoperator_reader.watch.FilterWatcher`
    (its reader's metrics and its watch expirations).
    """

    def __init__(
        self, *readers: SnapshotReader | FilterWatcher, clock: Callable[[], float] = time.time
    ):
        self._readers = readers
        self._clock = clock

    def describe(self) -> list[Metric]:
        # No names up front: without describe, registering would call collect() to learn them.
        return []

    def collect(self) -> Iterator[Metric]:
        version = GaugeMetricFamily(
            "bloomreader_snapshot_version", "Version of the served snapshot; -1 before the first",
            labels=_LABELS,
        )  # fmt: skip
        age = GaugeMetricFamily(
            "bloomreader_snapshot_age_seconds",
            "Time since the served snapshot was built (manifest createdAt)", labels=_LABELS,
        )  # fmt: skip
        fpp = GaugeMetricFamily(
            "bloomreader_fpp_expected",
            "Expected false-positive probability of the served snapshot", labels=_LABELS,
        )  # fmt: skip
        swaps = CounterMetricFamily("bloomreader_swaps", "Snapshots swapped in", labels=_LABELS)
        failures = CounterMetricFamily(
            "bloomreader_load_failures", "Failed load attempts", labels=[*_LABELS, "reason"]
        )
        lookups = CounterMetricFamily("bloomreader_lookups", "mightContain calls", labels=_LABELS)
        maybe = CounterMetricFamily(
            "bloomreader_maybe_present", "mightContain calls that answered maybe present",
            labels=_LABELS,
        )  # fmt: skip
        expirations = CounterMetricFamily(
            "bloomreader_watch_expirations",
            "Manifest watches answered 410 Gone (resourceVersion compacted away), each followed by "
            "a new list", labels=_LABELS,
        )  # fmt: skip
        for followed in self._readers:
            reader = followed if isinstance(followed, SnapshotReader) else followed.reader
            labels = [reader.acceptance.namespace, reader.acceptance.filter_name]
            served = reader.served
            if served is None:
                version.add_metric(labels, -1)
                age.add_metric(labels, math.nan)
                fpp.add_metric(labels, math.nan)
            else:
                manifest = served.manifest
                seconds, nanos = manifest.created
                version.add_metric(labels, served.version)
                age.add_metric(labels, self._clock() - (seconds + nanos / 1e9))
                fpp.add_metric(labels, manifest.expected_fpp)
            swaps.add_metric(labels, reader.swaps)
            lookups.add_metric(labels, reader.lookups)
            maybe.add_metric(labels, reader.maybe_present)
            for reason in LoadFailureReason:
                failures.add_metric([*labels, reason.tag_value], reader.load_failures[reason])
            if followed is not reader:
                expirations.add_metric(labels, followed.watch_expirations)
        yield from (version, age, swaps, failures, lookups, maybe, fpp)
        if expirations.samples:
            yield expirations
