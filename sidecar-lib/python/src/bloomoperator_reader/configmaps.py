"""Snapshot ConfigMaps as plain mappings, and the one seam to wherever they come from.

A ConfigMap is a mapping in the API server's JSON shape (``metadata``, ``data``,
``binaryData``: what ``kubectl get -o json`` prints and the ``kubernetes`` client's
``ApiClient().sanitize_for_serialization`` returns). The reader reads them through a
:class:`ConfigMapGetter`, so a watch, a poll, files or a test plug in without the core doing any
I/O of its own.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from . import canary, names
from .fetch import ChunkSource
from .errors import ChunkError, VerificationError
from .manifest import ChunkRef, Manifest, parse_manifest

ConfigMap = Mapping[str, Any]


class ConfigMapGetter(Protocol):
    """Returns the ConfigMap ``name`` of ``namespace``, or None if there is none.

    Anything it raises is reported as an ``API`` failure and the load is retried later.
    """

    def __call__(self, namespace: str, name: str) -> ConfigMap | None: ...


class ConfigMapSet:
    """A fixed set of ConfigMaps, looked up by namespace and name: a :class:`ConfigMapGetter`."""

    def __init__(self, configmaps: Iterable[ConfigMap] = ()):
        self._by_key: dict[tuple[str, str], ConfigMap] = {}
        for configmap in configmaps:
            metadata = configmap.get("metadata") or {}
            self._by_key[(metadata.get("namespace", ""), metadata["name"])] = configmap

    def __call__(self, namespace: str, name: str) -> ConfigMap | None:
        return self._by_key.get((namespace, name))


@dataclasses.dataclass(frozen=True)
class Announced:
    """A parsed manifest with the exact text it came from (what a signature covers) and its
    signature data (None when unsigned)."""

    manifest: Manifest
    json: str
    signature: str | None

    @property
    def version(self) -> int:
        return self.manifest.version

    def same_snapshot(self, other: Announced | None) -> bool:
        return other is not None and self.manifest.same_snapshot(other.manifest)


@dataclasses.dataclass(frozen=True)
class AnnouncedCanary:
    announced: Announced
    percent: int

    def includes(self, pod_name: str | None) -> bool:
        return canary.in_share(pod_name, self.percent)


def _data(configmap: ConfigMap) -> Mapping[str, Any]:
    data = configmap.get("data")
    return data if isinstance(data, Mapping) else {}


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def read_manifest(configmap: ConfigMap) -> Announced:
    """The stable manifest of a manifest ConfigMap.

    :raises VerificationError: no ``manifest.json``, or not a valid manifest
    """
    data = _data(configmap)
    text = _text(data, names.MANIFEST_DATA_KEY)
    if text is None:
        raise VerificationError(f"manifest ConfigMap has no data key '{names.MANIFEST_DATA_KEY}'")
    return Announced(parse_manifest(text), text, _text(data, names.SIGNATURE_DATA_KEY))


def read_canary(configmap: ConfigMap) -> AnnouncedCanary | None:
    """The canary announced beside the stable manifest, or None when there is none.

    :raises VerificationError: a canary with a share that is not 1..100 in plain digits, or an
        invalid canary manifest
    """
    data = _data(configmap)
    text = _text(data, names.CANARY_MANIFEST_DATA_KEY)
    if text is None:
        return None
    percent = canary.parse_percent(_text(data, names.CANARY_PERCENT_DATA_KEY))
    if percent < 1:
        raise VerificationError(
            f"canary share '{names.CANARY_PERCENT_DATA_KEY}' is missing or not a whole percent "
            "1..100"
        )
    signature = _text(data, names.CANARY_SIGNATURE_DATA_KEY)
    return AnnouncedCanary(Announced(parse_manifest(text), text, signature), percent)


def chunk_bytes(configmap: ConfigMap, expected_bytes: int, where: str) -> bytes:
    """The bytes of a chunk ConfigMap announced as ``expected_bytes`` long.

    The Base64 length is checked before decoding, so a replaced chunk cannot make the reader
    decode more than the manifest announced (which the limits bounded); size and digest are the
    decoder's to check.

    :raises ChunkError: no ``binaryData.chunk``, another length, or not Base64
    """
    binary = configmap.get("binaryData")
    text = binary.get(names.CHUNK_DATA_KEY) if isinstance(binary, Mapping) else None
    if not isinstance(text, str):
        raise ChunkError(f"{where} has no binaryData key '{names.CHUNK_DATA_KEY}'")
    expected_length = 4 * ((expected_bytes + 2) // 3)
    if len(text) != expected_length:
        raise ChunkError(
            f"{where} holds {len(text)} base64 characters, the manifest announces "
            f"{expected_bytes} bytes ({expected_length} characters)"
        )
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ChunkError(f"{where} is not valid base64") from None


def chunk_source(configmaps: ConfigMapGetter, namespace: str) -> ChunkSource:
    """Reads chunks by name from ``configmaps``: one lookup per chunk, a missing one as None."""

    def load(index: int, ref: ChunkRef) -> bytes | None:
        configmap = configmaps(namespace, ref.name)
        if configmap is None:
            return None
        return chunk_bytes(configmap, ref.bytes, f"chunk ConfigMap {namespace}/{ref.name}")

    return load
