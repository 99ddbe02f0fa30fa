"""The manifest ConfigMap's ``manifest.json``: which chunks make up a version and how to check them.

Parsing is as strict as Java's reader about what is there (a missing or null required field, a
fraction where an integer belongs, a value outside the Java type's range, trailing text) and
lenient about what is not ours (unknown fields are ignored: newer writers may add some).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import re
from typing import Any

from . import names
from .errors import VerificationError


class KeyType(enum.Enum):
    """How keys are hashed; the manifest spells them ``String`` and ``Long``."""

    STRING = "String"
    LONG = "Long"


class Layout(enum.Enum):
    """How the bits are laid out: Guava's ``writeTo`` or Parquet's split-block bitset."""

    GUAVA = "Guava"
    SPLIT_BLOCK = "SplitBlock"

    @property
    def header_bytes(self) -> int:
        return 6 if self is Layout.GUAVA else 0

    def payload_bytes(self, num_bits: int) -> int:
        return self.header_bytes + num_bits // 8


FORMAT = "guava-bloomfilter-v1"
FORMAT_CHAIN = "guava-bloomfilter-chain-v1"
FORMAT_SPLIT_BLOCK = "parquet-splitblock-v1"
FORMAT_SPLIT_BLOCK_CHAIN = "parquet-splitblock-chain-v1"

_LAYOUT_OF_FORMAT = {
    FORMAT: Layout.GUAVA,
    FORMAT_CHAIN: Layout.GUAVA,
    FORMAT_SPLIT_BLOCK: Layout.SPLIT_BLOCK,
    FORMAT_SPLIT_BLOCK_CHAIN: Layout.SPLIT_BLOCK,
}
_CHAIN_FORMATS = frozenset({FORMAT_CHAIN, FORMAT_SPLIT_BLOCK_CHAIN})

MAX_BITS = (2**31 - 1) * 64
"""Guava's format counts words in a signed 32-bit int."""
MAX_HASH_FUNCTIONS = 255
SPLIT_BLOCK_BITS_PER_KEY = 8
SPLIT_BLOCK_BYTES_PER_BLOCK = 32
SPLIT_BLOCK_MAX_BLOCKS = (2**31 - 1 - 8) // 4

_INT = (-(2**31), 2**31 - 1)
_LONG = (-(2**63), 2**63 - 1)
_STORE_NAME = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")


def is_hex64(value: object) -> bool:
    return isinstance(value, str) and _HEX64.fullmatch(value) is not None


@dataclasses.dataclass(frozen=True)
class ChunkRef:
    """One chunk: its ConfigMap name, byte count and SHA-256 (hex)."""

    name: str
    bytes: int
    sha256: str


@dataclasses.dataclass(frozen=True)
class Delta:
    """The bits that changed from the version before to ``version``.

    ``sha256`` is that of the whole payload of ``version``, so a reader checks what it ends up
    serving, not only what it downloaded.
    """

    version: int
    bytes: int
    changed_bits: int
    sha256: str
    chunks: tuple[ChunkRef, ...]


@dataclasses.dataclass(frozen=True)
class Chain:
    base_version: int
    base_sha256: str
    deltas: tuple[Delta, ...]


@dataclasses.dataclass(frozen=True)
class Manifest:
    """A parsed and validated manifest. ``chunks`` hold the base's payload when ``chain`` is set."""

    format: str
    version: int
    filter_name: str
    key_type: KeyType
    num_bits: int
    num_hash_functions: int
    key_count: int
    expected_fpp: float
    total_bytes: int
    sha256: str
    created_at: str
    chunks: tuple[ChunkRef, ...]
    chain: Chain | None = None
    store: str | None = None

    @property
    def layout(self) -> Layout:
        return _LAYOUT_OF_FORMAT[self.format]

    @property
    def chained(self) -> bool:
        return self.chain is not None

    @property
    def base_version(self) -> int:
        return self.version if self.chain is None else self.chain.base_version

    @property
    def base_sha256(self) -> str:
        return self.sha256 if self.chain is None else self.chain.base_sha256

    @property
    def deltas(self) -> tuple[Delta, ...]:
        return () if self.chain is None else self.chain.deltas

    @property
    def delta_bytes(self) -> int:
        return sum(delta.bytes for delta in self.deltas)

    @property
    def chunk_count(self) -> int:
        return len(self.chunks) + sum(len(delta.chunks) for delta in self.deltas)

    @property
    def num_words(self) -> int:
        """64-bit words: ``numBits / 64`` in both layouts (what a delta header counts)."""
        return self.num_bits // 64

    @property
    def created(self) -> tuple[int, int]:
        """``createdAt`` as (epoch seconds, nanoseconds): what orders publications."""
        instant = parse_instant(self.created_at)
        assert instant is not None, "validated manifests have an RFC 3339 createdAt"
        return instant

    def published_after(self, other: Manifest) -> bool:
        """Created later, or at the same instant with a higher version (older operators wrote
        whole seconds). A re-created filter's version 1 is thereby newer than the old filter's
        last version, while a replayed older manifest is not."""
        mine, theirs = self.created, other.created
        return mine > theirs or (mine == theirs and self.version > other.version)

    def same_snapshot(self, other: Manifest | None) -> bool:
        """Version and payload digest agree (a re-created filter counts from 1 again)."""
        return (
            other is not None
            and self.version == other.version
            and self.sha256.lower() == other.sha256.lower()
        )

    def deltas_after(self, held_version: int, held_sha256: str | None) -> tuple[Delta, ...] | None:
        """The deltas that take a reader holding ``held_version`` (payload ``held_sha256``) to this
        version; ``()`` if it holds this version, None if the held one is not in this chain."""
        if held_sha256 is None:
            return None
        held = held_sha256.lower()
        if held_version == self.version and held == self.sha256.lower():
            return ()
        if self.chain is None:
            return None
        if held_version == self.chain.base_version and held == self.chain.base_sha256.lower():
            return self.chain.deltas
        for i, delta in enumerate(self.chain.deltas):
            if delta.version == held_version and delta.sha256.lower() == held:
                return self.chain.deltas[i + 1 :]
        return None


# ------------------------------------------------------------------------------------ parsing


def parse_manifest(text: str | None) -> Manifest:
    """Parses and validates ``manifest.json``.

    :raises VerificationError: malformed JSON, a missing, null or mistyped field, or values that
        do not fit together
    """
    if text is None or not text.strip():
        raise VerificationError("manifest is empty")
    tree = _load_json(text, "manifest")
    if tree is None:
        raise VerificationError("manifest is JSON null")
    if not isinstance(tree, dict):
        raise VerificationError("manifest is not a JSON object")
    fields = _Fields(tree, "")
    manifest = Manifest(
        format=fields.string("format"),
        version=fields.integer("version", _LONG),
        filter_name=fields.string("filterName"),
        key_type=fields.key_type("keyType"),
        num_bits=fields.integer("numBits", _LONG),
        num_hash_functions=fields.integer("numHashFunctions", _INT),
        key_count=fields.integer("keyCount", _LONG),
        expected_fpp=fields.double("expectedFpp"),
        total_bytes=fields.integer("totalBytes", _LONG),
        sha256=fields.string("sha256"),
        created_at=fields.string("createdAt"),
        chunks=fields.chunk_list("chunks"),
        chain=_parse_chain(tree.get("chain")),
        store=_parse_store(tree.get("store")),
    )
    validate(manifest)
    return manifest


class _JsonInt(int):
    """A JSON integer that remembers its text (Java reads a number into a String field as it)."""

    text: str


class _JsonFloat(float):
    text: str


def _json_int(text: str) -> _JsonInt:
    value = _JsonInt(text)
    value.text = text
    return value


def _json_float(text: str) -> _JsonFloat:
    value = _JsonFloat(text)
    value.text = text
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_json(text: str) -> Any:
    """JSON as Java's mapper reads it: no NaN/Infinity literals, numbers keep their text.

    :raises ValueError: if it is not JSON
    """
    try:
        return json.loads(
            text, parse_int=_json_int, parse_float=_json_float, parse_constant=_no_constant
        )
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


def _load_json(text: str, what: str) -> Any:
    try:
        return load_json(text)
    except ValueError as e:
        raise VerificationError(f"invalid {what} JSON: {e}") from None


def scalar_text(value: Any) -> str | None:
    """A JSON scalar as Java's mapper binds it to a String field: a string as is, a number as
    its text, a boolean as ``true``/``false``; None for null, objects and arrays."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (_JsonInt, _JsonFloat)):
        return value.text
    if isinstance(value, (int, float)):
        return repr(value)
    return None


# Java's mapper also reads numbers from strings: trimmed, an optional sign and decimal digits
# for integers (Long.parseLong, which takes any Unicode digits); Double.parseDouble's grammar
# for doubles. What it reads this way, this reader reads the same.
_INTEGER_TEXT = re.compile(r"[+-]?\d+")
_DOUBLE_TEXT = re.compile(
    r"[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?)"
)
_HEX_DOUBLE_TEXT = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?"
)


def _java_trim(text: str) -> str:
    return text.strip("".join(chr(c) for c in range(0x21)))


def _integer_from_text(text: str) -> int | None:
    trimmed = _java_trim(text)
    return int(trimmed) if _INTEGER_TEXT.fullmatch(trimmed) else None


def _double_from_text(text: str) -> float | None:
    trimmed = _java_trim(text)
    if _DOUBLE_TEXT.fullmatch(trimmed):
        return float(trimmed.rstrip("fFdD"))
    if _HEX_DOUBLE_TEXT.fullmatch(trimmed):
        return float.fromhex(trimmed.rstrip("fFdD"))
    return None


def _parse_chain(node: Any) -> Chain | None:
    if node is None:
        return None
    if not isinstance(node, dict):
        raise VerificationError("invalid manifest JSON at 'chain': not an object")
    fields = _Fields(node, "chain.")
    deltas_node = fields.required("deltas")
    if not isinstance(deltas_node, list):
        raise VerificationError("invalid manifest JSON at 'chain.deltas': not an array")
    deltas = []
    for i, item in enumerate(deltas_node):
        if item is None:
            deltas.append(None)
            continue
        if not isinstance(item, dict):
            raise VerificationError(f"invalid manifest JSON at 'chain.deltas[{i}]': not an object")
        d = _Fields(item, f"chain.deltas[{i}].")
        deltas.append(
            Delta(
                version=d.integer("version", _LONG),
                bytes=d.integer("bytes", _LONG),
                changed_bits=d.integer("changedBits", _LONG),
                sha256=d.string("sha256"),
                chunks=d.chunk_list("chunks"),
            )
        )
    return Chain(
        base_version=fields.integer("baseVersion", _LONG),
        base_sha256=fields.string("baseSha256"),
        deltas=tuple(deltas),  # type: ignore[arg-type]  # nulls are refused by validate()
    )


def _parse_store(node: Any) -> str | None:
    if node is None:
        return None
    if not isinstance(node, str):
        raise VerificationError("invalid manifest JSON at 'store': not a string")
    return node


class _Fields:
    """Required fields of one JSON object, each of exactly its Java type."""

    def __init__(self, node: dict[str, Any], path: str):
        self._node = node
        self._path = path

    def _fail(self, name: str, problem: str) -> VerificationError:
        return VerificationError(f"invalid manifest JSON at '{self._path}{name}': {problem}")

    def required(self, name: str) -> Any:
        value = self._node.get(name)
        if value is None:
            raise self._fail(name, "missing or null")
        return value

    def string(self, name: str) -> str:
        value = scalar_text(self.required(name))
        if value is None:
            raise self._fail(name, "not a string")
        return value

    def integer(self, name: str, bounds: tuple[int, int]) -> int:
        value = self.required(name)
        if isinstance(value, str):
            value = _integer_from_text(value)
        # A fraction is no integer, even 7.0: Java's mapper refuses floats for integer fields.
        if value is None or isinstance(value, (bool, float)) or not isinstance(value, int):
            raise self._fail(name, "not an integer")
        if not bounds[0] <= value <= bounds[1]:
            raise self._fail(name, "out of range")
        return int(value)

    def double(self, name: str) -> float:
        value = self.required(name)
        if isinstance(value, str):
            value = _double_from_text(value)
        if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._fail(name, "not a number")
        try:
            return float(value)
        except OverflowError:
            raise self._fail(name, "out of range") from None

    def key_type(self, name: str) -> KeyType:
        value = self.string(name)
        try:
            return KeyType(value)
        except ValueError:
            raise self._fail(name, 'expected one of "String", "Long"') from None

    def chunk_list(self, name: str) -> tuple[ChunkRef, ...]:
        value = self.required(name)
        if not isinstance(value, list):
            raise self._fail(name, "not an array")
        refs = []
        for i, item in enumerate(value):
            if item is None:
                refs.append(None)
                continue
            if not isinstance(item, dict):
                raise self._fail(f"{name}[{i}]", "not an object")
            c = _Fields(item, f"{self._path}{name}[{i}].")
            refs.append(ChunkRef(c.string("name"), c.integer("bytes", _INT), c.string("sha256")))
        return tuple(refs)  # type: ignore[arg-type]  # nulls are refused by validate()


# --------------------------------------------------------------------------------- validation


def validate(m: Manifest) -> None:
    """Checks every field and their consistency, naming the first that is wrong (as Java's
    ``Manifest.validate``, in the same order)."""

    def fail(problem: str) -> VerificationError:
        return VerificationError(f"manifest of '{m.filter_name}' v{m.version}: {problem}")

    layout = _LAYOUT_OF_FORMAT.get(m.format)
    if layout is None:
        raise fail(f"format is '{m.format}', this reader does not know it")
    if not names.valid_version(m.version):
        raise fail(f"version must be in {names.MIN_VERSION}..{names.MAX_VERSION}")
    if not m.filter_name.strip():
        raise fail("filterName is missing")
    if m.num_bits <= 0 or m.num_bits % 64 != 0 or m.num_bits > MAX_BITS:
        raise fail(f"numBits must be a positive multiple of 64 up to {MAX_BITS}")
    if not 1 <= m.num_hash_functions <= MAX_HASH_FUNCTIONS:
        raise fail("numHashFunctions must be in 1..255")
    block_bits = SPLIT_BLOCK_BYTES_PER_BLOCK * 8
    if layout is Layout.SPLIT_BLOCK and (
        m.num_hash_functions != SPLIT_BLOCK_BITS_PER_KEY
        or m.num_bits % block_bits != 0
        or m.num_bits // block_bits > SPLIT_BLOCK_MAX_BLOCKS
    ):
        raise fail("a split-block filter has numHashFunctions 8 and whole 256-bit blocks")
    if m.key_count < 0:
        raise fail("keyCount must be >= 0")
    if not 0.0 <= m.expected_fpp <= 1.0:
        raise fail("expectedFpp must be in [0, 1]")
    if m.total_bytes != layout.payload_bytes(m.num_bits):
        raise fail(f"totalBytes is {m.total_bytes} but numBits {m.num_bits} needs another size")
    if not is_hex64(m.sha256):
        raise fail("sha256 must be 64 hex digits")
    if parse_instant(m.created_at) is None:
        raise fail("createdAt is not an RFC 3339 timestamp")
    if _validate_chunks(fail, "chunks", m.chunks) != m.total_bytes:
        raise fail("chunk sizes do not add up to totalBytes")
    if m.store is not None and _STORE_NAME.fullmatch(m.store) is None:
        raise fail("store must be a DNS label")
    chain_format = m.format in _CHAIN_FORMATS
    if not chain_format and m.chain is not None:
        raise fail(f"format '{m.format}' has no chain")
    if chain_format:
        _validate_chain(m, fail)


def _validate_chain(m: Manifest, fail: Any) -> None:
    chain = m.chain
    if chain is None:
        raise fail(f"format '{m.format}' needs a chain")
    if not names.MIN_VERSION <= chain.base_version < m.version:
        raise fail(f"chain.baseVersion must be in {names.MIN_VERSION}..{m.version - 1}")
    if not is_hex64(chain.base_sha256):
        raise fail("chain.baseSha256 must be 64 hex digits")
    if not chain.deltas:
        raise fail("chain.deltas is missing or empty")
    previous = chain.base_version
    for i, delta in enumerate(chain.deltas):
        where = f"chain.deltas[{i}]"
        if delta is None:
            raise fail(f"{where} is null")
        if delta.version <= previous:
            raise fail(f"{where}.version must be above {previous}")
        previous = delta.version
        if not 0 <= delta.changed_bits <= m.num_bits:
            raise fail(f"{where}.changedBits must be in 0..{m.num_bits}")
        if not is_hex64(delta.sha256):
            raise fail(f"{where}.sha256 must be 64 hex digits")
        if _validate_chunks(fail, f"{where}.chunks", delta.chunks) != delta.bytes:
            raise fail(f"{where}: chunk sizes do not add up to bytes")
    last = chain.deltas[-1]
    if last.version != m.version or last.sha256.lower() != m.sha256.lower():
        raise fail("the last delta must produce this version")


def _validate_chunks(fail: Any, field: str, refs: tuple[ChunkRef, ...]) -> int:
    if not refs:
        raise fail(f"{field} is missing or empty")
    total = 0
    for i, chunk in enumerate(refs):
        where = f"{field}[{i}]"
        if chunk is None:
            raise fail(f"{where} is null")
        if not chunk.name.strip():
            raise fail(f"{where}.name is missing")
        if chunk.bytes < 1:
            raise fail(f"{where}.bytes must be >= 1")
        if not is_hex64(chunk.sha256):
            raise fail(f"{where}.sha256 must be 64 hex digits")
        total += chunk.bytes
    return total


# ------------------------------------------------------------------------------------ instants

# What Java's ISO_OFFSET_DATE_TIME accepts (checked against it): case-insensitive 'T' and 'Z',
# seconds and fraction (up to 9 digits, possibly none) optional, offsets +HH, +HH:MM, +HH:MM:SS.
# Years beyond 0001..9999 (which Java also reads) are not read here.
_INSTANT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{0,9}))?)?"
    r"(?:([Zz])|([+-])(\d{2})(?::(\d{2})(?::(\d{2}))?)?)"
)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def parse_instant(text: str) -> tuple[int, int] | None:
    """An RFC 3339 timestamp as (epoch seconds, nanoseconds), or None if it is not one."""
    match = _INSTANT.fullmatch(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, zulu, sign, oh, om, os_ = match.groups()
    offset = 0
    if zulu is None:
        oh_i, om_i, os_i = int(oh), int(om or 0), int(os_ or 0)
        if oh_i > 18 or om_i > 59 or os_i > 59 or oh_i * 3600 + om_i * 60 + os_i > 18 * 3600:
            return None
        offset = (oh_i * 3600 + om_i * 60 + os_i) * (-1 if sign == "-" else 1)
    try:
        local = _dt.datetime(
            int(year), int(month), int(day), int(hour), int(minute), int(second or 0),
            tzinfo=_dt.timezone.utc,
        )
    except ValueError:
        return None
    seconds = (local - _EPOCH) // _dt.timedelta(seconds=1) - offset
    nanos = int((fraction or "").ljust(9, "0") or 0)
    return seconds, nanos
