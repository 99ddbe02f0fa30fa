"""The reader's metrics carry the Java reader's names (its catalogue, which the dashboard and
alert rules are checked against) and count what they say."""

from __future__ import annotations

import pathlib
import re

from prometheus_client import CollectorRegistry

from bloomoperator_reader import ConfigMapSet, LoadFailureReason, SnapshotReader
from bloomoperator_reader.metrics import ReaderCollector
from bloomoperator_reader.watch import FilterWatcher
from snapshots import NAMESPACE, Filter, Publisher

# The Go and Python readers' metrics the Java reader has no counterpart of (docs/reader-protocol.md).
FOREIGN_ONLY = {"bloomreader_watch_expirations_total"}

# The Java reader's metrics of features the Go and Python readers do not have; every other Java
# metric is exported under the same name and labels. A metric the Java catalogue gains must be
# added to one side (the Go reader's metrics_test.go keeps the same list).
NOT_EXPORTED = {
    "bloomreader_fpp_observed", "bloomreader_outcomes_total",  # recordOutcome
    "bloomreader_local_adds", "bloomreader_local_adds_refused_total",  # addLocal
    "bloomreader_local_adds_expired_total", "bloomreader_local_adds_arrived_total",
    "bloomreader_deltas_in_place_total", "bloomreader_in_place_digest_mismatches_total",
}  # fmt: skip

CATALOGUE = (
    pathlib.Path(__file__).parents[2]
    / "src/main/java/io/bloomoperator/watch/metrics/ReaderMetricNames.java"
)
REASONS = (
    pathlib.Path(__file__).parents[2]
    / "snapshot-format/src/main/java/io/bloomoperator/snapshot/LoadFailureReason.java"
)


def test_names_are_the_java_readers_and_counters_count():
    java_names = set(re.findall(r'names\.put\(\w+, "(bloomreader_[a-z_]+)"\)', CATALOGUE.read_text()))
    assert len(java_names) >= 10

    def down(namespace, name):
        raise ConnectionError("connection refused")

    reader = SnapshotReader(NAMESPACE, "products", "String")
    watcher = FilterWatcher(reader, object(), start=False)  # never started: no API calls
    watcher.watch_expirations = 2
    registry = CollectorRegistry()
    registry.register(ReaderCollector(watcher))
    reader.might_contain("a")
    reader.refresh(down)

    def value(name, **labels):
        return registry.get_sample_value(name, {"namespace": NAMESPACE, "filter": "products", **labels})

    assert value("bloomreader_snapshot_version") == -1
    assert value("bloomreader_load_failures_total", reason="api") == 1
    assert value("bloomreader_lookups_total") == 1 and value("bloomreader_maybe_present_total") == 1

    p = Publisher()
    p.whole(3, Filter("Guava", "String", 2048, 5).add("x"))
    reader.refresh(ConfigMapSet(p.configmaps()))
    reader.might_contain_many(["x", "y", "z"])
    assert value("bloomreader_snapshot_version") == 3
    assert value("bloomreader_swaps_total") == 1
    assert value("bloomreader_lookups_total") == 4
    assert value("bloomreader_fpp_expected") == 0.01
    assert value("bloomreader_snapshot_age_seconds") > 0
    assert value("bloomreader_watch_expirations_total") == 2

    exported = {sample.name for family in registry.collect() for sample in family.samples}
    assert exported <= java_names | FOREIGN_ONLY, exported - java_names
    # Every Java metric is exported or listed as a feature this reader lacks, not both.
    assert java_names - NOT_EXPORTED == exported - FOREIGN_ONLY, java_names ^ exported
    assert NOT_EXPORTED <= java_names
    # A series for every Java LoadFailureReason, under its Java tag (the lower-case name).
    java_reasons = re.findall(r"(?m)^  ([A-Z_]+)\((?:true|false)\)[,;]", REASONS.read_text())
    assert len(java_reasons) == len(LoadFailureReason) >= 16
    for reason in java_reasons:
        assert value("bloomreader_load_failures_total", reason=reason.lower()) is not None, reason
    # Labels: namespace and filter, and the fixed reason set; never keys or manifest text.
    for family in registry.collect():
        for sample in family.samples:
            assert set(sample.labels) <= {"namespace", "filter", "reason"}, sample

    # A reader without its watcher: no watch, no expirations exported.
    alone = CollectorRegistry()
    alone.register(ReaderCollector(reader))
    labels = {"namespace": NAMESPACE, "filter": "products"}
    assert alone.get_sample_value("bloomreader_swaps_total", labels) == 1
    assert not any(f.name == "bloomreader_watch_expirations" for f in alone.collect())
