package io.bloomoperator.publish;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plans that write chunks (a new version, a roll-back): chunks first, then the manifest that
 * names them, so a reader never sees a version whose chunks are missing; on failure every chunk the
 * attempt created is deleted again and the published manifest is left as it was.
 */
final class VersionWrites {

  private static final Logger LOG = LoggerFactory.getLogger(VersionWrites.class);

  /** Encodes a version's chunks into a batch and returns the manifest that names them. */
  interface Encoding {
    Manifest encode(ChunkWriters.Batch created) throws IOException;
  }

  /** Writes the manifest ConfigMap naming a version whose chunks all exist; T: what it left. */
  interface ManifestWrite<T> {
    T write(Manifest manifest);
  }

  /**
   * Whether a manifest write that reported failure was committed after all (a timeout, or the
   * client's retry of a committed update answered with 409): what it left, if so.
   */
  interface Recheck<T> {
    Optional<T> committed(Manifest manifest);
  }

  private final String namespace;
  private final String filterName;
  private final ChunkStore chunks;
  private final ChunkWriters writers;
  private final String storeName;

  VersionWrites(
      String namespace,
      String filterName,
      ChunkStore chunks,
      ChunkWriters writers,
      String storeName) {
    this.namespace = namespace;
    this.filterName = filterName;
    this.chunks = chunks;
    this.writers = writers;
    this.storeName = storeName;
  }

  /** Writes the chunks {@code encoding} makes, then the manifest through {@code manifest}. */
  <T> T write(PublishPlan plan, Encoding encoding, ManifestWrite<T> manifest, Recheck<T> recheck)
      throws PublishException {
    ChunkWriters.Batch created = writers.batch(namespace, chunks);
    try {
      Manifest next = encoding.encode(created).inStore(storeName);
      // Every chunk exists before the manifest names it.
      created.finish();
      try {
        return manifest.write(next);
      } catch (RuntimeException e) {
        return recheck.committed(next).orElseThrow(() -> e);
      }
    } catch (IOException | RuntimeException e) {
      List<ChunkStore.Stored> toDelete = created.created();
      int left = deleteCreated(toDelete);
      throw PublishFailures.of(e, filterName, plan.version(), toDelete.size(), left);
    }
  }

  /**
   * The chunks of the new version {@code plan} decides for {@code bits}: a whole base, a delta on
   * {@code published}'s chain, or (rebase) the published version written anew as the only base with
   * the new version its delta.
   *
   * @param previous the published version's verified bits (null for a whole base)
   * @param sha256 the new payload's digest (null: computed when needed)
   */
  Encoding newVersion(
      PublishPlan plan,
      BloomFilterBits bits,
      long keyCount,
      BloomFilterBits previous,
      String sha256,
      Manifest published) {
    long version = plan.version();
    int chunkSize = plan.chunkSize();
    return switch (plan.kind()) {
      case WHOLE ->
          created ->
              Manifest.of(
                  filterName,
                  version,
                  bits,
                  keyCount,
                  SnapshotEncoder.encode(bits, chunkSize, into(Part.base(version), created)),
                  plan.createdAt());
      case DELTA, REBASE ->
          created -> {
            // Readers holding the published version still fetch only the delta.
            Manifest chain =
                plan.kind() == PublishPlan.Kind.REBASE
                    ? writeBase(published, previous, plan, created)
                    : published;
            return Manifest.withDelta(
                chain,
                version,
                bits,
                keyCount,
                sha256 != null ? sha256 : SnapshotEncoder.sha256(bits),
                SnapshotDelta.encode(previous, bits, chunkSize, into(Part.delta(version), created)),
                plan.createdAt());
          };
      default -> throw new IllegalArgumentException("a " + plan.kind() + " writes no new version");
    };
  }

  /**
   * The chunks of a roll-back to {@code plan}'s target, whose verified payload is {@code bits}: its
   * chain reused as it is and one empty delta appended, which carries the new version number.
   */
  Encoding rollBack(PublishPlan plan, BloomFilterBits bits) {
    Manifest target = plan.target();
    return created ->
        Manifest.withDelta(
            target,
            plan.version(),
            bits,
            target.keyCount(),
            target.sha256(),
            SnapshotDelta.encode(
                bits, bits, plan.chunkSize(), into(Part.delta(plan.version()), created)),
            plan.createdAt());
  }

  /** Writes {@code previous}, the verified bits of {@code published}, as a base of its version. */
  private Manifest writeBase(
      Manifest published, BloomFilterBits previous, PublishPlan plan, ChunkWriters.Batch created)
      throws IOException {
    return Manifest.of(
        filterName,
        published.version(),
        previous,
        published.keyCount(),
        SnapshotEncoder.encode(
            previous, plan.chunkSize(), into(Part.base(published.version()), created)),
        plan.createdAt());
  }

  /** Hands each chunk to {@code batch} as chunk of {@code part}. */
  private static SnapshotEncoder.ChunkConsumer into(Part part, ChunkWriters.Batch batch) {
    return (index, data, length, sha256) -> batch.create(part, index, data, length, sha256);
  }

  /**
   * Deletes the chunks a failed write created, each only if it is still the object created. By name
   * alone, an operator that lost its lease in the middle of a publish would delete the chunks of
   * the same name that the new leader created after its janitor removed ours: chunks of the
   * published version.
   *
   * @return how many could not be deleted
   */
  private int deleteCreated(List<ChunkStore.Stored> created) {
    int left = 0;
    for (ChunkStore.Stored chunk : created) {
      if (!chunks.delete(chunk)) {
        left++;
        // Otherwise the janitor removes chunks of unpublished versions on the next reconcile.
        LOG.warn("could not delete chunk {}/{} of a failed publish", namespace, chunk.name());
      }
    }
    return left;
  }
}
