"""Delta parsing against Java's SnapshotDelta.apply on the same bytes.

Each case: (name, k, words, changedBits, chunks as hex, the words Java ended with or None where
it threw). Java started from words [1 << 5, 0, ...]; the results are unsigned 64-bit words.
"""

from __future__ import annotations

import hashlib
import types

import numpy as np
import pytest

from bloomoperator_reader import VerificationError
from bloomoperator_reader.decoder import _apply_delta
from bloomoperator_reader.manifest import ChunkRef, Delta

JAVA_DELTAS = [
    ('valid', 3, 2, 5, ['0103000000020000000000000005000439003e'], [9223372036854775809, 9223372036854775809]),
    ('valid-every-byte-a-chunk', 3, 2, 5, ['01', '03', '00', '00', '00', '02', '00', '00', '00', '00', '00', '00', '00', '05', '00', '04', '39', '00', '3e'], [9223372036854775809, 9223372036854775809]),
    ('valid-header-split', 3, 2, 5, ['010300', '000002000000000000000500', '0439003e'], [9223372036854775809, 9223372036854775809]),
    ('non-canonical-varint', 3, 2, 1, ['0103000000020000000000000001858000'], [0, 0]),
    ('ten-byte-varint-zero-top', 3, 2, 1, ['010300000002000000000000000181808080808080808000'], [34, 0]),
    ('ten-byte-varint-top-bit', 3, 2, 1, ['010300000002000000000000000181808080808080808001'], None),
    ('ten-byte-varint-overflow', 3, 2, 1, ['010300000002000000000000000181808080808080808002'], None),
    ('eleven-byte-varint', 3, 2, 1, ['01030000000200000000000000018180808080808080808000'], None),
    ('byte-after-last', 3, 2, 5, ['0103000000020000000000000005000439003e00'], None),
    ('continuation-after-last', 3, 2, 5, ['0103000000020000000000000005000439003e', '80'], None),
    ('positions-missing', 3, 2, 6, ['0103000000020000000000000006000439003e'], None),
    ('unfinished-varint', 3, 2, 5, ['01030000000200000000000000050004390080'], None),
    ('position-at-numBits', 3, 2, 1, ['01030000000200000000000000018001'], None),
    ('gap-past-end', 3, 2, 2, ['0103000000020000000000000002641b'], None),
    ('last-bit', 3, 2, 2, ['0103000000020000000000000002641a'], [32, 9223372105574252544]),
    ('k-mismatch', 3, 2, 5, ['0104000000020000000000000005000439003e'], None),
    ('words-mismatch', 3, 2, 5, ['0103000000030000000000000005000439003e'], None),
    ('count-mismatch', 3, 2, 4, ['0103000000020000000000000005000439003e'], None),
    ('encoding-2', 3, 2, 5, ['0203000000020000000000000005000439003e'], None),
    ('empty', 3, 2, 0, ['0103000000020000000000000000'], [32, 0]),
    ('empty-with-byte', 3, 2, 0, ['010300000002000000000000000000'], None),
    ('header-cut', 3, 2, 0, ['01030000000200000000'], None),
    ('huge-gap', 3, 2, 1, ['0103000000020000000000000001ffffffffffffffffff00'], None),
    ('many-positions-4-chunks', 3, 2, 128, ['01030000000200000000000000800000000000000000000000000000000000000000000000', '00000000000000000000000000000000000000000000000000000000000000000000000000', '00000000000000000000000000000000000000000000000000000000000000000000000000', '00000000000000000000000000000000000000000000000000000000000000'], [18446744073709551583, 18446744073709551615]),
]  # fmt: skip


def apply(words: np.ndarray, k: int, num_words: int, changed: int, chunks: list[bytes]):
    refs = tuple(ChunkRef("x", len(c), hashlib.sha256(c).hexdigest()) for c in chunks)
    delta = Delta(2, sum(len(c) for c in chunks), changed, "a" * 64, refs)
    geometry = types.SimpleNamespace(
        num_hash_functions=k, num_words=num_words, num_bits=64 * num_words
    )
    _apply_delta(words, geometry, delta, lambda i, ref: chunks[i])
    return words


@pytest.mark.parametrize(("name", "k", "n", "changed", "chunks", "expected"), JAVA_DELTAS)
def test_guava_words_as_java(name, k, n, changed, chunks, expected):
    words = np.zeros(n, dtype=np.uint64)
    words[0] = 1 << 5
    data = [bytes.fromhex(c) for c in chunks]
    if expected is None:
        with pytest.raises(VerificationError):
            apply(words, k, n, changed, data)
    else:
        assert apply(words, k, n, changed, data).tolist() == expected


@pytest.mark.parametrize(("name", "k", "n", "changed", "chunks", "expected"), JAVA_DELTAS)
def test_split_block_words_as_java(name, k, n, changed, chunks, expected):
    # Java keeps split-block bits as little-endian longs over Parquet's 32-bit words: bit p is
    # bit p mod 32 of word p / 32 either way.
    words = np.zeros(2 * n, dtype=np.uint32)
    words[0] = 1 << 5
    data = [bytes.fromhex(c) for c in chunks]
    if expected is None:
        with pytest.raises(VerificationError):
            apply(words, k, n, changed, data)
    else:
        result = apply(words, k, n, changed, data)
        assert result.astype("<u4").view("<u8").tolist() == expected


def test_a_chunk_with_a_wrong_digest_is_refused_before_a_bit_flips():
    words = np.zeros(2, dtype=np.uint64)
    good = bytes.fromhex(JAVA_DELTAS[0][4][0])
    ref = ChunkRef("x", len(good), "0" * 64)
    delta = Delta(2, len(good), 5, "a" * 64, (ref,))
    geometry = types.SimpleNamespace(num_hash_functions=3, num_words=2, num_bits=128)
    with pytest.raises(VerificationError, match="sha256"):
        _apply_delta(words, geometry, delta, lambda i, r: good)
    assert not words.any()
