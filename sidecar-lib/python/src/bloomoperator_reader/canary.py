"""Which readers belong to a canary share (docs/reader-protocol.md, ``CanaryShare`` in Java)."""

from __future__ import annotations

import hashlib

BUCKETS = 100


def bucket(pod_name: str) -> int:
    """The first four bytes of SHA-256 of the pod name (UTF-8), unsigned big-endian, modulo 100."""
    if not pod_name:
        raise ValueError("a canary share needs the reader's pod name")
    digest = hashlib.sha256(pod_name.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % BUCKETS


def in_share(pod_name: str | None, percent: int) -> bool:
    """Whether the reader in pod ``pod_name`` is in a share of ``percent`` %.

    A reader that does not know its pod name is in no share: it stays on the stable version.
    """
    if not pod_name or not 0 < percent <= BUCKETS:
        return False
    return bucket(pod_name) < percent


def parse_percent(text: str | None) -> int:
    """The share 1..100 from plain decimal digits (at most three), or 0 for anything else."""
    if text is None or not 0 < len(text) <= 3 or not all("0" <= c <= "9" for c in text):
        return 0
    percent = int(text)
    return percent if 1 <= percent <= BUCKETS else 0
