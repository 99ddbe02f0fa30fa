"""Load time of a 32 MiB filter in 32 chunks of 1 MiB, one chunk at a time and 4 at once: the
Python counterpart of the Go reader's ``BenchmarkLoadChunks`` (sidecar-lib/go/fetch_test.go).

Chunks are Base64 in ConfigMap mappings, as the API server sends them, behind an in-process getter
that waits a fixed time per GET standing for the round trip (not a real API server: the figure
isolates what fetching ahead changes). Each load decodes the Base64, checks every chunk's size
and SHA-256, copies the payload into the filter's array and checks the payload's SHA-256.

    cd sidecar-lib/python && .venv/bin/python tests/bench_load_chunks.py [loads per case, 5]

Not collected by pytest (not a ``test_`` module).
"""

from __future__ import annotations

import json
import os
import pathlib
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "src"))

from bloomoperator_reader import (  # noqa: E402
    DEFAULT_FETCH_PARALLELISM,
    MAX_CHUNK_BYTES,
    Action,
    ConfigMapSet,
    SnapshotReader,
)
from snapshots import NAMESPACE, chunk_configmap, sha, split  # noqa: E402

FILTER = "ids"


def configmaps() -> ConfigMapSet:
    """A Guava payload of 32 MiB - 2 bytes (6-byte header, 32 MiB - 8 bytes of words) as Go's
    benchmark publishes it, in 32 chunks of at most 1 MiB."""
    num_words = 32 * MAX_CHUNK_BYTES // 8 - 1
    payload = bytes([1, 7]) + num_words.to_bytes(4, "big") + os.urandom(num_words * 8)
    objects, refs = [], []
    for i, part in enumerate(split(payload, MAX_CHUNK_BYTES)):
        name = f"{FILTER}-bloom-v1-{i}"
        objects.append(chunk_configmap(name, part))
        refs.append({"name": name, "bytes": len(part), "sha256": sha(part)})
    assert len(refs) == 32
    manifest = {
        "format": "guava-bloomfilter-v1", "version": 1, "filterName": FILTER, "keyType": "String",
        "numBits": num_words * 64, "numHashFunctions": 7, "keyCount": 1_000_000,
        "expectedFpp": 0.01, "totalBytes": len(payload), "sha256": sha(payload),
        "createdAt": "2026-12-03T10:00:00.000Z", "chunks": refs,
    }  # fmt: skip
    objects.append({"metadata": {"name": f"{FILTER}-bloom", "namespace": NAMESPACE},
                    "data": {"manifest.json": json.dumps(manifest)}})  # fmt: skip
    return ConfigMapSet(objects)


def main() -> None:
    loads = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    backing = configmaps()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {loads} loads per case")
    for delay in (0.0, 0.005):

        def getter(namespace: str, name: str, delay=delay):
            if delay:
                time.sleep(delay)
            return backing(namespace, name)

        for parallel in (1, DEFAULT_FETCH_PARALLELISM):
            times = []
            for _ in range(loads):
                reader = SnapshotReader(NAMESPACE, FILTER, "String", fetch_parallelism=parallel)
                start = time.perf_counter()
                outcome = reader.refresh(getter)
                times.append(time.perf_counter() - start)
                assert outcome.action is Action.LOAD, outcome
            print(
                f"rtt={delay * 1000:g}ms parallel={parallel}: "
                f"mean {statistics.mean(times) * 1000:.0f} ms, "
                f"min {min(times) * 1000:.0f} ms per load"
            )


if __name__ == "__main__":
    main()
