package io.bloomoperator.publish;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import java.io.IOException;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What planning needs to know of a built payload ({@link PublishPlan.Facts}): its size and digest
 * and, when it may be a delta on the published version, the published bits it would be a delta on
 * and the delta's size. The published bits are the ones this process holds, else read back from the
 * chunks and verified; a chain that does not read back means a whole snapshot.
 */
final class PlanningFacts {

  private static final Logger LOG = LoggerFactory.getLogger(PlanningFacts.class);

  private final String filter;
  private final ChunkStore chunks;
  private final String location;

  /**
   * @param filter namespace/name, for the log
   * @param chunks where the published chain's chunks are read back from
   * @param location the store the next version is written to ({@link SnapshotBackend#location()})
   */
  PlanningFacts(String filter, ChunkStore chunks, String location) {
    this.filter = filter;
    this.chunks = chunks;
    this.location = location;
  }

  /**
   * @param current the published state (trusted by the caller), or null
   * @param held the published version's payload as this operator built it, or null
   */
  PublishPlan.Facts of(
      BloomFilterBits bits,
      PublishedSnapshot current,
      DeltaPolicy deltas,
      int chunkSize,
      BloomFilterBits held) {
    long size = SnapshotEncoder.payloadSize(bits);
    String sha256 = SnapshotEncoder.sha256(bits);
    Manifest published = current == null ? null : current.manifest();
    if (published != null && !Objects.equals(published.store(), location)) {
      // Chunks of another transport (or store) are not where this one reads: a whole snapshot in
      // the new place, even with the same content.
      return new PublishPlan.Facts(size, sha256, chunkSize, -1, null, true);
    }
    if (published == null
        || !deltas.enabled()
        || !published.describes(bits)
        || (published.totalBytes() == size && sha256.equals(published.sha256()))) {
      return new PublishPlan.Facts(size, sha256, chunkSize, -1, null);
    }
    BloomFilterBits previous = held;
    try {
      if (previous == null) {
        previous = SnapshotDecoder.decode(published, chunks);
      }
    } catch (SnapshotVerificationException | IOException | RuntimeException e) {
      // RuntimeException too: whatever a hostile chain makes the decoder throw (a reader bug, an
      // API error), the way out is a whole new base, never a reconcile failing on every retry.
      LOG.warn(
          "{}: published version {} cannot be read back ({}); publishing a whole snapshot",
          filter,
          published.version(),
          e.getMessage());
      return new PublishPlan.Facts(size, sha256, chunkSize, -1, null);
    }
    long deltaSize = SnapshotDelta.encodedSize(previous, bits, deltas.maxDeltaBytes(size));
    return new PublishPlan.Facts(
        size, sha256, chunkSize, deltaSize, deltaSize < 0 ? null : previous);
  }
}
