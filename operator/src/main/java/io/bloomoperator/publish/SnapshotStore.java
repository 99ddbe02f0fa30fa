package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSignature;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes and reads a filter's snapshot ConfigMaps, following docs/snapshot-protocol.md: chunks
 * first (immutable, created never applied), then the manifest with a resourceVersion precondition,
 * so a reader never sees a version whose chunks are missing. With a signing key, the manifest
 * ConfigMap also gets {@code manifest.sig}, the signature of its exact manifest.json text and
 * namespace.
 */
public final class SnapshotStore {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotStore.class);

  /**
   * Which operator replica wrote a manifest or chunk ConfigMap (its leader-election identity).
   * Informational, for audits and the fault suite's write history: readers never trust it, anyone
   * who can write ConfigMaps can set it.
   */
  public static final String ANNOTATION_PUBLISHED_BY = "bloomoperator.io/published-by";

  /**
   * Marks a chunk whose create failed but may have been applied (see {@code create}); not a valid
   * resourceVersion, which is a decimal number.
   */
  private static final String MAYBE_CREATED = "maybe-created";

  /** Kubernetes' limit for a name-like value; an identity is a pod name. */
  private static final int MAX_PUBLISHER_LENGTH = 253;

  private final KubernetesClient client;
  private final BloomFilter owner;
  private final String namespace;
  private final String filterName;
  private final SigningKeySecret signingKey;
  private final String publisher;
  private final WriteFence fence;

  /** The manifest ConfigMap as this store's last successful write left it, or null. */
  private PublishedSnapshot written;

  /** A store that publishes unsigned manifests. */
  public SnapshotStore(KubernetesClient client, BloomFilter owner) {
    this(client, owner, null);
  }

  /**
   * A store that signs with {@code signingKey} (null: unsigned), stamps {@value
   * #ANNOTATION_PUBLISHED_BY} with {@code publisher} on what it writes (null: no stamp) and asks
   * {@code fence} right before each manifest write.
   */
  public SnapshotStore(
      KubernetesClient client,
      BloomFilter owner,
      SigningKeySecret signingKey,
      String publisher,
      WriteFence fence) {
    this.fence = fence;
    this.signingKey = signingKey;
    this.client = client;
    this.owner = owner;
    this.namespace = owner.getMetadata().getNamespace();
    this.filterName = owner.getMetadata().getName();
    this.publisher = boundedPublisher(publisher);
  }

  /**
   * A store that signs every manifest it publishes with the key in {@code signingKey} (read at each
   * publish); null publishes unsigned manifests.
   */
  public SnapshotStore(KubernetesClient client, BloomFilter owner, SigningKeySecret signingKey) {
    this(client, owner, signingKey, null, WriteFence.NONE);
  }

  /** {@code publisher} cut to a length any annotation value accepts; null stays null. */
  static String boundedPublisher(String publisher) {
    if (publisher == null || publisher.isBlank()) {
      return null;
    }
    return publisher.length() <= MAX_PUBLISHER_LENGTH
        ? publisher
        : publisher.substring(0, MAX_PUBLISHER_LENGTH);
  }

  /** Sets the {@value #ANNOTATION_PUBLISHED_BY} stamp of {@code publisher} (null: leaves it). */
  static void stamp(Map<String, String> annotations, String publisher) {
    if (publisher != null) {
      annotations.put(ANNOTATION_PUBLISHED_BY, publisher);
    }
  }

  /**
   * Reads the manifest ConfigMap. A manifest that does not parse is reported and treated as absent,
   * so the next publish replaces it.
   *
   * @return null when there is no manifest ConfigMap
   * @throws PublishException {@link PublishException#NAME_CONFLICT} when a ConfigMap of the
   *     manifest's name exists but is not controlled by this BloomFilter: it is someone else's and
   *     is neither adopted nor overwritten
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
      throw new PublishException(
          Reasons.NAME_CONFLICT,
          "ConfigMap "
              + configMap.getMetadata().getName()
              + " exists and is not controlled by this BloomFilter; it is left untouched. Rename"
              + " the BloomFilter, or delete or rename the ConfigMap (a BloomFilter deleted and"
              + " re-created under the same name waits here until the garbage collector removes the"
              + " old snapshot)",
          null);
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
   * Publishes {@code bits} as {@code version}. On failure every chunk this call created is deleted
   * again and the current manifest is left as it was.
   *
   * @param current what {@link #read()} returned; its resourceVersion guards the manifest update
   * @throws PublishException also when a signing key is configured but unusable (reason {@link
   *     PublishException#SIGNING_KEY}); then nothing was created
   */
  public Manifest publish(
      BloomFilterBits bits,
      long keyCount,
      long version,
      int chunkSize,
      PublishedSnapshot current,
      BuildRecord build,
      Instant now)
      throws PublishException {
    return publishChunksThenManifest(
        version,
        current,
        build,
        consumer -> {
          SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, chunkSize, consumer);
          return Manifest.of(filterName, version, bits, keyCount, encoded, now);
        });
  }

  /**
   * Publishes {@code bits} as {@code version}, written as the delta from {@code previousBits} (the
   * verified payload of {@code current}'s manifest, see {@link #materialize}) appended to its
   * chain. The same guarantees as {@link #publish}.
   *
   * @param payloadSha256 SHA-256 of the whole payload of {@code bits}
   */
  public Manifest publishDelta(
      BloomFilterBits previousBits,
      BloomFilterBits bits,
      String payloadSha256,
      long keyCount,
      long version,
      int chunkSize,
      PublishedSnapshot current,
      BuildRecord build,
      Instant now)
      throws PublishException {
    return publishChunksThenManifest(
        version,
        current,
        build,
        consumer -> {
          SnapshotDelta.Result delta =
              SnapshotDelta.encode(previousBits, bits, chunkSize, consumer::acceptDelta);
          return Manifest.withDelta(
              current.manifest(), version, bits, keyCount, payloadSha256, delta, now);
        });
  }

  /**
   * Compacts the chain {@code current} heads: writes {@code previousBits} (the verified payload of
   * its version) as a new base under that version, then {@code bits} as the delta from it, then a
   * manifest naming just those two. Readers holding the published version fetch only the delta; the
   * old base and deltas are retained for the grace period like any replaced version.
   */
  public Manifest publishRebased(
      BloomFilterBits previousBits,
      BloomFilterBits bits,
      String payloadSha256,
      long keyCount,
      long version,
      int chunkSize,
      PublishedSnapshot current,
      BuildRecord build,
      Instant now)
      throws PublishException {
    long baseVersion = current.manifest().version();
    return publishChunksThenManifest(
        version,
        current,
        build,
        consumer -> {
          SnapshotEncoder.Result encodedBase =
              SnapshotEncoder.encode(
                  previousBits,
                  chunkSize,
                  (index, data, length, sha256) ->
                      consumer.acceptBase(baseVersion, index, data, length));
          Manifest base =
              Manifest.of(
                  filterName,
                  baseVersion,
                  previousBits,
                  current.manifest().keyCount(),
                  encodedBase,
                  now);
          SnapshotDelta.Result delta =
              SnapshotDelta.encode(previousBits, bits, chunkSize, consumer::acceptDelta);
          return Manifest.withDelta(base, version, bits, keyCount, payloadSha256, delta, now);
        });
  }

  /**
   * The verified bits of {@code manifest}'s version, read back from the chunks in the cluster (the
   * base, then each delta applied): what a new delta is computed against. Never taken from memory,
   * so a restarted operator continues the chain exactly where the cluster is.
   *
   * @throws SnapshotVerificationException if a chunk is missing or anything fails verification
   * @throws IOException if a chunk has no data or not the announced amount
   */
  public BloomFilterBits materialize(Manifest manifest)
      throws SnapshotVerificationException, IOException {
    return SnapshotDecoder.decode(manifest, SnapshotConfigMaps.chunkSource(client, namespace));
  }

  /** Writes the chunks of one version into {@code chunks} and returns its manifest. */
  @FunctionalInterface
  private interface ChunkWriting {
    Manifest write(ChunkSink chunks) throws IOException;
  }

  /** Creates chunk ConfigMaps: of the version being published (whole or delta) or of a new base. */
  private interface ChunkSink extends SnapshotEncoder.ChunkConsumer {
    void acceptDelta(int index, byte[] data, int length, String sha256) throws IOException;

    void acceptBase(long baseVersion, int index, byte[] data, int length) throws IOException;
  }

  /**
   * Chunks first, then the manifest; on failure every chunk this call created is deleted again and
   * the current manifest is left as it was.
   */
  private Manifest publishChunksThenManifest(
      long version, PublishedSnapshot current, BuildRecord build, ChunkWriting chunks)
      throws PublishException {
    // Before any chunk: an unusable key must not leave chunks behind or publish unsigned.
    ManifestSigner signer = signingKey == null ? null : signingKey.load(client);
    // Name -> resourceVersion of each chunk this call created: a chunk never changes, so the
    // resourceVersion identifies exactly our object (see deleteQuietly).
    Map<String, String> created = new java.util.LinkedHashMap<>();
    try {
      Manifest manifest =
          chunks.write(
              new ChunkSink() {
                @Override
                public void accept(int index, byte[] data, int length, String sha256) {
                  create(
                      SnapshotConfigMaps.chunk(
                          namespace, filterName, version, index, data, length));
                }

                @Override
                public void acceptDelta(int index, byte[] data, int length, String sha256) {
                  create(
                      SnapshotConfigMaps.deltaChunk(
                          namespace, filterName, version, index, data, length));
                }

                @Override
                public void acceptBase(long baseVersion, int index, byte[] data, int length) {
                  create(
                      SnapshotConfigMaps.chunk(
                          namespace, filterName, baseVersion, index, data, length));
                }

                private void create(ConfigMap chunk) {
                  ConfigMap stored;
                  try {
                    stored = createChunk(chunk);
                  } catch (KubernetesClientException e) {
                    // etcd applies the write that takes it over its quota and only then answers
                    // NOSPACE, and a timed-out create may have been applied too: the chunk may
                    // exist, so it is removed with the others (after an ownership check).
                    created.put(chunk.getMetadata().getName(), MAYBE_CREATED);
                    throw e;
                  }
                  created.put(
                      chunk.getMetadata().getName(),
                      stored == null || stored.getMetadata() == null
                          ? null
                          : stored.getMetadata().getResourceVersion());
                }
              });
      // The chunks took time: a replica frozen meanwhile may have lost the Lease.
      fence.check();
      try {
        writeManifest(manifest, current, build, signer);
      } catch (RuntimeException e) {
        // The write may have been committed even though it reported failure (a timeout, or the
        // client's retry of a committed update answered with 409). If the manifest now names
        // this very version, it is published and its chunks must stay.
        PublishedSnapshot after = readQuietly();
        if (after != null
            && after.manifest() != null
            && after.manifest().version() == version
            && after.manifest().sha256().equals(manifest.sha256())) {
          LOG.info(
              "{}/{}: manifest write of version {} reported {} but was committed",
              namespace,
              filterName,
              version,
              e.getMessage());
          written = after;
          return manifest;
        }
        throw e;
      }
      return manifest;
    } catch (IOException | RuntimeException e) {
      int left = deleteQuietly(created);
      if (e instanceof WriteFence.NotLeaderException notLeader) {
        throw notLeader;
      }
      if (StorageFull.causedBy(e)) {
        // Expected while etcd is full, so no stack trace: the reason says it all. Deletes still
        // pass a full etcd, so the chunks written so far are normally gone already.
        throw new PublishException(
            Reasons.STORAGE_FULL,
            StorageFull.DESCRIPTION
                + ": version "
                + version
                + " was not published; "
                + (left == 0
                    ? "the " + created.size() + " chunk(s) written before were removed"
                    : left + " chunk(s) written before are left for the next reconcile to remove")
                + "; the published version keeps serving",
            null);
      }
      if (e instanceof ChunkNameTaken taken) {
        throw new PublishException(
            Reasons.NAME_CONFLICT,
            "ConfigMap "
                + taken.name
                + " exists and is not a chunk of this BloomFilter; it is left untouched and version"
                + " "
                + version
                + " was not published",
            e);
      }
      if (e instanceof KubernetesClientException kce && kce.getCode() == 409) {
        throw new PublishException(
            Reasons.MANIFEST_CONFLICT,
            "manifest "
                + SnapshotNames.manifestName(filterName)
                + " changed while version "
                + version
                + " was being published; will retry",
            e);
      }
      throw new PublishException(
          Reasons.PUBLISH_FAILED,
          "publishing version " + version + " failed: " + rootMessage(e),
          e);
    }
  }

  private ConfigMap createChunk(ConfigMap chunk) {
    chunk.getMetadata().setOwnerReferences(List.of(ownerReference()));
    if (publisher != null) {
      Map<String, String> annotations =
          chunk.getMetadata().getAnnotations() == null
              ? new HashMap<>()
              : new HashMap<>(chunk.getMetadata().getAnnotations());
      stamp(annotations, publisher);
      chunk.getMetadata().setAnnotations(annotations);
    }
    String name = chunk.getMetadata().getName();
    // create, never apply: client-side apply would copy the whole chunk into the
    // last-applied-configuration annotation, far beyond the 256 KiB annotation limit.
    try {
      return client.configMaps().inNamespace(namespace).resource(chunk).create();
    } catch (KubernetesClientException e) {
      // Our own leftovers were removed by label before this publish, so an existing object of
      // this name is someone else's.
      if (e.getCode() == 409) {
        throw new ChunkNameTaken(name, e);
      }
      throw e;
    }
  }

  /** A chunk's name is taken by a ConfigMap this filter does not own. */
  private static final class ChunkNameTaken extends RuntimeException {
    private final String name;

    ChunkNameTaken(String name, Throwable cause) {
      super("ConfigMap " + name + " already exists", cause);
      this.name = name;
    }
  }

  /**
   * What a build was made from. Kept on the manifest ConfigMap, not only in the status, so that a
   * reconcile caused by the operator's own manifest write (or a lost status) is recognised as up to
   * date instead of rebuilding.
   */
  public record BuildRecord(String sourceToken, long specGeneration, Instant builtAt) {

    void annotate(Map<String, String> annotations) {
      SnapshotConfigMaps.putBuildRecord(annotations, sourceToken, specGeneration, builtAt);
    }
  }

  /**
   * Records that a rebuild produced exactly the published payload: the version stays, the
   * manifest's build record moves on (readers see an unchanged version and do not reload). Guarded
   * by the resourceVersion read; a conflict is harmless and only costs a rebuild later. The
   * manifest is never re-signed.
   */
  public void confirm(PublishedSnapshot current, BuildRecord build) {
    confirm(current, build, null, 0, 0);
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
   */
  public void confirm(
      PublishedSnapshot current,
      BuildRecord build,
      BloomFilterBits bits,
      long keyCount,
      int chunkSize) {
    ConfigMap updated = io.fabric8.kubernetes.client.utils.Serialization.clone(current.configMap());
    Map<String, String> annotations =
        updated.getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(updated.getMetadata().getAnnotations());
    build.annotate(annotations);
    stamp(annotations, publisher);
    updated.getMetadata().setAnnotations(annotations);
    if (bits != null) {
      resignIfNeeded(updated, current.manifest(), bits, keyCount, chunkSize);
    }
    try {
      ConfigMap stored = client.configMaps().inNamespace(namespace).resource(updated).update();
      written = new PublishedSnapshot(stored, current.manifest());
    } catch (KubernetesClientException e) {
      LOG.debug("build record of {}/{} not updated: {}", namespace, filterName, e.getMessage());
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
   * @return whether the manifest was re-stamped ({@link #written()} then holds it)
   * @throws PublishException if the signing key is unusable
   */
  public boolean restampIfDue(PublishedSnapshot current, Instant now) throws PublishException {
    if (restampDue(signingKey, current, now).map(d -> !d.isZero()).orElse(true)) {
      return false;
    }
    ManifestSigner signer = signingKey.load(client);
    Map<String, String> annotations =
        current.configMap().getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(current.configMap().getMetadata().getAnnotations());
    stamp(annotations, publisher);
    Manifest fresh = current.manifest().withCreatedAt(now);
    ConfigMap desired = SnapshotConfigMaps.manifest(namespace, fresh, signer, annotations);
    desired.getMetadata().setOwnerReferences(List.of(ownerReference()));
    desired
        .getMetadata()
        .setResourceVersion(current.configMap().getMetadata().getResourceVersion());
    fence.check();
    try {
      ConfigMap stored = client.configMaps().inNamespace(namespace).resource(desired).update();
      written = new PublishedSnapshot(stored, fresh);
      return true;
    } catch (KubernetesClientException e) {
      LOG.debug("{}/{}: manifest not re-stamped: {}", namespace, filterName, e.getMessage());
      return false;
    }
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

  /**
   * The manifest ConfigMap exactly as this store's last successful manifest write (publish or
   * confirm) left it, as the API server answered that write; null if none succeeded. This, not a
   * read-back, is what the operator records as its own: someone may edit the ConfigMap in between.
   */
  public PublishedSnapshot written() {
    return written;
  }

  private PublishedSnapshot readQuietly() {
    try {
      return read();
    } catch (KubernetesClientException | PublishException e) {
      return null;
    }
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

  /** Best effort, like the rest of confirm: a failure only leaves the signature as it was. */
  private void resignIfNeeded(
      ConfigMap manifest, Manifest published, BloomFilterBits bits, long keyCount, int chunkSize) {
    String json = SnapshotConfigMaps.manifestJson(manifest);
    if (signingKey == null || json == null || published == null) {
      return;
    }
    ManifestSigner signer;
    try {
      signer = signingKey.load(client);
    } catch (PublishException e) {
      LOG.warn("{}/{}: manifest not re-signed: {}", namespace, filterName, e.getMessage());
      return;
    }
    String existing = SnapshotConfigMaps.signatureData(manifest);
    try {
      if (existing != null && signer.keyId().equals(ManifestSignature.fromData(existing).keyId())) {
        return;
      }
    } catch (SnapshotVerificationException e) {
      // malformed: replace it
    }
    if (!writtenFor(published, bits, keyCount, chunkSize)) {
      LOG.warn(
          "{}/{}: the published manifest is not the one this build would write; not "
              + "signing it (the next new version will be signed)",
          namespace,
          filterName);
      return;
    }
    Map<String, String> signed = new HashMap<>(manifest.getData());
    signed.putAll(
        SnapshotConfigMaps.manifest(
                namespace, filterName, json, signer.sign(namespace, json).toData(), null)
            .getData());
    manifest.setData(signed);
  }

  /**
   * Whether {@code published} is field for field what {@link #publish} writes for {@code bits} as
   * its version (its creation time aside, which is not reproducible). Costs one digest pass.
   */
  private boolean writtenFor(
      Manifest published, BloomFilterBits bits, long keyCount, int chunkSize) {
    Instant createdAt;
    try {
      createdAt = Instant.parse(published.createdAt());
    } catch (java.time.format.DateTimeParseException e) {
      return false;
    }
    try {
      Manifest expected =
          Manifest.of(
              filterName,
              published.version(),
              bits,
              keyCount,
              SnapshotEncoder.encode(bits, chunkSize, (index, data, length, sha256) -> {}),
              createdAt);
      if (!published.chained()) {
        return expected.equals(published);
      }
      // A chain cannot be recomputed from the bits alone: check every field that describes the
      // result, then that base and deltas, as stored, verifiably produce exactly these bits.
      return expected.sha256().equals(published.sha256())
          && expected.keyCount() == published.keyCount()
          && expected.expectedFpp() == published.expectedFpp()
          && published.describes(bits)
          && filterName.equals(published.filterName())
          && materialize(published).equals(bits);
    } catch (IOException | SnapshotVerificationException e) {
      return false;
    }
  }

  private void writeManifest(
      Manifest manifest, PublishedSnapshot current, BuildRecord build, ManifestSigner signer) {
    Map<String, String> annotations = new HashMap<>();
    build.annotate(annotations);
    stamp(annotations, publisher);
    if (current != null && current.manifest() != null) {
      List<Long> dropped = dropped(current.manifest(), manifest);
      if (dropped.isEmpty()) {
        // A delta appended to the chain drops nothing; versions an earlier new base dropped keep
        // their grace period.
        carrySuperseded(current, annotations);
      } else {
        // The grace period starts when readers can first see the new version: now, not when the
        // reconcile (and a possibly long build) began.
        SnapshotConfigMaps.putSuperseded(annotations, dropped, Instant.now());
      }
    }
    ConfigMap desired = SnapshotConfigMaps.manifest(namespace, manifest, signer, annotations);
    desired.getMetadata().setOwnerReferences(List.of(ownerReference()));
    ConfigMap stored;
    if (current == null) {
      stored = client.configMaps().inNamespace(namespace).resource(desired).create();
    } else {
      // The resourceVersion we read is the precondition: a concurrent writer makes this fail
      // with 409 instead of silently replacing a manifest we have not seen.
      desired
          .getMetadata()
          .setResourceVersion(current.configMap().getMetadata().getResourceVersion());
      stored = client.configMaps().inNamespace(namespace).resource(desired).update();
    }
    written = new PublishedSnapshot(stored, manifest);
  }

  /**
   * The versions whose chunks {@code before} names and {@code after} does not name in the same
   * role: a version that was a delta and becomes the base keeps its base chunks but drops its delta
   * chunks, which readers of {@code before} may still be fetching.
   */
  private static List<Long> dropped(Manifest before, Manifest after) {
    java.util.Set<String> kept = roles(after);
    List<Long> dropped = new ArrayList<>();
    for (String role : roles(before)) {
      long version = Long.parseLong(role.substring(1));
      if (!kept.contains(role) && !dropped.contains(version)) {
        dropped.add(version);
      }
    }
    return dropped;
  }

  private static java.util.Set<String> roles(Manifest manifest) {
    java.util.Set<String> roles = new java.util.LinkedHashSet<>();
    roles.add("b" + manifest.baseVersion());
    manifest.deltas().forEach(d -> roles.add("d" + d.version()));
    return roles;
  }

  private static void carrySuperseded(PublishedSnapshot current, Map<String, String> annotations) {
    List<Long> previous = current.previousVersions();
    if (!previous.isEmpty() && current.supersededAt() != null) {
      SnapshotConfigMaps.putSuperseded(annotations, previous, current.supersededAt());
    }
  }

  private OwnerReference ownerReference() {
    return new OwnerReferenceBuilder()
        .withApiVersion(owner.getApiVersion())
        .withKind(owner.getKind())
        .withName(filterName)
        .withUid(owner.getMetadata().getUid())
        .withController(true)
        // Not blocking: foreground deletion of a BloomFilter need not wait for its snapshot,
        // and blocking would need update rights on bloomfilters/finalizers on clusters that
        // enforce owner-reference permissions.
        .withBlockOwnerDeletion(false)
        .build();
  }

  /**
   * Deletes the chunks this publish created, each only if it is still the object created (its
   * resourceVersion as a delete precondition). By name alone, an operator that lost its lease in
   * the middle of a publish would delete the chunks of the same name that the new leader created
   * after its janitor removed ours: chunks of the published version.
   *
   * @return how many could not be deleted
   */
  private int deleteQuietly(Map<String, String> created) {
    int left = 0;
    for (Map.Entry<String, String> chunk : created.entrySet()) {
      String name = chunk.getKey();
      try {
        var resource = client.configMaps().inNamespace(namespace).withName(name);
        if (MAYBE_CREATED.equals(chunk.getValue())) {
          ConfigMap maybe = resource.get();
          if (maybe != null && controlledByOwner(maybe)) {
            resource.lockResourceVersion(maybe.getMetadata().getResourceVersion()).delete();
          }
        } else if (chunk.getValue() == null) {
          resource.delete(); // a server that answered without the object: ours by name only
        } else {
          resource.lockResourceVersion(chunk.getValue()).delete();
        }
      } catch (KubernetesClientException e) {
        left++;
        // 409: the name now holds another writer's chunk, which stays. Otherwise the janitor
        // removes chunks of unpublished versions on the next reconcile.
        LOG.warn(
            "could not delete chunk {}/{} of a failed publish: {}",
            namespace,
            name,
            e.getMessage());
      }
    }
    return left;
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + t.getMessage() + ")";
  }
}
