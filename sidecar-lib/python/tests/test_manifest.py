"""Manifest parsing and validation: strict about what is there, lenient about unknown fields."""

from __future__ import annotations

import copy
import json

import pytest

from bloomoperator_reader import VerificationError, parse_manifest
from bloomoperator_reader.manifest import parse_instant

SHA_A = "a" * 64
SHA_B = "b" * 64
SHA_C = "C" * 64

WHOLE = {
    "format": "guava-bloomfilter-v1",
    "version": 7,
    "filterName": "products",
    "keyType": "String",
    "numBits": 128,
    "numHashFunctions": 3,
    "keyCount": 10,
    "expectedFpp": 0.01,
    "totalBytes": 22,
    "sha256": SHA_A,
    "createdAt": "2026-11-29T23:30:00.482Z",
    "chunks": [
        {"name": "products-bloom-v7-0", "bytes": 20, "sha256": SHA_A},
        {"name": "products-bloom-v7-1", "bytes": 2, "sha256": SHA_B},
    ],
}

CHAIN = {
    **WHOLE,
    "format": "guava-bloomfilter-chain-v1",
    "version": 9,
    "sha256": SHA_C,
    "chain": {
        "baseVersion": 7,
        "baseSha256": SHA_A,
        "deltas": [
            {"version": 8, "bytes": 15, "changedBits": 1, "sha256": SHA_B,
             "chunks": [{"name": "products-bloom-v8-d0", "bytes": 15, "sha256": SHA_B}]},
            {"version": 9, "bytes": 14, "changedBits": 0, "sha256": SHA_C.lower(),
             "chunks": [{"name": "products-bloom-v9-d0", "bytes": 14, "sha256": SHA_C}]},
        ],
    },
}  # fmt: skip


def parse(manifest: dict):
    return parse_manifest(json.dumps(manifest))


def test_a_whole_manifest_and_a_chain_parse():
    whole = parse(WHOLE)
    assert (whole.version, whole.base_version, whole.chunk_count, whole.deltas) == (7, 7, 2, ())
    chain = parse(CHAIN)
    assert (chain.base_version, chain.base_sha256, chain.chunk_count) == (7, SHA_A, 4)
    assert [d.version for d in chain.deltas] == [8, 9]
    assert chain.delta_bytes == 29


def test_unknown_fields_and_a_null_chain_or_store_are_ignored():
    manifest = parse({**WHOLE, "newField": {"x": [1]}, "chain": None, "store": None})
    assert manifest.chain is None and manifest.store is None


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.pop("createdAt"),
        lambda m: m.update(keyCount=None),
        lambda m: m.update(version=7.0),
        lambda m: m.update(version=True),
        lambda m: m.update(numHashFunctions=2**31),
        lambda m: m.update(keyCount=2**63),
        lambda m: m["chunks"][0].update(bytes=2**31),
        lambda m: m["chunks"][0].pop("sha256"),
        lambda m: m.update(keyType="string"),
        lambda m: m.update(chunks={}),
        lambda m: m.update(store=5),
        lambda m: m.update(chain="x"),
        lambda m: m.update(filterName={}),
        lambda m: m.update(version="7.0"),
        lambda m: m.update(version="1e1"),
        lambda m: m.update(version=""),
        lambda m: m.update(version="9223372036854775808"),
        lambda m: m["chunks"][0].update(bytes="2147483648"),
        lambda m: m["chunks"][0].update(bytes="0x16"),
        lambda m: m.update(expectedFpp="1_0"),
        lambda m: m.update(expectedFpp=""),
    ],
)
def test_missing_null_and_mistyped_fields_are_refused(edit):
    manifest = copy.deepcopy(WHOLE)
    edit(manifest)
    with pytest.raises(VerificationError):
        parse(manifest)


@pytest.mark.parametrize(
    ("edit", "check"),
    [
        (lambda m: m.update(version="7"), lambda m: m.version == 7),
        (lambda m: m.update(version=" +07 "), lambda m: m.version == 7),
        (lambda m: m.update(version="\u0667"), lambda m: m.version == 7),
        (lambda m: m["chunks"][1].update(bytes="2"), lambda m: m.chunks[1].bytes == 2),
        (lambda m: m.update(expectedFpp="1e-2"), lambda m: m.expected_fpp == 0.01),
        (lambda m: m.update(expectedFpp=" .01d"), lambda m: m.expected_fpp == 0.01),
        (lambda m: m.update(expectedFpp="0x1p-7"), lambda m: m.expected_fpp == 0.0078125),
        (lambda m: m.update(expectedFpp=1), lambda m: m.expected_fpp == 1.0),
        (lambda m: m.update(filterName=7, chunks=[
            {"name": "7-bloom-v7-0", "bytes": 22, "sha256": SHA_A}]), lambda m: m.filter_name == "7"),
        (lambda m: m["chunks"][0].update(name=True), lambda m: m.chunks[0].name == "true"),
    ],
)  # fmt: skip
def test_scalars_are_coerced_as_javas_mapper_coerces_them(edit, check):
    # Each of these was read by Java's Manifest.fromJson to the value checked here.
    manifest = copy.deepcopy(WHOLE)
    edit(manifest)
    assert check(parse(manifest))


def test_a_number_read_as_text_keeps_its_spelling():
    text = json.dumps(WHOLE).replace('"filterName": "products"', '"filterName": 1.50')
    assert parse_manifest(text).filter_name == "1.50"


@pytest.mark.parametrize(
    "text", ["", "   ", "null", "[]", "{", json.dumps(WHOLE) + " {}", '{"version": NaN}']
)
def test_not_a_manifest(text):
    with pytest.raises(VerificationError):
        parse_manifest(text)


@pytest.mark.parametrize(
    "edit",
    [
        lambda m: m.update(format="guava-bloomfilter-v9"),
        lambda m: m.update(version=0),
        lambda m: m.update(version=10**18),
        lambda m: m.update(filterName=" "),
        lambda m: m.update(numBits=96, totalBytes=18),
        lambda m: m.update(numBits=64 * 2**31, totalBytes=6 + 8 * 2**31),
        lambda m: m.update(numHashFunctions=0),
        lambda m: m.update(numHashFunctions=256),
        lambda m: m.update(keyCount=-1),
        lambda m: m.update(expectedFpp=1.5),
        lambda m: m.update(totalBytes=21),
        lambda m: m.update(sha256="g" * 64),
        lambda m: m.update(sha256=SHA_A[:63]),
        lambda m: m.update(createdAt="2026-02-30T00:00:00Z"),
        lambda m: m.update(createdAt="2026-11-29 23:30:00Z"),
        lambda m: m.update(createdAt="2026-11-29T23:30:00"),
        lambda m: m["chunks"][1].update(bytes=1),
        lambda m: m["chunks"][1].update(bytes=0),
        lambda m: m["chunks"][1].update(name=" "),
        lambda m: m.update(chunks=[]),
        lambda m: m.update(store="Bucket"),
        lambda m: m.update(chain=CHAIN["chain"]),
        lambda m: m.update(format="parquet-splitblock-v1", numHashFunctions=3, totalBytes=16),
        lambda m: m.update(format="parquet-splitblock-v1", numHashFunctions=8, totalBytes=16,
                           chunks=[{"name": "x", "bytes": 16, "sha256": SHA_A}]),
    ],
)  # fmt: skip
def test_inconsistent_whole_manifests_are_refused(edit):
    manifest = copy.deepcopy(WHOLE)
    edit(manifest)
    with pytest.raises(VerificationError):
        parse(manifest)


def test_a_split_block_manifest_is_whole_blocks_with_k_8():
    manifest = {
        **WHOLE,
        "format": "parquet-splitblock-v1",
        "numBits": 256,
        "numHashFunctions": 8,
        "totalBytes": 32,
        "chunks": [{"name": "products-bloom-v7-0", "bytes": 32, "sha256": SHA_A}],
    }
    assert parse(manifest).num_bits == 256


@pytest.mark.parametrize(
    "edit",
    [
        lambda c: c.pop("chain"),
        lambda c: c.update(format="guava-bloomfilter-v1"),
        lambda c: c["chain"].update(baseVersion=9),
        lambda c: c["chain"].update(baseVersion=0),
        lambda c: c["chain"].update(baseSha256="x"),
        lambda c: c["chain"].update(deltas=[]),
        lambda c: c["chain"]["deltas"].insert(0, None),
        lambda c: c["chain"]["deltas"][0].update(version=7),
        lambda c: c["chain"]["deltas"][1].update(version=8),
        lambda c: c["chain"]["deltas"][0].update(changedBits=129),
        lambda c: c["chain"]["deltas"][0].update(changedBits=-1),
        lambda c: c["chain"]["deltas"][0].update(bytes=16),
        lambda c: c["chain"]["deltas"][0].update(chunks=[]),
        lambda c: c["chain"]["deltas"][1].update(sha256=SHA_B),
        lambda c: c.update(version=10),
        lambda c: c["chain"]["deltas"][0].pop("changedBits"),
    ],
)
def test_inconsistent_chains_are_refused(edit):
    manifest = copy.deepcopy(CHAIN)
    edit(manifest)
    with pytest.raises(VerificationError):
        parse(manifest)


def test_deltas_after_a_held_version():
    chain = parse(CHAIN)
    assert [d.version for d in chain.deltas_after(7, SHA_A.upper())] == [8, 9]
    assert [d.version for d in chain.deltas_after(8, SHA_B)] == [9]
    assert chain.deltas_after(9, SHA_C.lower()) == ()
    assert chain.deltas_after(8, SHA_A) is None
    assert chain.deltas_after(6, SHA_A) is None
    assert chain.deltas_after(7, None) is None
    whole = parse(WHOLE)
    assert whole.deltas_after(7, SHA_A) == ()
    assert whole.deltas_after(6, SHA_A) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1970-01-01T00:00:00Z", (0, 0)),
        ("1970-01-01T00:00Z", (0, 0)),
        ("1970-01-01t00:00:01.5z", (1, 500_000_000)),
        ("1970-01-01T01:00:00+01:00", (0, 0)),
        ("1970-01-01T01:00:00+01", (0, 0)),
        ("1970-01-01T00:00:00-01:30", (5400, 0)),
        ("1970-01-01T00:00:00+01:00:30", (-3630, 0)),
        ("1970-01-01T00:00:00.Z", (0, 0)),
        ("1970-01-01T00:00:00-0130", None),
        ("1970-01-01T00:00:00+1", None),
        ("1970-01-01T00:00:00.000000001Z", (0, 1)),
        ("2026-11-29T23:30:00.482Z", (1795995000, 482_000_000)),
        ("1970-01-01T00:00:00.0000000001Z", None),
        ("1970-01-01T00:00:00+19:00", None),
        ("1970-01-01T24:00:00Z", None),
        ("1970-01-01T00:00:60Z", None),
        ("1970-13-01T00:00:00Z", None),
        ("1970-01-01T00:00:00", None),
        ("1970-01-01", None),
    ],
)
def test_created_at_is_read_as_javas_iso_offset_date_time(text, expected):
    # Expected values are what OffsetDateTime.parse(text, ISO_OFFSET_DATE_TIME) gives (ERR: None).
    assert parse_instant(text) == expected


def test_published_after_orders_by_time_then_version():
    earlier = parse(WHOLE)
    later = parse({**WHOLE, "version": 1, "createdAt": "2026-11-29T23:30:00.483Z"})
    same_time_higher = parse({**WHOLE, "version": 8, "createdAt": "2026-11-30T00:30:00.482+01:00"})
    assert later.published_after(earlier)
    assert not earlier.published_after(later)
    assert same_time_higher.published_after(earlier)
    assert not earlier.published_after(same_time_higher)
    assert not earlier.published_after(earlier)
