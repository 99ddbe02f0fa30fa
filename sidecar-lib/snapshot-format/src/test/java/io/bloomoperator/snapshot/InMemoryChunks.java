package io.bloomoperator.snapshot;

import java.io.IOException;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Chunk ConfigMaps in memory (name to bytes) and a writer that publishes whole snapshots and deltas
 * into them, as the operator does, for tests of the format without a cluster.
 */
final class InMemoryChunks {

  static final String FILTER = "ids";

  /** Odd, so 8-byte words and the 14-byte delta header straddle chunk boundaries. */
  static final int CHUNK = 997;

  final Map<String, byte[]> store = new HashMap<>();

  final SnapshotDecoder.ChunkSource source = (index, ref) -> store.get(ref.name());

  Manifest publishFull(BloomFilterBits bits, long keyCount, long version) throws IOException {
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(
            bits,
            CHUNK,
            (index, data, length, sha) ->
                store.put(
                    SnapshotNames.chunkName(FILTER, version, index), Arrays.copyOf(data, length)));
    return Manifest.of(FILTER, version, bits, keyCount, encoded, Instant.now());
  }

  Manifest publishDelta(Manifest previous, BloomFilterBits bits, long keyCount, long version)
      throws Exception {
    BloomFilterBits previousBits = SnapshotDecoder.decode(previous, source);
    SnapshotDelta.Result delta =
        SnapshotDelta.encode(
            previousBits,
            bits,
            CHUNK,
            (index, data, length, sha) ->
                store.put(
                    SnapshotNames.deltaChunkName(FILTER, version, index),
                    Arrays.copyOf(data, length)));
    Manifest manifest =
        Manifest.withDelta(
            previous, version, bits, keyCount, SnapshotEncoder.sha256(bits), delta, Instant.now());
    manifest.validate();
    return manifest;
  }
}
