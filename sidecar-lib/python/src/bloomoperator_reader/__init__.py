"""Reads Bloom filter snapshots published by bloom-operator, with the Java reader's contract.

The core does no I/O: ConfigMaps come through a :class:`ConfigMapGetter` (namespace, name ->
ConfigMap mapping or None), so a Kubernetes watch, a poll, files or a test plug in.

    reader = SnapshotReader("shop", "product-ids", "String", trusted_keys=[pem])
    outcome = reader.refresh(getter)          # load / keep / refuse, with a LoadFailureReason
    reader.might_contain("sku-1")             # one key
    reader.might_contain_many(["a", "b"])     # numpy bool array, hashed and probed as arrays
"""

from .bits import BloomFilter, GuavaBits, SplitBlockBits, guava_bit_indexes, split_block_index
from .canary import bucket as canary_bucket
from .canary import in_share
from .configmaps import (
    Announced,
    AnnouncedCanary,
    ConfigMapGetter,
    ConfigMapSet,
    chunk_bytes,
    chunk_source,
    read_canary,
    read_manifest,
)
from .decoder import decode, update
from .errors import ChunkError, LoadFailureReason, RefusedError, SnapshotError, VerificationError
from .fetch import DEFAULT_FETCH_PARALLELISM, MAX_FETCH_PARALLELISM
from .limits import MAX_CHUNK_BYTES, SnapshotLimits
from .manifest import KeyType, Layout, Manifest, parse_manifest
from .names import chunk_name, delta_chunk_name, manifest_name
from .reader import (
    Acceptance,
    Action,
    NotReadyError,
    Outcome,
    ServedSnapshot,
    SnapshotReader,
    Verdict,
)
from .signature import TrustedKeys, key_id, read_public_key, signed_bytes
from .store import (
    ObjectStore,
    S3ObjectStore,
    StoreError,
    access_key_files,
    environment_credentials,
    object_key,
    static_credentials,
)

__all__ = [
    "Acceptance", "Action", "Announced", "AnnouncedCanary", "BloomFilter", "ChunkError",
    "ConfigMapGetter", "ConfigMapSet", "DEFAULT_FETCH_PARALLELISM", "GuavaBits", "KeyType",
    "Layout", "LoadFailureReason", "MAX_CHUNK_BYTES", "MAX_FETCH_PARALLELISM", "Manifest",
    "NotReadyError", "ObjectStore", "Outcome", "RefusedError",
    "S3ObjectStore", "ServedSnapshot", "SnapshotError", "SnapshotLimits", "SnapshotReader",
    "SplitBlockBits", "StoreError", "TrustedKeys", "VerificationError", "Verdict",
    "access_key_files", "canary_bucket", "chunk_bytes", "chunk_name", "chunk_source", "decode",
    "delta_chunk_name", "environment_credentials", "guava_bit_indexes", "in_share", "key_id",
    "manifest_name", "object_key", "parse_manifest", "read_canary", "read_manifest",
    "read_public_key", "signed_bytes", "split_block_index", "static_credentials", "update",
]  # fmt: skip
