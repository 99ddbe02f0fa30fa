package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.TrustedKeys;
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
    cache(directory, namespace, filterName)
        .write(new ServedSnapshot(new AnnouncedManifest(manifest, manifest.toJson(), null), bits));
  }

  /** The local snapshot directory of a String-keyed reader without limits or trusted keys. */
  static LocalSnapshotCache cache(Path directory, String namespace, String filterName) {
    return new LocalSnapshotCache(
        directory,
        new Acceptance(
            namespace,
            filterName,
            KeyType.STRING,
            SnapshotLimits.forThisHeap(),
            TrustedKeys.none(),
            null));
  }
}
