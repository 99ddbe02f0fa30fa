package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.ConfigMapChunkStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out a {@link PublishPlan} for one filter, following docs/snapshot-protocol.md: chunks
 * first (through its {@link ChunkStore}), then the manifest (through its {@link ManifestWriter},
 * guarded by the resourceVersion read), so a reader never sees a version whose chunks are missing;
 * on failure the chunks this attempt created are deleted again. With a signing key, the manifest
 * ConfigMap also gets {@code manifest.sig}, the signature of its exact manifest.json text and
 * namespace.
 */
public final class SnapshotStore {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotStore.class);

  private final KubernetesClient client;
  private final BloomFilter owner;
  private final String namespace;
  private final String filterName;
  private final SigningKeySecret signingKey;
  private final ManifestWriter manifests;
  private final ChunkStore chunks;

  /** The object store the chunks live in, as manifests name it; null: ConfigMaps. */
  private final String storeName;

  /**
   * Where the filter's chunks were before they moved: its chunk ConfigMaps when they now go to an
   * object store, and the object stores it left.
   */
  private final List<ChunkStore> formerChunks;

  /** The namespace's budget in the object store; null for ConfigMaps. */
  private final StoreBudget storeBudget;

  /** Who creates the chunks: several at once within the operator's bound, or one by one. */
  private final ChunkWriters writers;

  /** Composes every manifest ConfigMap this store writes. */
  private final ManifestComposer composer;

  /**
   * The signer, loaded at most once per store (one reconcile), before the first write needing it.
   */
  private ManifestSigner signer;

  /**
   * A store of {@code owner}'s snapshot that signs with {@code signingKey} (read at each publish;
   * null: unsigned manifests).
   */
  public SnapshotStore(KubernetesClient client, BloomFilter owner, SigningKeySecret signingKey) {
    this.client = client;
    this.owner = owner;
    this.namespace = owner.getMetadata().getNamespace();
    this.filterName = owner.getMetadata().getName();
    this.signingKey = signingKey;
    this.composer = new ManifestComposer(owner);
    this.manifests = ManifestWriter.of(client);
    this.chunks =
        ConfigMapChunkStore.writer(
            client, namespace, filterName, ManifestComposer.ownerReference(owner), Map.of());
    this.storeName = null;
    this.formerChunks = List.of();
    this.storeBudget = null;
    this.writers = ChunkWriters.sequential();
  }

  private SnapshotStore(
      SnapshotStore store,
      ManifestWriter manifests,
      ChunkStore chunks,
      String storeName,
      List<ChunkStore> formerChunks,
      StoreBudget storeBudget,
      ChunkWriters writers) {
    this.client = store.client;
    this.owner = store.owner;
    this.namespace = store.namespace;
    this.filterName = store.filterName;
    this.signingKey = store.signingKey;
    this.composer = store.composer;
    this.manifests = manifests;
    this.chunks = chunks;
    this.storeName = storeName;
    this.formerChunks = formerChunks;
    this.storeBudget = storeBudget;
    this.writers = writers;
  }

  /**
   * This store with the chunks in the object store {@code storeName} ({@code chunks}): manifests
   * name it, and the filter's chunk ConfigMaps (from before it moved) are cleaned up like chunks of
   * replaced versions.
   */
  public SnapshotStore inObjectStore(ChunkStore chunks, String storeName, StoreBudget budget) {
    return new SnapshotStore(
        this, manifests, chunks, storeName, List.of(this.chunks), budget, writers);
  }

  /**
   * This store also cleaning up {@code left}: the filter's chunks in object stores it no longer
   * uses, kept only while the versions they hold are named or retained.
   */
  public SnapshotStore leaving(List<ChunkStore> left) {
    if (left.isEmpty()) {
      return this;
    }
    List<ChunkStore> all = new ArrayList<>(formerChunks);
    all.addAll(left);
    return new SnapshotStore(
        this, manifests, chunks, storeName, List.copyOf(all), storeBudget, writers);
  }

  /**
   * This store with its chunks created through {@code writers}: several at once, all of them before
   * the manifest, and on failure every one this publish created deleted again.
   */
  public SnapshotStore writingChunksWith(ChunkWriters writers) {
    return new SnapshotStore(
        this, manifests, chunks, storeName, formerChunks, storeBudget, writers);
  }

  /** The namespace's budget in the object store, if the chunks go to one. */
  public java.util.Optional<StoreBudget> storeBudget() {
    return java.util.Optional.ofNullable(storeBudget);
  }

  /** The object store the chunks go to, or null for ConfigMaps. */
  public String storeName() {
    return storeName;
  }

  /** Where the filter's chunks were before they moved, if they did. */
  public List<ChunkStore> formerChunks() {
    return formerChunks;
  }

  /**
   * This store with every manifest write fenced by {@code fence} and everything it writes stamped
   * {@value ManifestWriter#ANNOTATION_PUBLISHED_BY} with {@code publisher} (null: no stamp).
   */
  public SnapshotStore writingAs(String publisher, WriteFence fence) {
    String stamp = ManifestWriter.boundedPublisher(publisher);
    ChunkStore configMaps =
        ConfigMapChunkStore.writer(
            client,
            namespace,
            filterName,
            ManifestComposer.ownerReference(owner),
            stamp == null ? Map.of() : Map.of(ManifestWriter.ANNOTATION_PUBLISHED_BY, stamp));
    return storeName == null
        ? new SnapshotStore(
            this, manifests.fencedAs(stamp, fence), configMaps, null, List.of(), null, writers)
        : new SnapshotStore(
            this,
            manifests.fencedAs(stamp, fence),
            chunks,
            storeName,
            List.of(configMaps),
            storeBudget,
            writers);
  }

  /**
   * This store with every manifest ConfigMap write charged to {@code budget} first ({@link
   * ChargedManifests}): the manifest goes to etcd whatever store the chunks go to.
   */
  public SnapshotStore chargingManifestsTo(WriteBudget budget, java.time.Clock clock) {
    return new SnapshotStore(
        this,
        new ChargedManifests(manifests, budget, namespace, filterName, clock),
        chunks,
        storeName,
        formerChunks,
        storeBudget,
        writers);
  }

  /** The store the filter's chunks live in. */
  public ChunkStore chunks() {
    return chunks;
  }

  /**
   * Reads the manifest ConfigMap. A manifest that does not parse is reported and treated as absent,
   * so the next publish replaces it.
   *
   * @return null when there is no manifest ConfigMap
   * @throws PublishException {@link Reasons#NAME_CONFLICT} when a ConfigMap of the manifest's name
   *     exists but is not controlled by this BloomFilter: it is someone else's and is neither
   *     adopted nor overwritten
   */
  public PublishedSnapshot read() throws PublishException {
    ConfigMap configMap =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName(filterName))
            .get();
    if (configMap == null) {
      return null;
    }
    if (!controlledByOwner(configMap)) {
      throw PublishFailures.manifestNameTaken(configMap.getMetadata().getName());
    }
    String json = SnapshotConfigMaps.manifestJson(configMap);
    Manifest manifest = null;
    if (json != null) {
      try {
        manifest = Manifest.fromJson(json);
      } catch (SnapshotVerificationException e) {
        LOG.warn(
            "manifest of {}/{} is unreadable and will be replaced: {}",
            namespace,
            filterName,
            e.getMessage());
      }
    }
    return new PublishedSnapshot(configMap, manifest);
  }

  /**
   * What planning needs to know of {@code bits}: its size and digest and, when it may be a delta on
   * {@code current} (deltas on, same key type and geometry), the verified published bits and the
   * size of the delta from them. A published chain that no longer verifies (a chunk deleted or
   * edited by hand) means a whole snapshot: the next version must not build on it.
   *
   * @param current what {@link OwnManifests} trusts, or null
   */
  public PublishPlan.Facts facts(
      BloomFilterBits bits, PublishedSnapshot current, DeltaPolicy deltas, int chunkSize) {
    return facts(bits, current, deltas, chunkSize, null);
  }

  /**
   * As {@link #facts(BloomFilterBits, PublishedSnapshot, DeltaPolicy, int)}, with {@code held} the
   * published version's payload as this operator built it ({@link PublishedPayloads}, for exactly
   * {@code current}'s version; null: none): used instead of reading the published chain back.
   */
  public PublishPlan.Facts facts(
      BloomFilterBits bits,
      PublishedSnapshot current,
      DeltaPolicy deltas,
      int chunkSize,
      BloomFilterBits held) {
    long size = SnapshotEncoder.payloadSize(bits);
    String sha256 = SnapshotEncoder.sha256(bits);
    Manifest published = current == null ? null : current.manifest();
    if (published != null && !java.util.Objects.equals(published.store(), storeName)) {
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
        previous = materialize(published);
      }
    } catch (SnapshotVerificationException | IOException | RuntimeException e) {
      // RuntimeException too: whatever a hostile chain makes the decoder throw (a reader bug, an
      // API error), the way out is a whole new base, never a reconcile failing on every retry.
      LOG.warn(
          "{}/{}: published version {} cannot be read back ({}); publishing a whole snapshot",
          namespace,
          filterName,
          published.version(),
          e.getMessage());
      return new PublishPlan.Facts(size, sha256, chunkSize, -1, null);
    }
    long deltaSize = SnapshotDelta.encodedSize(previous, bits, deltas.maxDeltaBytes(size));
    return new PublishPlan.Facts(
        size, sha256, chunkSize, deltaSize, deltaSize < 0 ? null : previous);
  }

  /**
   * Carries out {@code plan} for {@code bits}.
   *
   * @param facts what the plan was made from: the published version's verified bits for a delta or
   *     a rebase, and the new payload's digest (null for a whole version: nothing is reused)
   * @param current what the plan was made from; its resourceVersion guards the manifest write
   * @return the manifest ConfigMap as this write left it (a confirm that did not go through: {@code
   *     current})
   * @throws PublishException with nothing of this attempt left behind; also when a signing key is
   *     configured but unusable ({@link Reasons#SIGNING_KEY}), before any chunk is written
   */
  public PublishedSnapshot apply(
      PublishPlan plan,
      PublishPlan.Facts facts,
      BloomFilterBits bits,
      long keyCount,
      PublishedSnapshot current,
      BuildRecord build)
      throws PublishException {
    if (plan.kind() == PublishPlan.Kind.CONFIRM) {
      // A confirm that did not go through leaves the version as it was read (and trusted); if
      // someone else changed the ConfigMap meanwhile, the next reconcile finds it is not ours.
      return confirm(current, build, bits, keyCount, plan.chunkSize());
    }
    return writeVersion(Version.of(plan, facts, bits, keyCount), current, build, 0).state();
  }

  /**
   * As {@link #apply}, but a new version is announced as a canary beside {@code current}'s manifest
   * ({@link SnapshotConfigMaps#withCanary}): only the readers in the share of {@code percent} %
   * load it, {@code manifest.json} (and with it what every other reader serves, the build record
   * and the retained versions) stays as it is. A confirm is carried out as by {@link #apply}.
   *
   * @param current the published (stable) version; must have a manifest
   * @return the manifest ConfigMap as written, with {@code current}'s manifest, and the canary's
   */
  public Written applyAsCanary(
      PublishPlan plan,
      PublishPlan.Facts facts,
      BloomFilterBits bits,
      long keyCount,
      PublishedSnapshot current,
      BuildRecord build,
      int percent)
      throws PublishException {
    if (plan.kind() == PublishPlan.Kind.CONFIRM || current == null || current.manifest() == null) {
      return new Written(apply(plan, facts, bits, keyCount, current, build), null);
    }
    return writeVersion(Version.of(plan, facts, bits, keyCount), current, build, percent);
  }

  /**
   * What a version write left: the manifest ConfigMap as the API server answered it, and the canary
   * it announced (null: the version was published as {@code manifest.json}).
   */
  public record Written(PublishedSnapshot state, Manifest canary) {}

  /**
   * Makes the canary {@code canary} (trusted by the caller against its record) the published
   * version: written as {@code manifest.json} with {@code build} as its build record, the canary
   * keys removed, {@code current}'s version retained and superseded as by any publish. Its chunks
   * exist already; nothing else is written.
   */
  public PublishedSnapshot promoteCanary(
      PublishedSnapshot current, Manifest canary, BuildRecord build) throws PublishException {
    ManifestSigner signer = signer();
    try {
      return writeManifest(canary, current, build, supersededBy(current, canary), signer);
    } catch (RuntimeException e) {
      throw PublishFailures.of(e, filterName, canary.version(), 0, 0);
    }
  }

  /**
   * Removes the canary from the manifest ConfigMap ({@code manifest.json} untouched), guarded by
   * the resourceVersion read. Readers of the share that loaded it keep it until a newer version is
   * published: the caller publishes the stable payload again when any of them did.
   */
  public PublishedSnapshot withdrawCanary(PublishedSnapshot current) throws PublishException {
    ConfigMap desired = composer.withdrawn(current);
    try {
      return new PublishedSnapshot(manifests.write(desired), current.manifest());
    } catch (RuntimeException e) {
      throw PublishFailures.of(e, filterName, current.manifest().version(), 0, 0);
    }
  }

  /**
   * Publishes {@code bits} as the whole snapshot of {@code version}: {@link #apply} of a {@link
   * PublishPlan.Kind#WHOLE} plan.
   */
  public Manifest publish(
      BloomFilterBits bits,
      long keyCount,
      long version,
      int chunkSize,
      PublishedSnapshot current,
      BuildRecord build,
      Instant createdAt)
      throws PublishException {
    PublishPlan whole =
        new PublishPlan(
            PublishPlan.Kind.WHOLE,
            version,
            createdAt,
            chunkSize,
            java.util.Set.of(Part.base(version)),
            current == null || current.manifest() == null
                ? List.of()
                : PublishPlan.superseded(current.manifest(), java.util.Set.of(Part.base(version))),
            0,
            0);
    return apply(whole, null, bits, keyCount, current, build).manifest();
  }

  /**
   * The verified bits of {@code manifest}'s version, read back from the chunks in the cluster (the
   * base, then each delta applied): what a new delta is computed against when this process does not
   * hold the payload it published ({@link PublishedPayloads}), e.g. after a restart.
   *
   * @throws SnapshotVerificationException if a chunk is missing or anything fails verification
   * @throws IOException if a chunk has no data or not the announced amount
   */
  public BloomFilterBits materialize(Manifest manifest)
      throws SnapshotVerificationException, IOException {
    return SnapshotDecoder.decode(manifest, chunks);
  }

  /**
   * One new version to write: the plan, the new bits, the published version's bits a delta is
   * computed against (null for a whole version) and the new payload's digest (null: computed when
   * needed).
   */
  private record Version(
      PublishPlan plan,
      BloomFilterBits bits,
      BloomFilterBits previous,
      String sha256,
      long keyCount) {

    /** The version {@code plan} writes for {@code bits}, with what {@code facts} (or null) hold. */
    static Version of(
        PublishPlan plan, PublishPlan.Facts facts, BloomFilterBits bits, long keyCount) {
      return new Version(
          plan,
          bits,
          facts == null ? null : facts.previous(),
          facts == null ? null : facts.sha256(),
          keyCount);
    }
  }

  /** Encodes the chunks of {@code next} into the store and returns its manifest. */
  private Manifest encode(Version next, PublishedSnapshot current, ChunkWriters.Batch created)
      throws IOException {
    PublishPlan plan = next.plan();
    BloomFilterBits bits = next.bits();
    long version = plan.version();
    int chunkSize = plan.chunkSize();
    switch (plan.kind()) {
      case CONFIRM -> throw new IllegalArgumentException("a confirm writes no chunks");
      case WHOLE -> {
        return Manifest.of(
            filterName,
            version,
            bits,
            next.keyCount(),
            SnapshotEncoder.encode(bits, chunkSize, into(Part.base(version), created)),
            plan.createdAt());
      }
      default -> {
        // A delta goes on the published chain, or (rebase) on the published version written anew
        // as the only base: readers holding that version still fetch only the delta.
        Manifest chain =
            plan.kind() == PublishPlan.Kind.REBASE
                ? writeBase(current.manifest(), next.previous(), plan, created)
                : current.manifest();
        String sha256 = next.sha256() != null ? next.sha256() : SnapshotEncoder.sha256(bits);
        return Manifest.withDelta(
            chain,
            version,
            bits,
            next.keyCount(),
            sha256,
            SnapshotDelta.encode(
                next.previous(), bits, chunkSize, into(Part.delta(version), created)),
            plan.createdAt());
      }
    }
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
   * Chunks first, then the manifest; on failure every chunk this call created is deleted again and
   * the current manifest is left as it was.
   */
  private Written writeVersion(
      Version next, PublishedSnapshot current, BuildRecord build, int canaryPercent)
      throws PublishException {
    PublishPlan plan = next.plan();
    // Before any chunk: an unusable key must not leave chunks behind or publish unsigned.
    ManifestSigner signer = signer();
    ChunkWriters.Batch created = writers.batch(namespace, chunks);
    try {
      Manifest manifest = encode(next, current, created).inStore(storeName);
      // Every chunk exists before the manifest names it.
      created.finish();
      try {
        return canaryPercent > 0
            ? new Written(writeCanary(manifest, current, signer, canaryPercent), manifest)
            : new Written(writeManifest(manifest, current, build, plan.superseded(), signer), null);
      } catch (RuntimeException e) {
        return committedAnyway(manifest, current, canaryPercent > 0).orElseThrow(() -> e);
      }
    } catch (IOException | RuntimeException e) {
      List<ChunkStore.Stored> toDelete = created.created();
      int left = rollBack(toDelete);
      throw PublishFailures.of(e, filterName, plan.version(), toDelete.size(), left);
    }
  }

  /**
   * A manifest write that reported failure may have been committed (a timeout, or the client's
   * retry of a committed update answered with 409): if the manifest now names this very version, it
   * is published and its chunks must stay.
   */
  private Optional<Written> committedAnyway(
      Manifest manifest, PublishedSnapshot current, boolean canary) {
    PublishedSnapshot after = readQuietly();
    Manifest announced = canary ? canaryOf(after) : after == null ? null : after.manifest();
    if (announced == null
        || announced.version() != manifest.version()
        || !announced.sha256().equals(manifest.sha256())) {
      return Optional.empty();
    }
    LOG.info(
        "{}/{}: manifest write of version {} reported a failure but was committed",
        namespace,
        filterName,
        manifest.version());
    return Optional.of(
        canary
            ? new Written(new PublishedSnapshot(after.configMap(), current.manifest()), manifest)
            : new Written(after, null));
  }

  /**
   * Deletes the chunks this publish created, each only if it is still the object created. By name
   * alone, an operator that lost its lease in the middle of a publish would delete the chunks of
   * the same name that the new leader created after its janitor removed ours: chunks of the
   * published version.
   *
   * @return how many could not be deleted
   */
  private int rollBack(List<ChunkStore.Stored> created) {
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

  /**
   * Records that a rebuild produced exactly the published payload: the version stays, the
   * manifest's build record moves on (readers see an unchanged version and do not reload). Guarded
   * by the resourceVersion read; a conflict is harmless and only costs a rebuild later. The
   * manifest is never re-signed.
   */
  public PublishedSnapshot confirm(PublishedSnapshot current, BuildRecord build) {
    return confirm(current, build, null, 0, 0);
  }

  /**
   * As {@link #confirm(PublishedSnapshot, BuildRecord)}, and with a signing key also re-signs the
   * published manifest if its signature is missing or by another key (signing was just enabled, or
   * the key rotated), so a rebuild request suffices there; but only if the manifest is exactly the
   * one this operator would write for {@code bits}: whoever can edit the ConfigMap must not get the
   * operator to sign their version of it.
   *
   * @param bits the rebuilt filter (null: never re-sign)
   * @param keyCount keys put into {@code bits}
   * @param chunkSize the filter's chunk size
   * @return the manifest as confirmed, or {@code current} when the write did not go through
   */
  public PublishedSnapshot confirm(
      PublishedSnapshot current,
      BuildRecord build,
      BloomFilterBits bits,
      long keyCount,
      int chunkSize) {
    ConfigMap updated = composer.confirmed(current, build);
    if (bits != null && signingKey != null) {
      new ManifestResigner(client, signingKey, namespace, filterName, chunks, storeName)
          .resignIfNeeded(updated, current.manifest(), bits, keyCount, chunkSize);
    }
    try {
      return new PublishedSnapshot(manifests.write(updated), current.manifest());
    } catch (KubernetesClientException e) {
      LOG.debug("build record of {}/{} not updated: {}", namespace, filterName, e.getMessage());
      return current;
    }
  }

  /**
   * The grace period of the versions {@code current} retains is over: the manifest stops naming
   * them, so the chunk clean-up removes them. A failure is harmless: the next clean finds the
   * chunks already gone and tries again.
   *
   * @return the manifest as written, or {@code current} when the write did not go through
   */
  public PublishedSnapshot forgetPrevious(PublishedSnapshot current) {
    try {
      // The resourceVersion read guards the write: if the manifest moved on meanwhile, this fails
      // instead of erasing the bookkeeping of a newer version.
      return new PublishedSnapshot(
          manifests.write(composer.forgotten(current)), current.manifest());
    } catch (KubernetesClientException e) {
      LOG.debug(
          "could not clear previous-version annotations of {}/{}: {}",
          namespace,
          filterName,
          e.getMessage());
      return current;
    }
  }

  /**
   * Writes the published version again with {@code createdAt} = {@code now}, re-signed, when a
   * signing key with a re-stamp interval is configured and the signed creation time is older than
   * that interval: readers with a maximum manifest age then keep accepting a version that has not
   * changed (its chunks, version and digest stay; readers holding it load nothing). {@code current}
   * must be trusted ({@link OwnManifests}). Guarded by its resourceVersion; a conflict only leaves
   * the re-stamp to the next reconcile.
   *
   * @return the manifest as re-stamped; empty when it was not (not due, or the write conflicted)
   * @throws PublishException if the signing key is unusable
   */
  public Optional<PublishedSnapshot> restampIfDue(PublishedSnapshot current, Instant now)
      throws PublishException {
    if (restampDue(signingKey, current, now).map(d -> !d.isZero()).orElse(true)) {
      return Optional.empty();
    }
    Manifest fresh = current.manifest().withCreatedAt(now);
    ConfigMap desired = composer.restamped(current, fresh, signer());
    try {
      return Optional.of(new PublishedSnapshot(manifests.write(desired), fresh));
    } catch (KubernetesClientException e) {
      LOG.debug("{}/{}: manifest not re-stamped: {}", namespace, filterName, e.getMessage());
      return Optional.empty();
    }
  }

  /** How long until {@code current} is due for a re-stamp under this store's signing key. */
  public Optional<Duration> restampDue(PublishedSnapshot current, Instant now) {
    return restampDue(signingKey, current, now);
  }

  /**
   * How long until {@code current} is due for a re-stamp under {@code signingKey} ({@link
   * Duration#ZERO}: due now); empty when it never is (no signing, re-stamping off, nothing
   * published).
   */
  public static Optional<Duration> restampDue(
      SigningKeySecret signingKey, PublishedSnapshot current, Instant now) {
    if (signingKey == null
        || signingKey.restampInterval().isZero()
        || current == null
        || current.manifest() == null) {
      return Optional.empty();
    }
    Duration left =
        Duration.between(now, current.manifest().created().plus(signingKey.restampInterval()));
    return Optional.of(left.isNegative() ? Duration.ZERO : left);
  }

  /** The signer of this store's key, loaded once; null for unsigned manifests. */
  private ManifestSigner signer() throws PublishException {
    if (signer == null && signingKey != null) {
      signer = signingKey.load(client);
    }
    return signer;
  }

  /** Whether the object's controller ownerReference is this BloomFilter (same uid). */
  private boolean controlledByOwner(ConfigMap configMap) {
    List<OwnerReference> references = configMap.getMetadata().getOwnerReferences();
    return references != null
        && references.stream()
            .anyMatch(
                r ->
                    Boolean.TRUE.equals(r.getController())
                        && owner.getMetadata().getUid().equals(r.getUid()));
  }

  private PublishedSnapshot readQuietly() {
    try {
      return read();
    } catch (KubernetesClientException | PublishException e) {
      return null;
    }
  }

  private PublishedSnapshot writeManifest(
      Manifest manifest,
      PublishedSnapshot current,
      BuildRecord build,
      List<Long> superseded,
      ManifestSigner signer) {
    ConfigMap desired =
        composer.version(current, manifest, build, superseded, signer, Instant.now());
    return new PublishedSnapshot(manifests.write(desired), manifest);
  }

  /**
   * Announces {@code canary} beside {@code current}'s manifest: every other key and annotation is
   * kept, the resourceVersion read guards the write.
   */
  private PublishedSnapshot writeCanary(
      Manifest canary, PublishedSnapshot current, ManifestSigner signer, int percent) {
    ConfigMap desired = composer.canary(current, canary, signer, percent);
    return new PublishedSnapshot(manifests.write(desired), current.manifest());
  }

  /** The canary announced in {@code snapshot}'s ConfigMap, or null (none, or unreadable). */
  public static Manifest canaryOf(PublishedSnapshot snapshot) {
    if (snapshot == null || snapshot.configMap() == null) {
      return null;
    }
    try {
      var canary = SnapshotConfigMaps.readCanary(snapshot.configMap());
      return canary == null ? null : canary.announced().manifest();
    } catch (SnapshotVerificationException e) {
      return null;
    }
  }

  /**
   * Publishes the payload of {@code target}, a retained version (trusted by the caller, see {@link
   * RetainedVersions#trusted}), as the new version {@code version}: its chain with one empty delta
   * appended, so every chunk it names is reused and only that delta (a header) is written. Readers
   * refuse a lower version or an older createdAt, so serving an old payload again takes a new
   * number; the delta's canonical chunk name carries it, like any delta's. The operator reads the
   * target's chunks back and verifies them first: a retained chunk that was deleted or edited fails
   * here, not in the readers.
   *
   * @param createdAt the new manifest's createdAt (never before the published one's)
   * @throws PublishException {@link Reasons#VERSION_NOT_RETAINED} when the target's chunks do not
   *     read back; otherwise as a publish, with nothing of this attempt left behind
   */
  public PublishedSnapshot rollBack(
      Manifest target,
      long version,
      int chunkSize,
      Instant createdAt,
      PublishedSnapshot current,
      BuildRecord build)
      throws PublishException {
    ManifestSigner signer = signer();
    BloomFilterBits bits = retained(target);
    ChunkWriters.Batch created = writers.batch(namespace, chunks);
    try {
      Manifest manifest =
          Manifest.withDelta(
              target,
              version,
              bits,
              target.keyCount(),
              target.sha256(),
              SnapshotDelta.encode(bits, bits, chunkSize, into(Part.delta(version), created)),
              createdAt);
      created.finish();
      return writeManifest(manifest, current, build, supersededBy(current, manifest), signer);
    } catch (IOException | RuntimeException e) {
      List<ChunkStore.Stored> toDelete = created.created();
      int left = rollBack(toDelete);
      throw PublishFailures.of(e, filterName, version, toDelete.size(), left);
    }
  }

  /** The verified bits of the retained version {@code target}, read back from its chunks. */
  private BloomFilterBits retained(Manifest target) throws PublishException {
    try {
      return materialize(target);
    } catch (SnapshotVerificationException | IOException | RuntimeException e) {
      throw new PublishException(
          Reasons.VERSION_NOT_RETAINED,
          "the chunks of retained version "
              + target.version()
              + " do not read back ("
              + e.getClass().getSimpleName()
              + "); the published version keeps serving",
          e);
    }
  }

  /** spec.snapshot.keepVersions, within its bounds (0: none). */
  public static int keepVersions(BloomFilter filter) {
    return ManifestComposer.keepVersions(filter);
  }

  /** What {@code next} supersedes of {@code current}, by the plan's rule. */
  private static List<Long> supersededBy(PublishedSnapshot current, Manifest next) {
    return current == null || current.manifest() == null
        ? List.of()
        : PublishPlan.superseded(current.manifest(), Part.of(next));
  }
}
