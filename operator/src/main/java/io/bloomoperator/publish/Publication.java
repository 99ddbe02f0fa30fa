package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a freshly built filter the published one, each step once: compare it with the published
 * version (an identical payload only confirms the build record), number the new version, choose
 * between a delta on the published chain and a whole new base ({@link DeltaPolicy}), check the
 * namespace's budget, and write it ({@link SnapshotStore}). {@code current} must be what {@link
 * OwnManifests} trusts: its version, chain and creation time are built on. Memory: the new filter
 * plus, while a delta is considered, the published one. Leftovers of earlier attempts are the
 * janitor's job, done before this runs.
 */
public final class Publication {

  private static final Logger LOG = LoggerFactory.getLogger(Publication.class);

  /**
   * @param published the manifest ConfigMap as this publish wrote it (the API server's answer, not
   *     a read-back someone may have edited meanwhile), or as it was when a confirm did not go
   *     through
   * @param newVersion whether a new version was written (false: identical payload confirmed)
   */
  public record Outcome(PublishedSnapshot published, boolean newVersion) {

    /** The published manifest. */
    public Manifest manifest() {
      return published.manifest();
    }
  }

  private final KubernetesClient client;
  private final BloomFilter owner;
  private final SigningKeySecret signingKey;
  private final long maxNamespaceBytes;
  private final DeltaPolicy deltas;
  private final String publisher;
  private final WriteFence fence;
  private final WriteBudget writes;

  /**
   * @param signingKey signs every manifest written, or null for unsigned manifests
   * @param maxNamespaceBytes budget of all published payloads of the owner's namespace
   * @param deltas when a new version is a delta on the published chain
   */
  public Publication(
      KubernetesClient client,
      BloomFilter owner,
      SigningKeySecret signingKey,
      long maxNamespaceBytes,
      DeltaPolicy deltas) {
    this(
        client,
        owner,
        signingKey,
        maxNamespaceBytes,
        deltas,
        null,
        WriteFence.NONE,
        new WriteBudget(WriteBudget.Limits.defaults()));
  }

  /**
   * As above, stamping {@code publisher} (this replica's identity; null: no stamp) on what it
   * writes, see {@link SnapshotStore#ANNOTATION_PUBLISHED_BY}, and asking {@code fence} before the
   * manifest write, and charging every new version to {@code writes} before it is written.
   *
   * @throws WriteFence.NotLeaderException from {@link #publish} when the fence refuses
   */
  public Publication(
      KubernetesClient client,
      BloomFilter owner,
      SigningKeySecret signingKey,
      long maxNamespaceBytes,
      DeltaPolicy deltas,
      String publisher,
      WriteFence fence,
      WriteBudget writes) {
    this.fence = fence;
    this.writes = writes;
    this.client = client;
    this.owner = owner;
    this.signingKey = signingKey;
    this.maxNamespaceBytes = maxNamespaceBytes;
    this.deltas = deltas;
    this.publisher = publisher;
  }

  /**
   * @param current what was published when the build started (its resourceVersion guards the
   *     manifest write), or null
   * @param lastKnownVersion the highest version the status reports (0: none); new versions go above
   *     it even when the manifest was deleted, so readers never see a version reused
   * @throws PublishException with nothing of this attempt left behind
   */
  public Outcome publish(
      BloomFilterBits bits,
      long keyCount,
      PublishedSnapshot current,
      long lastKnownVersion,
      SnapshotStore.BuildRecord record,
      int requestedChunkSize,
      Instant now)
      throws PublishException {
    SnapshotStore store = new SnapshotStore(client, owner, signingKey, publisher, fence);
    Manifest published = current == null ? null : current.manifest();
    long size = SnapshotEncoder.payloadSize(bits);
    int chunkSize = writes.chunkSize(requestedChunkSize, size, SnapshotSpec.MAX_CHUNK_BYTES);
    String sha256 = SnapshotEncoder.sha256(bits);
    if (published != null && published.totalBytes() == size && sha256.equals(published.sha256())) {
      // Byte-identical: publishing it again would only make every reader reload.
      store.confirm(current, record, bits, keyCount, chunkSize);
      // A confirm that did not go through leaves the version as it was read (and trusted); if
      // someone else changed the ConfigMap meanwhile, the next reconcile finds it is not ours.
      PublishedSnapshot confirmed = store.written();
      return new Outcome(confirmed != null ? confirmed : current, false);
    }
    long version = Math.max(published == null ? 0 : published.version(), lastKnownVersion) + 1;
    // Readers that trust signatures load only a manifest published after the one they serve
    // (creation time, then version): never stamp a new version earlier than the published one,
    // even when this replica's clock is behind the one that published it.
    // Never later than this clock allows either: a createdAt far ahead would be copied into every
    // following version and make trusted readers refuse them all once it is corrected.
    Instant latest = now.plus(OwnManifests.MAX_CLOCK_SKEW);
    Instant createdAt =
        published == null || !published.created().isAfter(now)
            ? now
            : published.created().isAfter(latest) ? latest : published.created();
    BloomFilterBits previousBits = deltaBase(store, published, bits);
    if (previousBits != null) {
      long deltaSize = SnapshotDelta.encodedSize(previousBits, bits, deltas.maxDeltaBytes(size));
      if (deltaSize >= 0 && deltas.chainHasRoom(published, deltaSize, size)) {
        checkBudgets(
            stored(published) + WriteBudget.Limits.cost(deltaSize, chunks(deltaSize, chunkSize)),
            deltaSize,
            chunkSize,
            now);
        store.publishDelta(
            previousBits, bits, sha256, keyCount, version, chunkSize, current, record, createdAt);
        return new Outcome(store.written(), true);
      }
      if (deltaSize >= 0 && published.chained()) {
        // Compaction: the published version becomes the base (every running reader holds it),
        // the new version its only delta. Written: the whole payload once, by the operator.
        checkBudgets(
            WriteBudget.Limits.cost(
                    size + deltaSize, chunks(size, chunkSize) + chunks(deltaSize, chunkSize) + 1)
                + stored(published),
            size + deltaSize,
            chunkSize,
            now);
        store.publishRebased(
            previousBits, bits, sha256, keyCount, version, chunkSize, current, record, createdAt);
        return new Outcome(store.written(), true);
      }
      LOG.debug(
          "{}/{}: the delta to version {} exceeds {} bytes; publishing a whole snapshot",
          owner.getMetadata().getNamespace(),
          owner.getMetadata().getName(),
          version,
          deltas.maxDeltaBytes(size));
    }
    previousBits = null; // only the new filter from here on
    checkBudgets(
        WriteBudget.Limits.cost(size, chunks(size, chunkSize) + 1) + stored(published),
        size,
        chunkSize,
        now);
    store.publish(bits, keyCount, version, chunkSize, current, record, createdAt);
    return new Outcome(store.written(), true);
  }

  /**
   * The published version's bits, read back and verified, when the new version may be a delta on it
   * (deltas on, same key type and geometry); null when it must be a whole snapshot. A published
   * chain that no longer verifies (a chunk deleted or edited by hand) also means a whole snapshot:
   * the next version must not build on it.
   */
  private BloomFilterBits deltaBase(SnapshotStore store, Manifest published, BloomFilterBits bits) {
    if (published == null || !deltas.enabled() || !published.describes(bits)) {
      return null;
    }
    try {
      return store.materialize(published);
    } catch (SnapshotVerificationException | IOException | RuntimeException e) {
      // RuntimeException too: whatever a hostile chain makes the decoder throw (a reader bug, an
      // API error), the way out is a whole new base, never a reconcile failing on every retry.
      LOG.warn(
          "{}/{}: published version {} cannot be read back ({}); publishing a whole snapshot",
          owner.getMetadata().getNamespace(),
          owner.getMetadata().getName(),
          published.version(),
          e.getMessage());
      return null;
    }
  }

  /**
   * One namespace must not fill etcd for everyone: refuse a version that would take the namespace's
   * stored snapshots over its budget, or its bytes written in the last hour over the write budget.
   * The write is charged here, before anything is written: a publish that fails half-way has
   * written to etcd's history too.
   *
   * @param storedBytes what the filter's objects hold after this version, with their overhead: the
   *     new chain, and a replaced chain kept for its grace period
   * @param writtenBytes the bytes this version writes (its chunks)
   */
  private void checkBudgets(long storedBytes, long writtenBytes, int chunkSize, Instant now)
      throws PublishException {
    checkNamespaceBudget(storedBytes);
    long objects = chunks(writtenBytes, chunkSize) + 1; // the chunks and the manifest
    long cost = WriteBudget.Limits.cost(writtenBytes, objects);
    String namespace = owner.getMetadata().getNamespace();
    var refused = writes.charge(namespace, owner.getMetadata().getName(), cost, now);
    if (refused.isPresent()) {
      throw WriteBudgetExceeded.of(refused.get(), cost);
    }
  }

  /** Objects {@code bytes} are cut into. */
  private static long chunks(long bytes, int chunkSize) {
    return (bytes + chunkSize - 1) / chunkSize;
  }

  /**
   * What a published chain holds in etcd, its objects' overhead included: after a whole publish or
   * a compaction it stays for its grace period beside the new one.
   */
  private static long stored(Manifest published) {
    return published == null ? 0 : NamespaceBudget.stored(published);
  }

  private void checkNamespaceBudget(long size) throws PublishException {
    String namespace = owner.getMetadata().getNamespace();
    long others =
        NamespaceBudget.publishedBytesExcept(client, namespace, owner.getMetadata().getName());
    if (others + size > maxNamespaceBytes) {
      throw new PublishException(
          Reasons.NAMESPACE_QUOTA_EXCEEDED,
          "publishing "
              + ByteSizes.human(size)
              + " would take the snapshots of namespace "
              + namespace
              + " to "
              + ByteSizes.human(others + size)
              + ", over the operator limit of "
              + ByteSizes.human(maxNamespaceBytes)
              + " (BLOOM_MAX_NAMESPACE_BYTES); nothing was published",
          null);
    }
  }
}
