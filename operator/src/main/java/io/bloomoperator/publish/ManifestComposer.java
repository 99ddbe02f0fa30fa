package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The one place the desired manifest ConfigMap of a filter is composed, for every kind of manifest
 * write: a new version, a re-stamp, a canary announced or withdrawn, a confirmed build record, the
 * end of a grace period. Pure: from the published state, the new manifest and the signer to a
 * ConfigMap, guarded by the published state's resourceVersion (a concurrent writer makes the write
 * fail with 409 instead of silently replacing a manifest that was not seen).
 */
final class ManifestComposer {

  private final BloomFilter owner;
  private final String namespace;

  ManifestComposer(BloomFilter owner) {
    this.owner = owner;
    this.namespace = owner.getMetadata().getNamespace();
  }

  /**
   * {@code next} published over {@code current} (null: none): {@code build}'s record, the versions
   * it supersedes ({@code superseded}, as the plan decided) retained from {@code at} on, what the
   * operator recorded as retained.
   */
  ConfigMap version(
      PublishedSnapshot current,
      Manifest next,
      BuildRecord build,
      List<Long> superseded,
      ManifestSigner signer,
      Instant at) {
    ConfigMap desired =
        SnapshotConfigMaps.manifest(
            namespace,
            next,
            signer,
            PublishedSnapshot.annotationsFor(current, next, build, superseded, at));
    desired.getMetadata().setOwnerReferences(List.of(ownerReference(owner)));
    retain(desired, retainedAfter(current));
    if (current != null) {
      desired.getMetadata().setResourceVersion(current.resourceVersion());
    }
    return desired;
  }

  /** {@code current} again, its manifest's createdAt now {@code fresh}'s, re-signed. */
  ConfigMap restamped(PublishedSnapshot current, Manifest fresh, ManifestSigner signer) {
    Map<String, String> annotations =
        current.configMap().getMetadata().getAnnotations() == null
            ? new HashMap<>()
            : new HashMap<>(current.configMap().getMetadata().getAnnotations());
    ConfigMap desired = SnapshotConfigMaps.manifest(namespace, fresh, signer, annotations);
    desired.getMetadata().setOwnerReferences(List.of(ownerReference(owner)));
    desired.getMetadata().setResourceVersion(current.resourceVersion());
    // Re-stamping keeps what the published version retains.
    retain(desired, RetainedVersions.of(current.configMap()));
    return desired;
  }

  /** {@code canary} announced beside {@code current}'s manifest; everything else kept. */
  ConfigMap canary(PublishedSnapshot current, Manifest canary, ManifestSigner signer, int percent) {
    String json = canary.toJson();
    return SnapshotConfigMaps.withCanary(
        current.configMap(),
        json,
        signer == null ? null : signer.sign(namespace, json).toData(),
        percent);
  }

  /** {@code current} without its canary; {@code manifest.json} untouched. */
  ConfigMap withdrawn(PublishedSnapshot current) {
    return SnapshotConfigMaps.withCanary(current.configMap(), null, null, 0);
  }

  /** {@code current} with {@code build} recorded: a rebuild confirmed its payload. */
  ConfigMap confirmed(PublishedSnapshot current, BuildRecord build) {
    return current.confirmedBy(build);
  }

  /** {@code current} retaining no previous version: their grace period is over. */
  ConfigMap forgotten(PublishedSnapshot current) {
    return current.forgettingPrevious();
  }

  /**
   * What the manifest that replaces {@code current} retains: the versions the operator recorded
   * (never an entry someone else added), {@code current}'s own in front, as many as
   * spec.snapshot.keepVersions says.
   */
  private RetainedVersions retainedAfter(PublishedSnapshot current) {
    if (current == null) {
      return RetainedVersions.NONE;
    }
    return RetainedVersions.of(current.configMap())
        .trusted(owner.getStatus())
        .after(current.manifest(), keepVersions(owner));
  }

  /** spec.snapshot.keepVersions, within its bounds (0: none). */
  static int keepVersions(BloomFilter filter) {
    var snapshot = filter.getSpec() == null ? null : filter.getSpec().getSnapshot();
    Integer keep = snapshot == null ? null : snapshot.getKeepVersions();
    return keep == null ? 0 : Math.max(0, Math.min(keep, SnapshotSpec.MAX_KEEP_VERSIONS));
  }

  private static void retain(ConfigMap desired, RetainedVersions retained) {
    if (retained.manifests().isEmpty()) {
      return;
    }
    Map<String, String> data = new HashMap<>(desired.getData());
    data.put(RetainedVersions.DATA_KEY, retained.toData());
    desired.setData(data);
  }

  /** The controller reference every object of {@code owner}'s snapshot carries. */
  static OwnerReference ownerReference(BloomFilter owner) {
    return new OwnerReferenceBuilder()
        .withApiVersion(owner.getApiVersion())
        .withKind(owner.getKind())
        .withName(owner.getMetadata().getName())
        .withUid(owner.getMetadata().getUid())
        .withController(true)
        // Not blocking: foreground deletion of a BloomFilter need not wait for its snapshot,
        // and blocking would need update rights on bloomfilters/finalizers on clusters that
        // enforce owner-reference permissions.
        .withBlockOwnerDeletion(false)
        .build();
  }
}
