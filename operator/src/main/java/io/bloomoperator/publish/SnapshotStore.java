package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
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

  /** Where the chunks go and what writing them costs: ConfigMaps or an object store. */
  private final SnapshotBackend backend;

  /** Who creates the chunks: several at once within the operator's bound, or one by one. */
  private final ChunkWriters writers;

  /** Composes every manifest ConfigMap this store writes. */
  private final ManifestComposer composer;

  private final OwnManifests intents;

  /**
   * The signer, loaded at most once per store (one reconcile), before the first write needing it.
   */
  private ManifestSigner signer;

  /**
   * A store of {@code owner}'s snapshot, its chunks in ConfigMaps, that signs with {@code
   * signingKey} (read at each publish; null: unsigned manifests).
   */
  public SnapshotStore(KubernetesClient client, BloomFilter owner, SigningKeySecret signingKey) {
    this.client = client;
    this.owner = owner;
    this.namespace = owner.getMetadata().getNamespace();
    this.filterName = owner.getMetadata().getName();
    this.signingKey = signingKey;
    this.composer = new ManifestComposer(owner);
    this.manifests = ManifestWriter.of(client);
    this.backend = ConfigMapBackend.of(client, owner);
    this.writers = ChunkWriters.sequential();
    this.intents = null;
  }

  private SnapshotStore(
      SnapshotStore store,
      ManifestWriter manifests,
      SnapshotBackend backend,
      ChunkWriters writers) {
    this(store, manifests, backend, writers, store.intents);
  }

  private SnapshotStore(
      SnapshotStore store,
      ManifestWriter manifests,
      SnapshotBackend backend,
      ChunkWriters writers,
      OwnManifests intents) {
    this.intents = intents;
    this.client = store.client;
    this.owner = store.owner;
    this.namespace = store.namespace;
    this.filterName = store.filterName;
    this.signingKey = store.signingKey;
    this.composer = store.composer;
    this.manifests = manifests;
    this.backend = backend;
    this.writers = writers;
  }

  /**
   * This store with its chunks on {@code backend} (the manifest stays a ConfigMap): built from
   * {@link #backend()}, so what it was configured with (the publisher's stamp) carries over.
   */
  public SnapshotStore on(SnapshotBackend backend) {
    return new SnapshotStore(this, manifests, backend, writers);
  }

  /** Where the chunks go, and what writing them costs. */
  public SnapshotBackend backend() {
    return backend;
  }

  /**
   * This store also cleaning up {@code left}: the filter's chunks in object stores it no longer
   * uses, kept only while the versions they hold are named or retained.
   */
  public SnapshotStore leaving(List<ChunkStore> left) {
    return on(backend.leaving(left));
  }

  /**
   * This store with its chunks created through {@code writers}: several at once, all of them before
   * the manifest, and on failure every one this publish created deleted again.
   */
  public SnapshotStore writingChunksWith(ChunkWriters writers) {
    return new SnapshotStore(this, manifests, backend, writers);
  }

  /**
   * This store with every manifest write fenced by {@code fence} and everything it writes stamped
   * {@value ManifestWriter#ANNOTATION_PUBLISHED_BY} with {@code publisher} (null: no stamp).
   */
  public SnapshotStore writingAs(String publisher, WriteFence fence) {
    String stamp = ManifestWriter.boundedPublisher(publisher);
    return new SnapshotStore(
        this, manifests.fencedAs(stamp, fence), backend.stampedAs(stamp), writers);
  }

  /**
   * This store telling {@code own} of every manifest ConfigMap it is about to write, before it
   * writes it ({@link OwnManifests#writing}): a process killed between that write and the status
   * write recording it knows the manifest as its own when it starts again.
   */
  public SnapshotStore recordingIntentsIn(OwnManifests own) {
    return new SnapshotStore(this, manifests, backend, writers, own);
  }

  /**
   * This store with every manifest ConfigMap write charged to {@code budget} first ({@link
   * ChargedManifests}): the manifest goes to etcd whatever store the chunks go to.
   */
  public SnapshotStore chargingManifestsTo(WriteBudget budget, java.time.Clock clock) {
    return new SnapshotStore(
        this,
        new ChargedManifests(manifests, budget, namespace, filterName, clock),
        backend,
        writers);
  }

  /** The store the filter's chunks live in. */
  public ChunkStore chunks() {
    return backend.chunks();
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
    return new ManifestReader(client, owner).read();
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
    return new PlanningFacts(namespace + "/" + filterName, chunks(), backend.location())
        .of(bits, current, deltas, chunkSize, held);
  }

  /**
   * What a new version (or a confirm) is written from: the built filter, its key count and what
   * planning found ({@link #facts}: the published version's verified bits for a delta or a rebase,
   * and the new payload's digest; null for a whole version, nothing is reused).
   */
  public record Payload(BloomFilterBits bits, long keyCount, PublishPlan.Facts facts) {}

  /**
   * What a manifest write left: the manifest ConfigMap as the API server answered it, and the
   * canary it announced (null: none was).
   */
  public record Written(PublishedSnapshot state, Manifest canary) {

    static Written stable(PublishedSnapshot state) {
      return new Written(state, null);
    }
  }

  /**
   * Carries out {@code plan}, the one way this store writes a manifest.
   *
   * <ul>
   *   <li>a new version ({@link PublishPlan.Kind#WHOLE}, {@code DELTA}, {@code REBASE}): chunks
   *       first, then the manifest, published or (a canary plan over a published manifest)
   *       announced beside it, everything else of the ConfigMap kept;
   *   <li>{@code ROLLBACK}: the target's chunks read back and verified, one empty delta written,
   *       then the manifest;
   *   <li>{@code PROMOTE}: the canary written as {@code manifest.json}, the canary keys removed;
   *   <li>{@code WITHDRAW}: the canary keys removed, {@code manifest.json} untouched;
   *   <li>{@code CONFIRM}, {@code RESTAMP}, {@code FORGET}: the published manifest written again
   *       with a new build record, a fresh signed createdAt, or no retained versions. A conflict
   *       there is harmless and leaves {@code current} as the result.
   * </ul>
   *
   * Every write is guarded by {@code current}'s resourceVersion.
   *
   * @param current the published state the plan was made from (trusted, {@link OwnManifests})
   * @param payload the built filter, for a new version or a confirm (null otherwise)
   * @param build the build record the manifest carries afterwards (new version, confirm, promote,
   *     roll-back; null otherwise)
   * @throws PublishException with nothing of this attempt left behind; also when a signing key is
   *     configured but unusable ({@link Reasons#SIGNING_KEY}), before any chunk is written
   */
  public Written apply(
      PublishPlan plan, PublishedSnapshot current, Payload payload, BuildRecord build)
      throws PublishException {
    return switch (plan.kind()) {
      case CONFIRM -> Written.stable(confirm(plan, current, payload, build));
      case WHOLE, DELTA, REBASE -> writeVersion(plan, current, payload, build);
      case ROLLBACK -> rollBack(plan, current, build);
      case PROMOTE -> Written.stable(promote(plan, current, build));
      case WITHDRAW -> Written.stable(withdraw(current));
      case RESTAMP -> Written.stable(restamp(plan, current));
      case FORGET -> Written.stable(forget(current));
    };
  }

  /**
   * As {@link #apply} for a build's plan (a new version or a confirm) published, not announced.
   *
   * @return the manifest ConfigMap as this write left it
   */
  public PublishedSnapshot apply(
      PublishPlan plan,
      PublishPlan.Facts facts,
      BloomFilterBits bits,
      long keyCount,
      PublishedSnapshot current,
      BuildRecord build)
      throws PublishException {
    return apply(plan, current, new Payload(bits, keyCount, facts), build).state();
  }

  /**
   * Publishes {@code bits} as the whole snapshot of {@code version} ({@link PublishPlan#whole}).
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
        PublishPlan.whole(
            current == null ? null : current.manifest(), version, chunkSize, createdAt);
    return apply(whole, current, new Payload(bits, keyCount, null), build).state().manifest();
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
    return SnapshotDecoder.decode(manifest, chunks());
  }

  /** A new version: published, or announced as a canary beside {@code current}'s manifest. */
  private Written writeVersion(
      PublishPlan plan, PublishedSnapshot current, Payload payload, BuildRecord build)
      throws PublishException {
    boolean canary = plan.canary() && current != null && current.manifest() != null;
    // Before any chunk: an unusable key must not leave chunks behind or publish unsigned.
    ManifestSigner signer = signer();
    PublishPlan.Facts facts = payload.facts();
    VersionWrites versions = versions();
    VersionWrites.Encoding encoding =
        versions.newVersion(
            plan,
            payload.bits(),
            payload.keyCount(),
            facts == null ? null : facts.previous(),
            facts == null ? null : facts.sha256(),
            current == null ? null : current.manifest());
    return versions.write(
        plan,
        encoding,
        manifest ->
            canary
                ? new Written(
                    writeManifest(
                        composer.canary(current, manifest, signer, plan.canaryPercent()),
                        current.manifest()),
                    manifest)
                : Written.stable(publishManifest(plan, manifest, current, build, signer)),
        manifest -> committedAnyway(manifest, current, canary));
  }

  /**
   * Publishes the payload of {@code plan}'s target, a retained version (trusted by the caller, see
   * {@link RetainedVersions#trusted}), as the plan's new version: its chain with one empty delta
   * appended. Readers refuse a lower version or an older createdAt, so serving an old payload again
   * takes a new number. The target's chunks are read back and verified first: a retained chunk that
   * was deleted or edited fails here ({@link Reasons#VERSION_NOT_RETAINED}), not in the readers.
   */
  private Written rollBack(PublishPlan plan, PublishedSnapshot current, BuildRecord build)
      throws PublishException {
    ManifestSigner signer = signer();
    BloomFilterBits bits = retained(plan.target());
    VersionWrites versions = versions();
    return versions.write(
        plan,
        versions.rollBack(plan, bits),
        manifest -> Written.stable(publishManifest(plan, manifest, current, build, signer)),
        manifest -> Optional.empty());
  }

  /**
   * Makes the canary (trusted by the caller against its record) the published version: written as
   * {@code manifest.json} with {@code build} as its build record, the canary keys removed, the
   * versions the plan supersedes retained as by any publish. Its chunks exist already.
   */
  private PublishedSnapshot promote(PublishPlan plan, PublishedSnapshot current, BuildRecord build)
      throws PublishException {
    ManifestSigner signer = signer();
    try {
      return publishManifest(plan, plan.target(), current, build, signer);
    } catch (RuntimeException e) {
      throw PublishFailures.of(e, filterName, plan.version(), 0, 0);
    }
  }

  /**
   * Removes the canary from the manifest ConfigMap. Readers of the share that loaded it keep it
   * until a newer version is published: the caller publishes the stable payload again when any of
   * them did.
   */
  private PublishedSnapshot withdraw(PublishedSnapshot current) throws PublishException {
    try {
      return writeManifest(composer.withdrawn(current), current.manifest());
    } catch (RuntimeException e) {
      throw PublishFailures.of(e, filterName, current.manifest().version(), 0, 0);
    }
  }

  /**
   * Records that a rebuild produced exactly the published payload: the version stays, the build
   * record moves on (readers see an unchanged version and do not reload). With a signing key the
   * published manifest is also re-signed if its signature is missing or by another key (signing was
   * just enabled, or the key rotated), but only if it is exactly the manifest this operator would
   * write for the payload: whoever can edit the ConfigMap must not get the operator to sign their
   * version of it.
   */
  private PublishedSnapshot confirm(
      PublishPlan plan, PublishedSnapshot current, Payload payload, BuildRecord build) {
    ConfigMap updated = composer.confirmed(current, build);
    if (payload != null && payload.bits() != null && signingKey != null) {
      new ManifestResigner(client, signingKey, namespace, filterName, chunks(), backend.location())
          .resignIfNeeded(
              updated, current.manifest(), payload.bits(), payload.keyCount(), plan.chunkSize());
    }
    return quietly("build record not updated", () -> writeManifest(updated, current.manifest()))
        .orElse(current);
  }

  /** The published version with the plan's createdAt, re-signed; its chunks and digest stay. */
  private PublishedSnapshot restamp(PublishPlan plan, PublishedSnapshot current)
      throws PublishException {
    Manifest fresh = current.manifest().withCreatedAt(plan.createdAt());
    ConfigMap desired = composer.restamped(current, fresh, signer());
    return quietly("manifest not re-stamped", () -> writeManifest(desired, fresh)).orElse(current);
  }

  /**
   * The grace period of the versions {@code current} retains is over: the manifest stops naming
   * them, so the chunk clean-up removes them. A failure is harmless: the next clean finds the
   * chunks already gone and tries again.
   */
  private PublishedSnapshot forget(PublishedSnapshot current) {
    return quietly(
            "previous-version annotations not cleared",
            () -> writeManifest(composer.forgotten(current), current.manifest()))
        .orElse(current);
  }

  /**
   * The result of a write whose conflict is harmless (the resourceVersion read moved on: the next
   * reconcile decides again); empty when it did not go through.
   */
  private Optional<PublishedSnapshot> quietly(
      String what, java.util.function.Supplier<PublishedSnapshot> write) {
    try {
      return Optional.of(write.get());
    } catch (KubernetesClientException e) {
      LOG.debug("{}/{}: {}: {}", namespace, filterName, what, e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * The re-stamp interval of this store's signing key; {@link Duration#ZERO} when manifests are not
   * signed or never re-stamped.
   */
  public Duration restampInterval() {
    return signingKey == null ? Duration.ZERO : signingKey.restampInterval();
  }

  /** How long until {@code current} is due for a re-stamp ({@link PublishPlan#restampDue}). */
  public Optional<Duration> restampDue(PublishedSnapshot current, Instant now) {
    return PublishPlan.restampDue(
        current == null ? null : current.manifest(), restampInterval(), now);
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
            : Written.stable(after));
  }

  /** Writes the chunks of this store's versions. */
  private VersionWrites versions() {
    return new VersionWrites(namespace, filterName, chunks(), writers, backend.location());
  }

  /** The signer of this store's key, loaded once; null for unsigned manifests. */
  private ManifestSigner signer() throws PublishException {
    if (signer == null && signingKey != null) {
      signer = signingKey.load(client);
    }
    return signer;
  }

  private PublishedSnapshot readQuietly() {
    return new ManifestReader(client, owner).readQuietly();
  }

  /**
   * Publishes {@code manifest} over {@code current} as {@code plan} decided: the versions it
   * supersedes retained from now on, {@code build} as its record.
   */
  private PublishedSnapshot publishManifest(
      PublishPlan plan,
      Manifest manifest,
      PublishedSnapshot current,
      BuildRecord build,
      ManifestSigner signer) {
    ConfigMap desired =
        composer.version(current, manifest, build, plan.superseded(), signer, Instant.now());
    return writeManifest(desired, manifest);
  }

  /** Writes {@code desired}, whose published manifest is {@code manifest}. */
  private PublishedSnapshot writeManifest(ConfigMap desired, Manifest manifest) {
    if (intents != null) {
      intents.writing(owner, desired, manifest.version());
    }
    return new PublishedSnapshot(manifests.write(desired), manifest);
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
}
