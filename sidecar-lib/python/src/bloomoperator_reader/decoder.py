"""Reads a manifest's chunks into a verified filter: a whole payload, or a base plus deltas.

Chunks come from a :data:`ChunkSource`, up to ``fetch_parallelism`` at once and used in manifest
order (:func:`~bloomoperator_reader.fetch.fetch_chunks`), and each is checked (present, announced
size, SHA-256) before a byte of it is used; the Guava header is
checked against the manifest's geometry before the bit array is allocated; the base's digest,
and after the last delta the digest of the whole resulting payload, must match the manifest.
A held filter is never changed: deltas are applied to a copy.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .bits import BloomFilter, GuavaBits, SplitBlockBits, native_words
from .errors import VerificationError
from .fetch import ChunkSource, fetch_chunks
from .fetch import fetch_parallelism as checked_parallelism
from .manifest import Delta, Layout, Manifest

STRATEGY_MURMUR128_MITZ_64 = 1
DELTA_HEADER_BYTES = 14
DELTA_ENCODING_BIT_POSITIONS = 1
_MAX_VARINT_BYTES = 10


def decode(manifest: Manifest, source: ChunkSource, *, fetch_parallelism: int = 1) -> BloomFilter:
    """The filter of ``manifest`` from nothing: its base, then every delta of its chain.

    :param fetch_parallelism: chunks fetched at once (1..16); ``source`` is then called from
        that many threads at once
    """
    parallel = checked_parallelism(fetch_parallelism)
    base_words = _decode_base(manifest, source, parallel)
    if not manifest.chained:
        return _wrap(manifest, base_words)
    return _apply_and_verify(manifest, base_words, manifest.deltas, source, parallel)


def update(manifest: Manifest, held: BloomFilter | None, held_version: int,
           held_sha256: str | None, source: ChunkSource, *,
           fetch_parallelism: int = 1) -> BloomFilter:
    """The filter of ``manifest`` for a reader holding ``held`` (version ``held_version``, payload
    digest ``held_sha256``): only the deltas after it when its version is in the chain, applied to
    a copy of its bits; otherwise as :func:`decode`."""
    parallel = checked_parallelism(fetch_parallelism)
    deltas = None if held is None else manifest.deltas_after(held_version, held_sha256)
    if deltas is None or not _describes(manifest, held):
        return decode(manifest, source, fetch_parallelism=parallel)
    return _apply_and_verify(manifest, held.words.copy(), deltas, source, parallel)


def _describes(manifest: Manifest, bits: BloomFilter | None) -> bool:
    return (
        bits is not None
        and bits.key_type is manifest.key_type
        and bits.layout is manifest.layout
        and bits.num_bits == manifest.num_bits
        and bits.num_hash_functions == manifest.num_hash_functions
    )


def _wrap(manifest: Manifest, words: np.ndarray) -> BloomFilter:
    if manifest.layout is Layout.GUAVA:
        return GuavaBits(manifest.key_type, manifest.num_hash_functions, words)
    return SplitBlockBits(manifest.key_type, words)


def _apply_and_verify(manifest: Manifest, words: np.ndarray, deltas: tuple[Delta, ...],
                      source: ChunkSource, parallel: int) -> BloomFilter:
    for delta in deltas:
        _apply_delta(words, manifest, delta, source, parallel)
    result = _wrap(manifest, words)
    actual = result.payload_sha256()
    if actual != manifest.sha256.lower():
        raise VerificationError(
            f"payload sha256 mismatch after applying {len(deltas)} delta(s): manifest says "
            f"{manifest.sha256}, computed {actual}"
        )
    return result



# ------------------------------------------------------------------------------ whole payload


def _decode_base(manifest: Manifest, source: ChunkSource, parallel: int) -> np.ndarray:
    parser = _PayloadParser(manifest)
    total = hashlib.sha256()
    chunks = manifest.chunks

    def where(i: int) -> str:
        return f"chunk {i} ('{chunks[i].name}')"

    def use(i: int, data: bytes) -> None:
        total.update(data)
        try:
            parser.accept(data)
        except VerificationError as e:
            raise VerificationError(f"{where(i)}: {e}") from None

    fetch_chunks(chunks, source, parallel, where, use)
    actual = total.hexdigest()
    # For a chain these chunks are the base: checked against the base's digest.
    if actual != manifest.base_sha256.lower():
        prefix = f"base v{manifest.base_version} " if manifest.chained else ""
        raise VerificationError(
            f"{prefix}payload sha256 mismatch: manifest says {manifest.base_sha256}, computed "
            f"{actual} over all {len(manifest.chunks)} chunks"
        )
    return parser.finish()


class _PayloadParser:
    """Payload bytes in any split into a word array, allocated once the header matches."""

    def __init__(self, manifest: Manifest):
        self._layout = manifest.layout
        self._k = manifest.num_hash_functions
        self._num_words = manifest.num_words
        self._header = bytearray()
        self._header_bytes = self._layout.header_bytes
        self._raw: np.ndarray | None = None
        self._view: memoryview | None = None
        self._filled = 0
        if self._header_bytes == 0:
            self._allocate()

    def _allocate(self) -> None:
        # Filled with payload bytes as they come, turned into host-order words at the end.
        dtype = np.uint64 if self._layout is Layout.GUAVA else np.uint32
        count = self._num_words * (1 if dtype is np.uint64 else 2)
        self._raw = np.zeros(count, dtype=dtype)
        self._view = memoryview(self._raw.view(np.uint8))

    def accept(self, data: bytes) -> None:
        pos = 0
        if len(self._header) < self._header_bytes:
            pos = min(self._header_bytes - len(self._header), len(data))
            self._header += data[:pos]
            if len(self._header) == self._header_bytes:
                self._check_header()
        rest = len(data) - pos
        if rest == 0:
            return
        assert self._view is not None
        if rest > len(self._view) - self._filled:
            raise VerificationError(
                f"payload is longer than the {self._num_words} words its header announces"
            )
        self._view[self._filled : self._filled + rest] = memoryview(data)[pos:]
        self._filled += rest

    def _check_header(self) -> None:
        strategy, k = self._header[0], self._header[1]
        num_words = int.from_bytes(self._header[2:6], "big", signed=True)
        if strategy != STRATEGY_MURMUR128_MITZ_64:
            raise VerificationError(
                f"header strategy ordinal is {strategy}, expected 1 (MURMUR128_MITZ_64)"
            )
        if k != self._k:
            raise VerificationError(
                f"header numHashFunctions is {k} but the manifest says {self._k}"
            )
        if num_words != self._num_words:
            raise VerificationError(
                f"header numLongs is {num_words} but the manifest says {self._num_words}"
            )
        self._allocate()

    def finish(self) -> np.ndarray:
        if len(self._header) < self._header_bytes:
            raise VerificationError(
                f"payload ended after {len(self._header)} bytes, inside the "
                f"{self._header_bytes}-byte header"
            )
        assert self._raw is not None and self._view is not None
        if self._filled != len(self._view):
            raise VerificationError(
                f"payload ended after {self._filled} bytes of the bit array, expected "
                f"{len(self._view)}"
            )
        self._view.release()
        return native_words(self._layout, self._raw)


# ------------------------------------------------------------------------------------- deltas


def _apply_delta(words: np.ndarray, manifest: Manifest, delta: Delta,
                 source: ChunkSource, parallel: int = 1) -> None:
    """Flips the bits ``delta`` lists in ``words``, chunk by chunk in order as they arrive."""
    parser = _DeltaParser(words, manifest, delta)

    def where(i: int) -> str:
        return f"delta v{delta.version} chunk {i} ('{delta.chunks[i].name}')"

    def use(i: int, data: bytes) -> None:
        try:
            parser.accept(data)
        except VerificationError as e:
            raise VerificationError(f"{where(i)}: {e}") from None

    fetch_chunks(delta.chunks, source, parallel, where, use)
    parser.finish()


class _DeltaParser:
    """Gap-coded LEB128 bit positions in any split; each chunk's varints decoded as arrays.

    Position ``p`` is bit ``p mod w`` of word ``p / w`` for ``w``-bit words (64 in the Guava
    layout, Parquet's 32-bit words in the split-block one).
    """

    def __init__(self, words: np.ndarray, manifest: Manifest, delta: Delta):
        self._words = words
        self._word_shift = np.uint64(6 if words.dtype == np.uint64 else 5)
        self._bit_mask = np.uint64(63 if words.dtype == np.uint64 else 31)
        self._k = manifest.num_hash_functions
        self._num_words = manifest.num_words
        self._num_bits = manifest.num_bits
        self._delta = delta
        self._header = bytearray()
        self._remaining = 0
        self._previous = -1
        self._carry = b""

    def accept(self, data: bytes) -> None:
        pos = 0
        if len(self._header) < DELTA_HEADER_BYTES:
            pos = min(DELTA_HEADER_BYTES - len(self._header), len(data))
            self._header += data[:pos]
            if len(self._header) == DELTA_HEADER_BYTES:
                self._check_header()
        if pos == len(data):
            return
        buffer = np.frombuffer(self._carry + bytes(data[pos:]), dtype=np.uint8)
        ends = np.flatnonzero(buffer < 0x80)
        count = ends.size
        if count > self._remaining:
            raise VerificationError(
                f"bytes after the last of its {self._delta.changed_bits} bit positions"
            )
        tail = buffer[ends[-1] + 1 :] if count else buffer
        if tail.size >= _MAX_VARINT_BYTES:
            raise VerificationError("varint longer than 10 bytes")
        if count:
            self._flip(self._positions(buffer, ends))
            self._remaining -= count
        self._carry = tail.tobytes()
        if self._remaining == 0 and self._carry:
            raise VerificationError(
                f"bytes after the last of its {self._delta.changed_bits} bit positions"
            )

    def _positions(self, buffer: np.ndarray, ends: np.ndarray) -> np.ndarray:
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        lengths = ends - starts + 1
        if int(lengths.max()) > _MAX_VARINT_BYTES:
            raise VerificationError("varint longer than 10 bytes")
        gaps = np.zeros(ends.size, dtype=np.uint64)
        for j in range(int(lengths.max())):
            has = lengths > j
            group = (buffer[starts[has] + j] & 0x7F).astype(np.uint64)
            if j == _MAX_VARINT_BYTES - 1 and group.any():
                # A tenth byte carries bit 63 and above: beyond any filter.
                raise VerificationError("varint overflows 64 bits or lies beyond the filter")
            gaps[has] |= group << np.uint64(7 * j)
        # Each gap below numBits (< 2^38) and at most 2^20 of them per chunk: no overflow below.
        if int(gaps.max()) >= self._num_bits:
            raise VerificationError(f"bit position beyond the filter's {self._num_bits} bits")
        # p_i = p_(i-1) + 1 + gap_i, starting from p_(-1) = previous (-1 before the first).
        positions = np.cumsum(gaps + np.uint64(1), dtype=np.uint64)
        if self._previous >= 0:
            positions += np.uint64(self._previous)
        else:
            positions -= np.uint64(1)
        last = int(positions[-1])
        if last >= self._num_bits:
            raise VerificationError(f"bit position beyond the filter's {self._num_bits} bits")
        self._previous = last
        return positions

    def _flip(self, positions: np.ndarray) -> None:
        dtype = self._words.dtype.type
        index = (positions >> self._word_shift).astype(np.intp)
        masks = (np.uint64(1) << (positions & self._bit_mask)).astype(dtype)
        np.bitwise_xor.at(self._words, index, masks)

    def _check_header(self) -> None:
        header = bytes(self._header)
        encoding, k = header[0], header[1]
        num_words = int.from_bytes(header[2:6], "big", signed=True)
        count = int.from_bytes(header[6:14], "big", signed=True)
        if encoding != DELTA_ENCODING_BIT_POSITIONS:
            raise VerificationError(f"delta encoding is {encoding}, expected 1")
        if k != self._k or num_words != self._num_words:
            raise VerificationError(
                f"delta header says k={k}, {num_words} words; the manifest says k={self._k}, "
                f"{self._num_words} words"
            )
        if count != self._delta.changed_bits:
            raise VerificationError(
                f"delta header says {count} changed bits, the manifest says "
                f"{self._delta.changed_bits}"
            )
        self._remaining = count

    def finish(self) -> None:
        if len(self._header) < DELTA_HEADER_BYTES:
            raise VerificationError(
                f"delta v{self._delta.version} ended inside its {DELTA_HEADER_BYTES}-byte header"
            )
        if self._remaining != 0 or self._carry:
            raise VerificationError(
                f"delta v{self._delta.version} ended with {self._remaining} of its "
                f"{self._delta.changed_bits} bit positions missing"
            )
