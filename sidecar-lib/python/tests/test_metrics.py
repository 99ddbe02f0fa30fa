"""The reader's metrics carry the Java reader's names (its catalogue, which the dashboard and
alert rules are checked against) and count what they say."""

from __future__ import annotations

import pathlib
import re

from prometheus_client import CollectorRegistry

from bloomoperator_reader import ConfigMapSet, SnapshotReader
from bloomoperator_reader.metrics import ReaderCollector
from snapshots import NAMESPACE, Filter, Publisher

CATALOGUE = (
    pathlib.Path(__file__).parents[2]
    / "src/main/java/io/bloomoperator/watch/metrics/ReaderMetricNames.java"
)


def test_names_are_the_java_readers_and_counters_count():
    java_names = set(re.findall(r'names\.put\(\w+, "(bloomreader_[a-z_]+)"\)', CATALOGUE.read_text()))
    assert len(java_names) >= 10

    def down(namespace, name):
        raise ConnectionError("connection refused")

    reader = SnapshotReader(NAMESPACE, "products", "String")
    registry = CollectorRegistry()
    registry.register(ReaderCollector(reader))
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

    exported = {sample.name for family in registry.collect() for sample in family.samples}
    assert exported <= java_names, exported - java_names
