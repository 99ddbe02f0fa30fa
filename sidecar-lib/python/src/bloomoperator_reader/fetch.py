"""Fetching a manifest's chunks, a few at once, each checked as it arrives and used in order.

The counterpart of the Go reader's ``fetchChunks``: up to ``parallel`` chunks are fetched at once
on a small thread pool (one per load), each chunk is checked (present, announced size, SHA-256)
on the thread that fetched it, and the caller gets them strictly in manifest order. A chunk's
fetch starts only when it is fewer than ``parallel`` places ahead of the chunk used next, so at
most ``parallel`` chunks are held at once, each no larger than the limits let a chunk announce
(1 MiB; the Base64 length of a ConfigMap chunk and the size of a store object are checked before
they are decoded or read). The first failure (a fetch, a check, or the caller's use of a chunk)
cancels the fetches not started yet, and the load waits for those under way before it returns,
so no fetch outlives it.

Python cannot interrupt a request blocked in another thread: a GET under way when another chunk
fails runs to its end (or its timeout) and its bytes are dropped unused.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import threading
from collections.abc import Callable, Sequence

from .errors import VerificationError
from .manifest import ChunkRef

ChunkSource = Callable[[int, ChunkRef], "bytes | None"]
"""Returns the bytes of chunk ``index`` (described by the ref), or None if it does not exist.

Called from up to ``fetch_parallelism`` threads at once: it must be safe for concurrent use."""

DEFAULT_FETCH_PARALLELISM = 4
"""Chunks fetched at once unless the reader is told otherwise (the Go and Java readers' 4)."""

MAX_FETCH_PARALLELISM = 16
"""The most chunks fetched at once: each is held in memory (up to 1 MiB, plus a ConfigMap's Base64
text while it is decoded) and each is a request the API server or store serves at the same time."""


def fetch_parallelism(value: object) -> int:
    """``value`` if it is a whole number 1..:data:`MAX_FETCH_PARALLELISM`.

    :raises ValueError: anything else (``bool``, fractions and text included)
    """
    whole = isinstance(value, int) and not isinstance(value, bool)
    if not whole or not 1 <= value <= MAX_FETCH_PARALLELISM:  # type: ignore[operator]
        raise ValueError(
            f"fetch_parallelism must be a whole number 1..{MAX_FETCH_PARALLELISM}, got {value!r}"
        )
    return value


def check_chunk(ref: ChunkRef, data: bytes | None, where: str) -> bytes:
    """The chunk exists, has the announced size and SHA-256."""
    if data is None:
        raise VerificationError(f"{where} is missing")
    if len(data) != ref.bytes:
        raise VerificationError(
            f"{where}: size mismatch: manifest says {ref.bytes} bytes, got {len(data)}"
        )
    actual = hashlib.sha256(data).hexdigest()
    if actual != ref.sha256.lower():
        raise VerificationError(
            f"{where}: sha256 mismatch: manifest says {ref.sha256}, computed {actual}"
        )
    return data


class _Cancelled(Exception):
    """A fetch not started because another chunk had already failed."""


def fetch_chunks(
    refs: Sequence[ChunkRef],
    source: ChunkSource,
    parallel: int,
    where: Callable[[int], str],
    use: Callable[[int, bytes], None],
) -> None:
    """Hands every chunk of ``refs`` to ``use`` in order, checked, ``parallel`` fetched at once.

    ``where(i)`` names chunk ``i`` in errors. With ``parallel`` 1 (or a single chunk) it is the
    plain loop on the calling thread.

    :raises Exception: the first failure: what ``source`` or ``use`` raised, or the
        :class:`VerificationError` of a chunk that is missing or not the announced bytes
    """
    if parallel <= 1 or len(refs) <= 1:
        for i, ref in enumerate(refs):
            use(i, check_chunk(ref, source(i, ref), where(i)))
        return
    failed = threading.Event()
    lock = threading.Lock()
    first: list[BaseException] = []

    def fetch(i: int) -> bytes:
        if failed.is_set():
            raise _Cancelled()
        try:
            return check_chunk(refs[i], source(i, refs[i]), where(i))
        except BaseException as e:
            with lock:
                if not first:
                    first.append(e)
            failed.set()
            raise

    executor = concurrent.futures.ThreadPoolExecutor(
        max_workers=min(parallel, len(refs)), thread_name_prefix="bloom-chunk-fetch"
    )
    pending: dict[int, concurrent.futures.Future[bytes]] = {}
    started = 0
    try:
        for i in range(len(refs)):
            while started < len(refs) and started < i + parallel:
                pending[started] = executor.submit(fetch, started)
                started += 1
            future = pending.pop(i)
            # Wait for chunk i, but not past another chunk's failure.
            while not failed.is_set() and not future.done():
                running = [f for f in pending.values() if not f.done()]
                concurrent.futures.wait(
                    [future, *running], return_when=concurrent.futures.FIRST_COMPLETED
                )
            if failed.is_set():
                raise first[0]
            data = future.result()
            del future  # a finished future holds its result: keep only one reference
            use(i, data)
            del data  # released before the next fetch starts: at most ``parallel`` held
    finally:
        failed.set()  # fetches not started yet find it and do nothing
        for future in pending.values():
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)
