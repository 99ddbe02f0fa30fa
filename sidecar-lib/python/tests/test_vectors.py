"""The language-neutral reader test vectors (sidecar-lib/test-vectors, README.md there).

Every case listed in index.json runs; a missing vector directory fails the run rather than
skipping it. ``BLOOM_TEST_VECTORS`` points elsewhere (e.g. at vectors not committed yet).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from bloomoperator_reader import (
    ConfigMapSet,
    GuavaBits,
    KeyType,
    SnapshotLimits,
    SnapshotReader,
    SplitBlockBits,
    hashing,
    manifest_name,
)
from bloomoperator_reader.bits import (
    guava_bit_index_arrays,
    guava_bit_indexes,
    split_block_index,
    split_block_index_arrays,
)

VECTORS = Path(
    os.environ.get("BLOOM_TEST_VECTORS", Path(__file__).resolve().parents[2] / "test-vectors")
)
INDEX = json.loads((VECTORS / "index.json").read_text(encoding="utf-8"))


def test_the_index_lists_every_case_directory():
    assert INDEX["vectorsVersion"] == 1
    on_disk = {p.parent.name for p in VECTORS.glob("*/case.json")}
    assert on_disk == set(INDEX["cases"])


def probe_key(key_type: str, key: str):
    return int(key) if key_type == "Long" else key


@pytest.mark.parametrize("case", INDEX["cases"])
def test_case(case):
    spec = json.loads((VECTORS / case / "case.json").read_text(encoding="utf-8"))
    config = spec["reader"]
    reader = SnapshotReader(
        config["namespace"],
        config["filter"],
        config["keyType"],
        trusted_keys=config["trustedKeys"],
        limits=SnapshotLimits(config["limits"]["maxTotalBytes"], config["limits"]["maxChunks"]),
        pod_name=config.get("podName"),
        before_first=None,
    )
    for number, step in enumerate(spec["steps"]):
        where = f"{case} step {number} ({step.get('note', '')})"
        configmaps = ConfigMapSet(step["configMaps"])
        announced = configmaps(config["namespace"], manifest_name(config["filter"]))
        outcome = reader.on_manifest(announced, configmaps)
        expect = step["expect"]
        assert outcome.action.value == expect["outcome"], f"{where}: {outcome}"
        reason = None if outcome.reason is None else outcome.reason.name
        assert reason == expect.get("reason"), f"{where}: {outcome}"
        served = reader.served
        if expect["served"] is None:
            assert served is None, where
            assert not expect["probes"], where
            continue
        assert served is not None, where
        manifest = served.manifest
        actual = {
            "version": manifest.version,
            "format": manifest.format,
            "sha256": manifest.sha256,
            "numBits": manifest.num_bits,
            "numHashFunctions": manifest.num_hash_functions,
        }
        assert actual == expect["served"], where
        # What is served is those bits: the payload they serialise to has the announced digest.
        assert served.filter.payload_sha256() == expect["served"]["sha256"], where
        assert served.filter.num_bits == expect["served"]["numBits"], where
        keys = [probe_key(config["keyType"], p["key"]) for p in expect["probes"]]
        present = [p["present"] for p in expect["probes"]]
        assert [reader.might_contain(key) for key in keys] == present, f"{where}: scalar"
        assert reader.might_contain_many(keys).tolist() == present, f"{where}: batch"
        if config["keyType"] == "Long":
            as_array = np.array(keys, dtype=np.int64)
            assert reader.might_contain_many(as_array).tolist() == present, f"{where}: int64"


# ------------------------------------------------------------------------------- hashes.json

HASHES = json.loads((VECTORS / "hashes.json").read_text(encoding="utf-8"))


def key_data(entry) -> bytes:
    if entry["keyType"] == "Long":
        return hashing.long_bytes(int(entry["key"]))
    return hashing.utf8(entry["key"])


def test_guava_indexes_over_two_to_the_32_bits_scalar_and_arrays():
    guava = HASHES["guava"]
    num_bits, k = guava["numBits"], guava["numHashFunctions"]
    assert num_bits > 2**32
    entries = guava["keys"]
    h1s, h2s = [], []
    for entry in entries:
        h1, h2 = hashing.murmur3_128(key_data(entry))
        assert (f"{h1:016x}", f"{h2:016x}") == (entry["murmur3H1"], entry["murmur3H2"])
        assert guava_bit_indexes(h1, h2, k, num_bits) == entry["bitIndexes"], entry["key"]
        h1s.append(h1)
        h2s.append(h2)
    arrays = list(
        guava_bit_index_arrays(
            np.array(h1s, dtype=np.uint64), np.array(h2s, dtype=np.uint64), k, num_bits
        )
    )
    assert np.stack(arrays, axis=1).tolist() == [entry["bitIndexes"] for entry in entries]


def test_split_block_indexes_over_two_to_the_32_bits_scalar_and_arrays():
    split = HASHES["splitBlock"]
    num_blocks = split["numBlocks"]
    assert split["numBits"] == num_blocks * 256 > 2**32
    entries = split["keys"]
    hashes = []
    for entry in entries:
        value = hashing.xxh64(key_data(entry))
        assert f"{value:016x}" == entry["xxh64"]
        assert split_block_index(value, num_blocks) == (entry["block"], entry["bitInWord"])
        hashes.append(value)
    blocks, bits = split_block_index_arrays(np.array(hashes, dtype=np.uint64), num_blocks)
    assert blocks.tolist() == [entry["block"] for entry in entries]
    assert bits.tolist() == [entry["bitInWord"] for entry in entries]


def by_key_type(entries, key_type):
    return [e for e in entries if e["keyType"] == key_type]


def guava_words(guava, entries, skip=None) -> np.ndarray:
    # numpy zero-fills lazily: only the pages of the bits set here are ever touched.
    words = np.zeros(guava["numBits"] // 64, dtype=np.uint64)
    for entry in entries:
        for index in entry["bitIndexes"]:
            if index != skip:
                words[index >> 6] |= np.uint64(1) << np.uint64(index & 63)
    return words


@pytest.mark.parametrize("key_type", ["String", "Long"])
def test_lookups_in_a_guava_array_of_over_two_to_the_32_bits(key_type):
    guava = HASHES["guava"]
    entries = by_key_type(guava["keys"], key_type)
    keys = [probe_key(key_type, e["key"]) for e in entries]
    bits = GuavaBits(KeyType(key_type), guava["numHashFunctions"], guava_words(guava, entries))
    assert bits.num_bits == guava["numBits"]
    assert all(bits.might_contain(key) for key in keys)
    assert bits.might_contain_many(keys).all()
    # Without one key's last bit exactly the keys that test it are absent, both ways.
    last = entries[-1]["bitIndexes"][-1]
    without = GuavaBits(
        KeyType(key_type), guava["numHashFunctions"], guava_words(guava, entries, skip=last)
    )
    expected = [last not in e["bitIndexes"] for e in entries]
    assert [without.might_contain(key) for key in keys] == expected
    assert without.might_contain_many(keys).tolist() == expected


def split_words(split, entries, skip=None) -> np.ndarray:
    words = np.zeros(split["numBlocks"] * 8, dtype=np.uint32)
    for entry in entries:
        for word, bit in enumerate(entry["bitInWord"]):
            if (entry["block"], word, bit) != skip:
                words[entry["block"] * 8 + word] |= np.uint32(1 << bit)
    return words


@pytest.mark.parametrize("key_type", ["String", "Long"])
def test_lookups_in_a_split_block_array_of_over_two_to_the_32_bits(key_type):
    split = HASHES["splitBlock"]
    entries = by_key_type(split["keys"], key_type)
    keys = [probe_key(key_type, e["key"]) for e in entries]
    bits = SplitBlockBits(KeyType(key_type), split_words(split, entries))
    assert bits.num_bits == split["numBits"]
    assert all(bits.might_contain(key) for key in keys)
    assert bits.might_contain_many(keys).all()
    first = entries[0]
    skip = (first["block"], 0, first["bitInWord"][0])
    without = SplitBlockBits(KeyType(key_type), split_words(split, entries, skip=skip))
    expected = [(e["block"], 0, e["bitInWord"][0]) != skip for e in entries]
    assert [without.might_contain(key) for key in keys] == expected
    assert without.might_contain_many(keys).tolist() == expected
