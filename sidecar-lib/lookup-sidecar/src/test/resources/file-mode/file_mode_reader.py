#!/usr/bin/env python3
"""A process of the pod that reads the lookup sidecar's file mode without HTTP, written from the
sidecar README's reader contract alone (standard library only): read the manifest file, open the
payload it names in the same directory, check its size and SHA-256 against the manifest on the
memory-mapped bytes, and only then answer lookups from the mapping (Guava layout, String keys, as
docs/snapshot-protocol.md defines them).

It runs until STOP_FILE exists and writes one JSON line to OUT_FILE each time what it observes
changes: {"version": v, "accepted": true, "answers": "0110..."} for a mapping it verified (the
answers of the probe keys, in order), or {"version": v, "accepted": false, "why": ...} for one it
refused. Every pass re-reads the manifest and re-verifies the mapping, so a payload changed under
an open mapping (a torn or tampered file) is refused, never answered from.

usage: file_mode_reader.py DIR NAMESPACE.FILTER PROBES_FILE OUT_FILE STOP_FILE
"""
import hashlib
import json
import mmap
import os
import struct
import sys
import time

MASK64 = (1 << 64) - 1
C1 = 0x87C37B91114253D5
C2 = 0x4CF5AD432745937F


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK64


def _fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & MASK64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & MASK64
    k ^= k >> 33
    return k


def murmur3_x64_128(data):
    """MurmurHash3 x64 128, seed 0: (h1, h2) as unsigned 64-bit integers."""
    h1 = h2 = 0
    n = len(data)
    blocks = n // 16
    for i in range(blocks):
        k1, k2 = struct.unpack_from("<QQ", data, i * 16)
        k1 = (k1 * C1) & MASK64
        k1 = _rotl(k1, 31)
        k1 = (k1 * C2) & MASK64
        h1 ^= k1
        h1 = _rotl(h1, 27)
        h1 = (h1 + h2) & MASK64
        h1 = (h1 * 5 + 0x52DCE729) & MASK64
        k2 = (k2 * C2) & MASK64
        k2 = _rotl(k2, 33)
        k2 = (k2 * C1) & MASK64
        h2 ^= k2
        h2 = _rotl(h2, 31)
        h2 = (h2 + h1) & MASK64
        h2 = (h2 * 5 + 0x38495AB5) & MASK64
    tail = data[blocks * 16:]
    k1 = k2 = 0
    for i in range(len(tail) - 1, 7, -1):
        k2 ^= tail[i] << ((i - 8) * 8)
    if len(tail) > 8:
        k2 = (k2 * C2) & MASK64
        k2 = _rotl(k2, 33)
        k2 = (k2 * C1) & MASK64
        h2 ^= k2
    for i in range(min(len(tail), 8) - 1, -1, -1):
        k1 ^= tail[i] << (i * 8)
    if len(tail) > 0:
        k1 = (k1 * C1) & MASK64
        k1 = _rotl(k1, 31)
        k1 = (k1 * C2) & MASK64
        h1 ^= k1
    h1 ^= n
    h2 ^= n
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & MASK64
    h2 = (h2 + h1) & MASK64
    return h1, h2


class Mapped:
    """A verified Guava-layout payload, mapped read-only."""

    def __init__(self, mapping, manifest):
        if mapping[0] != 1:
            raise ValueError("not the MURMUR128_MITZ_64 strategy")
        self.k = mapping[1]
        words = struct.unpack_from(">i", mapping, 2)[0]
        if 6 + 8 * words != len(mapping) or 64 * words != manifest["numBits"]:
            raise ValueError("header disagrees with the manifest")
        self.mapping = mapping
        self.bits = 64 * words

    def might_contain(self, key):
        h1, h2 = murmur3_x64_128(key.encode("utf-8"))
        combined = h1
        for _ in range(self.k):
            index = (combined & 0x7FFFFFFFFFFFFFFF) % self.bits
            word = struct.unpack_from(">Q", self.mapping, 6 + 8 * (index >> 6))[0]
            if not (word >> (index & 63)) & 1:
                return False
            combined = (combined + h2) & MASK64
        return True


def observe(directory, name, probes, answered):
    """One pass of the contract: (version, accepted, answers or reason). `answered` keeps the
    answers of the last verified file (by version, inode and change time), so that a pass over an
    unchanged file re-verifies it without asking every probe again."""
    with open(os.path.join(directory, name + ".manifest.json"), "rb") as f:
        root = json.loads(f.read(1 << 20))
    manifest = root["manifest"]
    # The name only, in this directory: never a path from the file.
    payload = os.path.join(directory, os.path.basename(root["payloadFile"]))
    try:
        fd = os.open(payload, os.O_RDONLY)
    except FileNotFoundError:
        return None  # replaced between the two reads: start again
    try:
        stat = os.fstat(fd)
        size = stat.st_size
        identity = (manifest["version"], stat.st_ino, stat.st_ctime_ns)
        if size != manifest["totalBytes"] or size == 0:
            return manifest["version"], False, "size"
        mapping = mmap.mmap(fd, size, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    try:
        if hashlib.sha256(mapping).hexdigest() != manifest["sha256"]:
            return manifest["version"], False, "sha256"
        if answered.get("identity") == identity:
            return manifest["version"], True, answered["answers"]
        filt = Mapped(mapping, manifest)
        answers = "".join("1" if filt.might_contain(p) else "0" for p in probes)
        # Re-checked after answering: a mapping changed meanwhile is not answered from either.
        if hashlib.sha256(mapping).hexdigest() != manifest["sha256"]:
            return manifest["version"], False, "sha256"
        answered["identity"] = identity
        answered["answers"] = answers
        return manifest["version"], True, answers
    finally:
        mapping.close()


def main():
    directory, name, probes_file, out_file, stop_file = sys.argv[1:6]
    with open(probes_file, encoding="utf-8") as f:
        probes = f.read().split("\n")
    last = None
    answered = {}
    with open(out_file, "a", encoding="utf-8") as out:
        while not os.path.exists(stop_file):
            try:
                seen = observe(directory, name, probes, answered)
            except FileNotFoundError:
                seen = None  # no manifest yet
            if seen is not None and seen != last:
                version, accepted, detail = seen
                line = {"version": version, "accepted": accepted}
                line["answers" if accepted else "why"] = detail
                out.write(json.dumps(line) + "\n")
                out.flush()
                last = seen
            time.sleep(0.02)


if __name__ == "__main__":
    main()
