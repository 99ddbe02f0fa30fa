"""What a reader accepts from a manifest before it fetches a chunk or allocates the filter."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from . import names
from .errors import LoadFailureReason, RefusedError
from .manifest import MAX_BITS, ChunkRef, Manifest

MAX_CHUNK_BYTES = 1024 * 1024
"""A chunk is one ConfigMap's binaryData, which the API server limits to 1 MiB."""

DEFAULT_MAX_CHUNKS = 10_000
FORMAT_MAX_BYTES = 6 + MAX_BITS // 8


@dataclasses.dataclass(frozen=True)
class SnapshotLimits:
    """The largest payload (``totalBytes``) and chunk count (base and deltas) a reader loads."""

    max_total_bytes: int = FORMAT_MAX_BYTES
    max_chunks: int = DEFAULT_MAX_CHUNKS

    def __post_init__(self) -> None:
        if self.max_total_bytes < 1 or self.max_chunks < 1:
            raise ValueError("limits must be positive")

    def check(self, manifest: Manifest, filter_name: str) -> None:
        """Arithmetic on a validated manifest only: nothing is fetched or allocated.

        :raises RefusedError: ``WRONG_FILTER``, ``TOO_LARGE`` or ``FOREIGN_CHUNK``, checked in
            that order (as Java's ``SnapshotLimits.check``)
        """
        what = f"manifest of '{manifest.filter_name}' v{manifest.version}"
        if manifest.filter_name != filter_name:
            raise RefusedError(
                LoadFailureReason.WRONG_FILTER, f"{what} is not for filter '{filter_name}'"
            )
        if (
            manifest.total_bytes > self.max_total_bytes
            or manifest.num_bits // 8 > self.max_total_bytes
        ):
            raise RefusedError(
                LoadFailureReason.TOO_LARGE,
                f"{what} announces {manifest.total_bytes} bytes, more than this reader's limit "
                f"of {self.max_total_bytes} bytes",
            )
        # Deltas are streamed, but every byte is downloaded and digested: a chain may not cost
        # more than the reader accepts for a whole filter.
        if manifest.delta_bytes > self.max_total_bytes:
            raise RefusedError(
                LoadFailureReason.TOO_LARGE,
                f"{what} chains {manifest.delta_bytes} bytes of deltas, more than this reader's "
                f"limit of {self.max_total_bytes} bytes",
            )
        if manifest.chunk_count > self.max_chunks:
            raise RefusedError(
                LoadFailureReason.TOO_LARGE,
                f"{what} lists {manifest.chunk_count} chunks, more than this reader's limit of "
                f"{self.max_chunks}",
            )
        base = manifest.base_version
        _check_chunks(
            what, "chunk ", manifest.chunks, lambda i: names.chunk_name(filter_name, base, i)
        )
        for delta in manifest.deltas:
            _check_chunks(
                what,
                f"delta v{delta.version} chunk ",
                delta.chunks,
                lambda i, v=delta.version: names.delta_chunk_name(filter_name, v, i),
            )


def _check_chunks(
    what: str, label: str, chunks: tuple[ChunkRef, ...], canonical: Callable[[int], str]
) -> None:
    for i, chunk in enumerate(chunks):
        if chunk.bytes > MAX_CHUNK_BYTES:
            raise RefusedError(
                LoadFailureReason.TOO_LARGE,
                f"{what}: {label}{i} announces {chunk.bytes} bytes, more than a ConfigMap holds",
            )
        expected = canonical(i)
        if chunk.name != expected:
            # The name is not echoed: it is whatever the manifest's writer chose.
            raise RefusedError(
                LoadFailureReason.FOREIGN_CHUNK, f"{what}: {label}{i} is not named '{expected}'"
            )
