"""Verified, immutable Bloom filters of both layouts, answering exactly as the Java reader does.

Each filter answers one key at a time (:meth:`BloomFilter.might_contain`, plain Python integer
arithmetic) and many at once (:meth:`BloomFilter.might_contain_many`: every key is hashed into an
array first, then all are probed with array operations). Both give the same answers; the tests
hold them to that.

Bit arrays are read-only numpy arrays, so a filter can be shared by any number of threads and
swapped by one reference assignment.
"""

from __future__ import annotations

import abc
import hashlib
import sys
from collections.abc import Iterable

import numpy as np

from . import hashing
from .manifest import KeyType, Layout

MASK63 = (1 << 63) - 1
_MASK32 = 0xFFFFFFFF
SALTS = (
    0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D,
    0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31,
)  # fmt: skip
_SALTS = np.array(SALTS, dtype=np.uint32)

BATCH = 1 << 16
"""Keys probed per array pass: bounds the temporaries of a large batch."""

_DIGEST_WORDS = 1 << 17


def guava_bit_indexes(h1: int, h2: int, k: int, num_bits: int) -> list[int]:
    """The bits Guava's MURMUR128_MITZ_64 tests for hash ``(h1, h2)``:
    ``((h1 + i*h2) & Long.MAX_VALUE) % numBits`` for ``i < k``, with 64-bit wrapping sums."""
    return [((h1 + i * h2) & MASK63) % num_bits for i in range(k)]


def split_block_index(hash64: int, num_blocks: int) -> tuple[int, list[int]]:
    """Parquet's block ``((hash >>> 32) * z) >>> 32`` and, in each of its eight 32-bit words,
    the bit ``(key * salt[i]) >>> 27`` of the low 32 bits ``key``."""
    key = hash64 & _MASK32
    block = ((hash64 >> 32) * num_blocks) >> 32
    return block, [((key * salt) & _MASK32) >> 27 for salt in SALTS]


def guava_bit_index_arrays(h1: np.ndarray, h2: np.ndarray, k: int, num_bits: int):
    """:func:`guava_bit_indexes` for arrays of hashes: yields the ``i``-th index of every key,
    for ``i < k`` (uint64 arrays; the sums wrap at 64 bits as Java's longs do)."""
    modulus = np.uint64(num_bits)
    combined = h1.copy()
    with np.errstate(over="ignore"):
        for _ in range(k):
            yield (combined & np.uint64(MASK63)) % modulus
            combined += h2


def split_block_index_arrays(hashes: np.ndarray, num_blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`split_block_index` for an array of hashes: the block of every key and an
    ``(n, 8)`` array of its bit in each of the block's words."""
    # (hash >>> 32) < 2^32 and z < 2^29: the product fits 64 bits.
    block = ((hashes >> np.uint64(32)) * np.uint64(num_blocks)) >> np.uint64(32)
    key = (hashes & np.uint64(_MASK32)).astype(np.uint32)
    with np.errstate(over="ignore"):
        bits = (key[:, None] * _SALTS[None, :]) >> np.uint32(27)
    return block, bits


class BloomFilter(abc.ABC):
    """A verified filter of one key type; ``might_contain`` is false only for keys never added."""

    def __init__(self, key_type: KeyType, num_hash_functions: int, words: np.ndarray):
        words.flags.writeable = False
        self._key_type = key_type
        self._k = num_hash_functions
        self._words = words
        # Single probes read words through the buffer: a memoryview item is a Python int, several
        # times cheaper than a numpy scalar.
        self._scalar_words = memoryview(words)

    @property
    def key_type(self) -> KeyType:
        return self._key_type

    @property
    def num_hash_functions(self) -> int:
        return self._k

    @property
    @abc.abstractmethod
    def layout(self) -> Layout: ...

    @property
    def num_bits(self) -> int:
        return self._words.size * self._words.itemsize * 8

    @property
    def words(self) -> np.ndarray:
        """The bit array (read-only): Guava layout as 64-bit words, split-block as 32-bit words;
        bit ``p`` of the filter is bit ``p mod w`` of word ``p / w`` either way."""
        return self._words

    def might_contain(self, key: str | int) -> bool:
        """False: ``key`` was never added. True: it probably was.

        :raises TypeError: a key of the other key type (a Long filter asked for a string)
        """
        return self._probe(self._scalar_bytes(key))

    def might_contain_many(self, keys: Iterable[str] | Iterable[int] | np.ndarray) -> np.ndarray:
        """The answers for many keys as a bool array, in order: hash all, then probe all."""
        if self._key_type is KeyType.LONG:
            longs = hashing.as_long_array(keys)
            out = np.empty(longs.size, dtype=bool)
            for start in range(0, longs.size, BATCH):
                part = longs[start : start + BATCH]
                out[start : start + part.size] = self._probe_longs(part)
            return out
        strings = keys if isinstance(keys, (list, tuple)) else list(keys)
        out = np.empty(len(strings), dtype=bool)
        for start in range(0, len(strings), BATCH):
            part = strings[start : start + BATCH]
            out[start : start + len(part)] = self._probe_strings(part)
        return out

    def payload_sha256(self) -> str:
        """SHA-256 (hex) of the payload these bits serialise to, as the manifest records it."""
        digest = hashlib.sha256(self._header())
        order = self._payload_dtype()
        for start in range(0, self._words.size, _DIGEST_WORDS):
            digest.update(self._words[start : start + _DIGEST_WORDS].astype(order).tobytes())
        return digest.hexdigest()

    def _scalar_bytes(self, key: str | int) -> bytes:
        if self._key_type is KeyType.STRING:
            if isinstance(key, str):
                return hashing.utf8(key)
            if isinstance(key, (bytes, bytearray, memoryview)):
                return bytes(key)
            raise TypeError(f"this filter holds String keys, not {type(key).__name__}")
        if isinstance(key, bool) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"this filter holds Long keys, not {type(key).__name__}")
        return hashing.long_bytes(int(key))

    @abc.abstractmethod
    def _probe(self, data: bytes) -> bool: ...

    @abc.abstractmethod
    def _probe_longs(self, keys: np.ndarray) -> np.ndarray: ...

    @abc.abstractmethod
    def _probe_strings(self, keys: list) -> np.ndarray: ...

    @abc.abstractmethod
    def _header(self) -> bytes: ...

    @abc.abstractmethod
    def _payload_dtype(self) -> str: ...

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self._key_type.value}, numBits={self.num_bits}, "
            f"k={self._k})"
        )


class GuavaBits(BloomFilter):
    """Guava's MURMUR128_MITZ_64 layout: ``numBits / 64`` words, bit ``i`` in word ``i / 64``."""

    def __init__(self, key_type: KeyType, num_hash_functions: int, words: np.ndarray):
        if words.dtype != np.uint64 or words.ndim != 1 or words.size == 0:
            raise ValueError("Guava bits are a non-empty 1-d uint64 array")
        super().__init__(key_type, num_hash_functions, words)

    @property
    def layout(self) -> Layout:
        return Layout.GUAVA

    def bit_indexes(self, key: str | int) -> list[int]:
        """The ``k`` bit indexes ``key`` tests (for checks against other implementations)."""
        h1, h2 = hashing.murmur3_128(self._scalar_bytes(key))
        return guava_bit_indexes(h1, h2, self._k, self.num_bits)

    def _probe(self, data: bytes) -> bool:
        h1, h2 = hashing.murmur3_128(data)
        words = self._scalar_words
        num_bits = self.num_bits
        for i in range(self._k):
            index = ((h1 + i * h2) & MASK63) % num_bits
            if not (words[index >> 6] >> (index & 63)) & 1:
                return False
        return True

    def _probe_longs(self, keys: np.ndarray) -> np.ndarray:
        return self._probe_hashes(*hashing.murmur3_longs(keys))

    def _probe_strings(self, keys: list) -> np.ndarray:
        return self._probe_hashes(*hashing.murmur3_strings(keys))

    def _probe_hashes(self, h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
        found = np.ones(h1.size, dtype=bool)
        for index in guava_bit_index_arrays(h1, h2, self._k, self.num_bits):
            word = self._words[index >> np.uint64(6)]
            found &= ((word >> (index & np.uint64(63))) & np.uint64(1)).astype(bool)
        return found

    def _header(self) -> bytes:
        return bytes([1, self._k]) + self._words.size.to_bytes(4, "big")

    def _payload_dtype(self) -> str:
        return ">u8"


class SplitBlockBits(BloomFilter):
    """Parquet's split-block layout: blocks of eight 32-bit words, one block per key."""

    def __init__(self, key_type: KeyType, words: np.ndarray):
        if words.dtype != np.uint32 or words.ndim != 1 or words.size == 0 or words.size % 8:
            raise ValueError("split-block bits are whole blocks of eight uint32 words")
        super().__init__(key_type, 8, words)
        self._blocks = words.reshape(-1, 8)

    @property
    def layout(self) -> Layout:
        return Layout.SPLIT_BLOCK

    @property
    def num_blocks(self) -> int:
        return self._blocks.shape[0]

    def block_index(self, key: str | int) -> tuple[int, list[int]]:
        """The block ``key`` lands in and its bit in each of the block's words."""
        return split_block_index(hashing.xxh64(self._scalar_bytes(key)), self.num_blocks)

    def _probe(self, data: bytes) -> bool:
        hash64 = hashing.xxh64(data)
        key = hash64 & _MASK32
        base = (((hash64 >> 32) * self.num_blocks) >> 32) * 8
        words = self._scalar_words
        for i, salt in enumerate(SALTS):
            if not (words[base + i] >> (((key * salt) & _MASK32) >> 27)) & 1:
                return False
        return True

    def _probe_longs(self, keys: np.ndarray) -> np.ndarray:
        return self._probe_hashes(hashing.xxh64_longs(keys))

    def _probe_strings(self, keys: list) -> np.ndarray:
        return self._probe_hashes(hashing.xxh64_strings(keys))

    def _probe_hashes(self, hashes: np.ndarray) -> np.ndarray:
        block, bit = split_block_index_arrays(hashes, self.num_blocks)
        rows = self._blocks[block.astype(np.intp)]
        return np.all((rows >> bit) & np.uint32(1), axis=1)

    def _header(self) -> bytes:
        return b""

    def _payload_dtype(self) -> str:
        return "<u4"


def native_words(layout: Layout, raw: np.ndarray) -> np.ndarray:
    """Reinterprets an array filled with payload bytes as host-order words, in place."""
    swap = (layout is Layout.GUAVA) == (sys.byteorder == "little")
    if swap:
        raw.byteswap(inplace=True)
    return raw
