"""Object names and the canary bucket against values printed by Java's SnapshotNames and
CanaryShare."""

import pathlib

import pytest

from bloomoperator_reader import canary, names

# (filter, manifestName, chunkName(v=10^18-1, i=2^31-1), deltaChunkName(v=12, i=3)) from Java.
JAVA_NAMES = [
    ("orders", 'orders-bloom', 'orders-bloom-v999999999999999999-2147483647', 'orders-bloom-v12-d3'),
    ("a" * 247, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bloom', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-d1c97f05a04d45d6.bloom-v999999999999999999-2147483647', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-d1c97f05a04d45d6.bloom-v12-d3'),
    ("a" * 248, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-fdff3ab023a901d4.bloom', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-fdff3ab023a901d4.bloom-v999999999999999999-2147483647', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-fdff3ab023a901d4.bloom-v12-d3'),
    ("ab." * 84, 'ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab-ac83ce8272005979.bloom', 'ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.a-ac83ce8272005979.bloom-v999999999999999999-2147483647', 'ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.ab.a-ac83ce8272005979.bloom-v12-d3'),
    ("x-" * 130 + "tail", 'x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-0216fbe92685e3db.bloom', 'x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-0216fbe92685e3db.bloom-v999999999999999999-2147483647', 'x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-x-0216fbe92685e3db.bloom-v12-d3'),
]


@pytest.mark.parametrize(("filter_name", "manifest", "chunk", "delta"), JAVA_NAMES)
def test_names_are_javas_including_cut_ones(filter_name, manifest, chunk, delta):
    assert names.manifest_name(filter_name) == manifest
    assert names.chunk_name(filter_name, names.MAX_VERSION, 2**31 - 1) == chunk
    assert names.delta_chunk_name(filter_name, 12, 3) == delta
    assert max(len(manifest), len(chunk), len(delta)) <= 253


def test_no_chunk_name_outside_the_version_range():
    for version in (0, names.MAX_VERSION + 1):
        with pytest.raises(ValueError):
            names.chunk_name("orders", version, 0)
    with pytest.raises(ValueError):
        names.delta_chunk_name("orders", 1, -1)


@pytest.mark.parametrize(("pod", "bucket"), [('app-0', 5), ('app-1', 65), ('reader-7', 43), ('reader-0', 99), ('pod-é', 21)])
def test_canary_buckets_are_javas(pod, bucket):
    assert canary.bucket(pod) == bucket
    assert canary.in_share(pod, bucket + 1)
    assert not canary.in_share(pod, bucket)


def test_canary_share_edges():
    assert not canary.in_share(None, 100)
    assert not canary.in_share("", 100)
    assert not canary.in_share("app-0", 0)
    assert not canary.in_share("app-0", 101)
    assert canary.in_share("reader-0", 100)
    assert [canary.parse_percent(t) for t in ["1", "100", "050", "0", "101", "1000", "+5", "5 ", "", None, "٥"]] == [
        1, 100, 50, 0, 0, 0, 0, 0, 0, 0, 0
    ]


def _java_reports():
    # Reader report names and filter label values printed by Java's SnapshotNames
    # (sidecar-lib/go/testdata/java/Reports.java, shared with the Go reader's tests).
    path = pathlib.Path(__file__).parents[2] / "go" / "testdata" / "java-reports.tsv"
    return [tuple(line.split("\t")) for line in path.read_text("utf-8").splitlines() if line]


@pytest.mark.parametrize(("filter_name", "pod_uid", "report", "label"), _java_reports())
def test_reader_report_names_are_javas_including_cut_ones(filter_name, pod_uid, report, label):
    assert names.reader_report_name(filter_name, pod_uid) == report
    assert names.filter_label_value(filter_name) == label
