"""Key hashes, bit for bit those of the Java reader.

* Guava layout: MurmurHash3 x64 128 (seed 0), low and high 64 bits ``(h1, h2)`` as Guava's
  ``murmur3_128`` gives them, of a string's UTF-8 bytes or a long's 8 little-endian bytes.
* Split-block layout: XXH64 (seed 0) of the same bytes.

Scalar hashes go through ``mmh3`` and ``xxhash`` (C). For batches of integer keys the 8-byte
cases are computed on whole numpy arrays (the input is one fixed-size block, so both hashes
reduce to a few multiplications, rotations and shifts per key); string batches call the C hash
once per key into an array. Every result is an unsigned 64-bit value.
"""

from __future__ import annotations

from collections.abc import Iterable

import mmh3
import numpy as np
import xxhash

MASK64 = (1 << 64) - 1
_LONG_MIN = -(1 << 63)
_LONG_MAX = (1 << 63) - 1


def utf8(key: str) -> bytes:
    """What Java's ``String.getBytes(UTF_8)`` gives, which is what the operator hashed.

    Unpaired surrogates become ``?`` there; a surrogate pair held as two code points (as text
    decoded with ``surrogatepass`` may be) is one character there, so it is joined first.
    """
    try:
        return key.encode("utf-8")
    except UnicodeEncodeError:
        joined = key.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
        return joined.encode("utf-8", "replace")


def long_bytes(key: int) -> bytes:
    """The 8 little-endian bytes of a signed 64-bit key (Guava's ``longFunnel``, Parquet's INT64).

    :raises OverflowError: if ``key`` is not in the signed 64-bit range
    """
    return key.to_bytes(8, "little", signed=True)


def murmur3_128(data: bytes) -> tuple[int, int]:
    """``(h1, h2)``: the low and high 64 bits of MurmurHash3 x64 128 with seed 0."""
    digest = mmh3.mmh3_x64_128_digest(data, 0)
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


def xxh64(data: bytes) -> int:
    """XXH64 with seed 0."""
    return xxhash.xxh64_intdigest(data, 0)


# ------------------------------------------------------------------------------ whole arrays

_U64 = np.uint64
_C1 = _U64(0x87C37B91114253D5)
_C2 = _U64(0x4CF5AD432745937F)
_F1 = _U64(0xFF51AFD7ED558CCD)
_F2 = _U64(0xC4CEB9FE1A85EC53)
_P1 = _U64(0x9E3779B185EBCA87)
_P2 = _U64(0xC2B2AE3D27D4EB4F)
_P3 = _U64(0x165667B19E3779F9)
_P4 = _U64(0x85EBCA77C2B2AE63)
_P5 = _U64(0x27D4EB2F165667C5)
_EIGHT = _U64(8)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U64(r)) | (x >> _U64(64 - r))


def _fmix64(k: np.ndarray) -> np.ndarray:
    k = k ^ (k >> _U64(33))
    k = k * _F1
    k = k ^ (k >> _U64(33))
    k = k * _F2
    return k ^ (k >> _U64(33))


def as_long_array(keys: Iterable[int] | np.ndarray) -> np.ndarray:
    """Keys as a 1-d int64 array; refuses anything outside the signed 64-bit range."""
    if isinstance(keys, np.ndarray):
        if keys.dtype == np.int64:
            return keys.reshape(-1)
        if keys.dtype.kind == "i" or (keys.dtype.kind == "u" and keys.dtype.itemsize < 8):
            return keys.astype(np.int64).reshape(-1)
        if keys.dtype.kind == "u":
            if keys.size and int(keys.max()) > _LONG_MAX:
                raise OverflowError("a key is above the signed 64-bit range")
            return keys.astype(np.int64).reshape(-1)
        raise TypeError(f"Long keys must be integers, got an array of {keys.dtype}")
    values = list(keys)
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"Long keys must be integers, got {type(value).__name__}")
    return np.array(values, dtype=np.int64)


def murmur3_longs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(h1, h2)`` arrays of int64 ``keys``: Guava's ``hashLong`` on every element at once."""
    k1 = keys.astype(np.int64, copy=False).view(np.uint64)
    with np.errstate(over="ignore"):
        k1 = _rotl(k1 * _C1, 31) * _C2
        h1 = k1 ^ _EIGHT
        h2 = np.full_like(h1, _EIGHT)
        h1 = h1 + h2
        h2 = h2 + h1
        h1 = _fmix64(h1)
        h2 = _fmix64(h2)
        h1 = h1 + h2
        h2 = h2 + h1
    return h1, h2


def xxh64_longs(keys: np.ndarray) -> np.ndarray:
    """XXH64 of the 8 little-endian bytes of every int64 key at once."""
    lane = keys.astype(np.int64, copy=False).view(np.uint64)
    with np.errstate(over="ignore"):
        h = _P5 + _EIGHT
        h = h ^ (_rotl(lane * _P2, 31) * _P1)
        h = _rotl(h, 27) * _P1 + _P4
        h = h ^ (h >> _U64(33))
        h = h * _P2
        h = h ^ (h >> _U64(29))
        h = h * _P3
        return h ^ (h >> _U64(32))


def murmur3_strings(keys: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """``(h1, h2)`` arrays of string keys (one C hash per key, gathered in one buffer)."""
    digest = mmh3.mmh3_x64_128_digest
    joined = b"".join(digest(_utf8_key(key), 0) for key in keys)
    pairs = np.frombuffer(joined, dtype="<u8").astype(np.uint64).reshape(-1, 2)
    return pairs[:, 0].copy(), pairs[:, 1].copy()


def xxh64_strings(keys: Iterable[str]) -> np.ndarray:
    """XXH64 of every string key's UTF-8 bytes."""
    digest = xxhash.xxh64_intdigest
    return np.fromiter((digest(_utf8_key(key), 0) for key in keys), dtype=np.uint64)


def _utf8_key(key: str) -> bytes:
    if isinstance(key, str):
        return utf8(key)
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    raise TypeError(f"String keys must be str (or UTF-8 bytes), got {type(key).__name__}")
