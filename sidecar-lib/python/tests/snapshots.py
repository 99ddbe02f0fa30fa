"""A small stand-in for the operator's writer, for tests: filters, payloads, deltas, manifests,
signatures and ConfigMaps laid out as docs/snapshot-protocol.md says.

Written from the protocol document, not from the reader's code paths: the bit indexes come from
``guava_bit_indexes`` / ``split_block_index`` (checked against Java's hashes in test_hashing) and
everything else (payload bytes, delta encoding, names, JSON) is spelled out here again.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json

import numpy as np
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from bloomoperator_reader import hashing
from bloomoperator_reader.bits import guava_bit_indexes, split_block_index

NAMESPACE = "shop"


def key_bytes(key_type: str, key) -> bytes:
    return key.encode("utf-8") if key_type == "String" else int(key).to_bytes(8, "little", signed=True)


class Filter:
    """A filter under construction: bit ``p`` of the array is ``self.bits[p]``."""

    def __init__(self, layout: str, key_type: str, num_bits: int, k: int):
        self.layout, self.key_type, self.num_bits, self.k = layout, key_type, num_bits, k
        self.bits = np.zeros(num_bits, dtype=bool)

    def add(self, *keys) -> Filter:
        for key in keys:
            data = key_bytes(self.key_type, key)
            if self.layout == "Guava":
                h1, h2 = hashing.murmur3_128(data)
                for index in guava_bit_indexes(h1, h2, self.k, self.num_bits):
                    self.bits[index] = True
            else:
                block, word_bits = split_block_index(hashing.xxh64(data), self.num_bits // 256)
                for word, bit in enumerate(word_bits):
                    self.bits[block * 256 + word * 32 + bit] = True
        return self

    def copy(self) -> Filter:
        return copy.deepcopy(self)

    def payload(self) -> bytes:
        if self.layout == "Guava":
            # Guava: words of 64 bits, bit i at bit (i mod 64) of word i / 64, big-endian words.
            words = np.packbits(self.bits.reshape(-1, 64)[:, ::-1], axis=1)
            return bytes([1, self.k]) + (self.num_bits // 64).to_bytes(4, "big") + words.tobytes()
        # Parquet: 32-bit little-endian words, bit i at bit (i mod 32) of word i / 32.
        return np.packbits(self.bits.reshape(-1, 8), axis=1, bitorder="little").tobytes()


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def delta_bytes(old: Filter, new: Filter, *, count=None, k=None, words=None) -> tuple[bytes, int]:
    positions = np.flatnonzero(old.bits ^ new.bits).tolist()
    header = (
        bytes([1, new.k if k is None else k])
        + (new.num_bits // 64 if words is None else words).to_bytes(4, "big")
        + (len(positions) if count is None else count).to_bytes(8, "big")
    )
    body = bytearray()
    previous = -1
    for position in positions:
        body += encode_varint(position - previous - 1)
        previous = position
    return header + bytes(body), len(positions)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def chunk_configmap(name: str, data: bytes, *, namespace: str = NAMESPACE) -> dict:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "binaryData": {"chunk": base64.b64encode(data).decode("ascii")},
        "immutable": True,
    }


class Signer:
    def __init__(self):
        self.key = Ed25519PrivateKey.generate()
        public = self.key.public_key()
        der = public.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        self.key_id = hashlib.sha256(der).hexdigest()[:16]
        self.public_pem = public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ).decode("ascii")

    def sign(self, text: str, namespace: str = NAMESPACE, key_id: str | None = None) -> str:
        signed = (
            b"bloomoperator.io/manifest-signature/v1\n"
            + namespace.encode("utf-8")
            + b"\n"
            + text.encode("utf-8")
        )
        signature = base64.b64encode(self.key.sign(signed)).decode("ascii")
        return json.dumps(
            {"algorithm": "Ed25519", "keyId": key_id or self.key_id, "signature": signature}
        )


class Publisher:
    """Publishes versions of one filter as the operator would: chunk ConfigMaps first, then the
    manifest ConfigMap. ``configmaps`` is the namespace's current set."""

    def __init__(self, filter_name="products", *, signer: Signer | None = None, chunk_size=64):
        self.filter_name = filter_name
        self.signer = signer
        self.chunk_size = chunk_size
        self.objects: dict[str, dict] = {}
        self.published: dict | None = None  # the manifest dict of the current version
        self.filters: dict[int, Filter] = {}
        self.base: dict | None = None
        self.second = 0

    @property
    def manifest_name(self) -> str:
        return f"{self.filter_name}-bloom"

    def configmaps(self) -> list[dict]:
        return list(self.objects.values())

    def created_at(self) -> str:
        self.second += 1
        return f"2026-12-02T10:{self.second // 60:02d}:{self.second % 60:02d}.000Z"

    def _chunks(self, data: bytes, name) -> list[dict]:
        refs = []
        for i, part in enumerate(split(data, self.chunk_size)):
            self.objects[name(i)] = chunk_configmap(name(i), part)
            refs.append({"name": name(i), "bytes": len(part), "sha256": sha(part)})
        return refs

    def whole(self, version: int, bits: Filter, *, key_count=0) -> dict:
        payload = bits.payload()
        refs = self._chunks(payload, lambda i: f"{self.filter_name}-bloom-v{version}-{i}")
        manifest = {
            "format": "guava-bloomfilter-v1" if bits.layout == "Guava" else "parquet-splitblock-v1",
            "version": version,
            "filterName": self.filter_name,
            "keyType": bits.key_type,
            "numBits": bits.num_bits,
            "numHashFunctions": bits.k,
            "keyCount": key_count,
            "expectedFpp": 0.01,
            "totalBytes": len(payload),
            "sha256": sha(payload),
            "createdAt": self.created_at(),
            "chunks": refs,
        }
        self.filters[version] = bits.copy()
        self.base = manifest
        return self.announce(manifest)

    def delta(self, version: int, bits: Filter) -> dict:
        """``version`` as a delta on the published version (same geometry)."""
        previous = self.published
        assert previous is not None
        old = self.filters[previous["version"]]
        encoded, changed = delta_bytes(old, bits)
        refs = self._chunks(encoded, lambda i: f"{self.filter_name}-bloom-v{version}-d{i}")
        payload = bits.payload()
        chain = copy.deepcopy(previous.get("chain")) or {
            "baseVersion": previous["version"],
            "baseSha256": previous["sha256"],
            "deltas": [],
        }
        chain["deltas"].append(
            {"version": version, "bytes": len(encoded), "changedBits": changed,
             "sha256": sha(payload), "chunks": refs}
        )  # fmt: skip
        manifest = dict(previous)
        manifest.update(
            format="guava-bloomfilter-chain-v1" if bits.layout == "Guava"
            else "parquet-splitblock-chain-v1",
            version=version, sha256=sha(payload), createdAt=self.created_at(), chain=chain,
        )  # fmt: skip
        self.filters[version] = bits.copy()
        return self.announce(manifest)

    def announce(self, manifest: dict, *, text: str | None = None, signature=...) -> dict:
        """Writes the manifest ConfigMap (``signature``: ... signs with the signer, None omits)."""
        text = text if text is not None else json.dumps(manifest, indent=2)
        data = {"manifest.json": text}
        if signature is ...:
            signature = self.signer.sign(text) if self.signer else None
        if signature is not None:
            data["manifest.sig"] = signature
        self.objects[self.manifest_name] = {
            "metadata": {"name": self.manifest_name, "namespace": NAMESPACE,
                         "labels": {"bloomoperator.io/role": "manifest"}},
            "data": data,
        }  # fmt: skip
        self.published = manifest
        return manifest

    def set_canary(self, manifest: dict, percent: str, *, signed=True) -> None:
        text = json.dumps(manifest, indent=2)
        data = self.objects[self.manifest_name]["data"]
        data["canary.json"] = text
        data["canary.percent"] = percent
        if signed and self.signer:
            data["canary.sig"] = self.signer.sign(text)
