package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;

/**
 * Writes a snapshot into a local snapshot directory, so a {@link LiveBloomFilter} started with it
 * serves the snapshot at once, without an API server: for the lookup benchmarks.
 */
public final class LocalSnapshots {

  private LocalSnapshots() {}

  /** Writes {@code bits} as version 1 of {@code namespace/filterName} into {@code directory}. */
  public static void write(
      Path directory, String namespace, String filterName, BloomFilterBits bits, long keyCount)
      throws IOException {
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(bits, 1_000_000, (index, data, length, sha) -> {});
    Manifest manifest = Manifest.of(filterName, 1, bits, keyCount, encoded, Instant.now());
    new LocalSnapshotCache(directory, namespace, filterName)
        .write(new LoadedSnapshot(manifest, bits, manifest.toJson(), null));
  }
}
