package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.IOException;

/**
 * Fetches and verifies the bits of an accepted announcement through a chunk source (the API server
 * in production: one GET per chunk, by name, in order, so at most one chunk is held besides the
 * filter being built). Decides nothing about the manifest: that was {@link Acceptance}'s.
 */
final class SnapshotFetcher {

  private final SnapshotDecoder.ChunkSource chunks;

  SnapshotFetcher(SnapshotDecoder.ChunkSource chunks) {
    this.chunks = chunks;
  }

  /**
   * The snapshot of {@code announced}: when {@code held} (served now, or null) is a version of the
   * announced chain, only the deltas after it are fetched and applied to a copy of its bits;
   * otherwise the base and every delta.
   *
   * @throws SnapshotVerificationException if a chunk is missing or any size, digest or header check
   *     fails
   * @throws IOException if a chunk has no binary data or not the announced amount of it
   */
  ServedSnapshot fetch(AnnouncedManifest announced, ServedSnapshot held)
      throws SnapshotVerificationException, IOException {
    Manifest manifest = announced.manifest();
    BloomFilterBits bits =
        held == null
            ? SnapshotDecoder.decode(manifest, chunks)
            : SnapshotDecoder.update(
                manifest, held.bits(), held.version(), held.manifest().sha256(), chunks);
    return new ServedSnapshot(announced, bits);
  }
}
