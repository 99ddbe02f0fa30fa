"""Why a reader did not load a snapshot: the fixed set of reasons every reader reports."""

from __future__ import annotations

import enum


class LoadFailureReason(enum.Enum):
    """The reasons of ``io.bloomoperator.snapshot.LoadFailureReason``, by the same names.

    A fixed set, not messages: messages may quote manifest content written by whoever can write
    the ConfigMap, so reports and metrics carry only these names.
    """

    API = "API"
    CHUNK = "CHUNK"
    HEAP = "HEAP"
    STORE_DENIED = "STORE_DENIED"
    STORE_UNAVAILABLE = "STORE_UNAVAILABLE"
    DISK = "DISK"
    VERIFICATION = "VERIFICATION"
    TOO_LARGE = "TOO_LARGE"
    WRONG_FILTER = "WRONG_FILTER"
    FOREIGN_CHUNK = "FOREIGN_CHUNK"
    UNSIGNED = "UNSIGNED"
    UNTRUSTED_KEY = "UNTRUSTED_KEY"
    BAD_SIGNATURE = "BAD_SIGNATURE"
    ROLLBACK = "ROLLBACK"
    TOO_OLD = "TOO_OLD"
    UNKNOWN_STORE = "UNKNOWN_STORE"

    @property
    def is_refusal(self) -> bool:
        """Decided from the manifest alone, before anything was fetched; not retried until it changes."""
        return self in _REFUSALS

    @property
    def tag_value(self) -> str:
        """The metric tag value, e.g. ``bad_signature``."""
        return self.name.lower()


_REFUSALS = frozenset(
    {
        LoadFailureReason.TOO_LARGE,
        LoadFailureReason.WRONG_FILTER,
        LoadFailureReason.FOREIGN_CHUNK,
        LoadFailureReason.UNSIGNED,
        LoadFailureReason.UNTRUSTED_KEY,
        LoadFailureReason.BAD_SIGNATURE,
        LoadFailureReason.ROLLBACK,
        LoadFailureReason.TOO_OLD,
        LoadFailureReason.UNKNOWN_STORE,
    }
)


class SnapshotError(Exception):
    """A snapshot was not loaded; :attr:`reason` says why in one of the fixed names."""

    reason: LoadFailureReason = LoadFailureReason.API

    def __init__(self, message: str, reason: LoadFailureReason | None = None):
        super().__init__(message)
        if reason is not None:
            self.reason = reason


class VerificationError(SnapshotError):
    """The manifest is unreadable, or a chunk failed its size, digest, header or key-type check."""

    reason = LoadFailureReason.VERIFICATION


class RefusedError(VerificationError):
    """The manifest was refused before anything it names was fetched."""

    def __init__(self, reason: LoadFailureReason, message: str):
        if not reason.is_refusal:
            raise ValueError(f"{reason.name} is not a refusal")
        super().__init__(message, reason)


class ChunkError(SnapshotError):
    """A chunk ConfigMap holds no chunk data, or not the announced amount, or not Base64.

    Java's reader reports these as an ``IOException`` (reason ``CHUNK``); a chunk that does not
    exist at all is a verification failure there, and here too.
    """

    reason = LoadFailureReason.CHUNK
