package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;

/**
 * One snapshot built in memory and served forever: no cluster, no thread, nothing to fail. Behind
 * {@link LiveBloomFilter#fixed}.
 */
final class FixedSnapshot implements SnapshotSource {

  /** Chunking only feeds the manifest's digest fields here; nothing is stored. */
  private static final int CHUNK_BYTES = 512 * 1024;

  private final ServedSnapshot snapshot;

  FixedSnapshot(String filterName, BloomFilterBits bits, long keyCount) {
    SnapshotEncoder.Result encoded;
    try {
      encoded = SnapshotEncoder.encode(bits, CHUNK_BYTES, (index, data, length, sha256) -> {});
    } catch (IOException e) {
      throw new UncheckedIOException(e); // the consumer above throws nothing
    }
    Manifest manifest = Manifest.of(filterName, 1, bits, keyCount, encoded, Instant.now());
    this.snapshot =
        new ServedSnapshot(new AnnouncedManifest(manifest, manifest.toJson(), null), bits);
  }

  @Override
  public ServedSnapshot serving() {
    return snapshot;
  }

  @Override
  public boolean awaitReady(Duration timeout) {
    return true;
  }

  @Override
  public long loads() {
    return 1;
  }

  @Override
  public long failures() {
    return 0;
  }

  @Override
  public void close() {}
}
