package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.AnnouncedCanary;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How many snapshot bytes a namespace already publishes, so that the operator can keep one
 * namespace from filling etcd for every other.
 *
 * <p>Only manifests the operator published count: a ConfigMap named {@code <filter>-bloom} and
 * controlled by that BloomFilter (same UID). Look-alikes (anyone who may create ConfigMaps may copy
 * the labels) neither take a filter's budget nor, read a few per page, the operator's memory.
 */
public final class NamespaceBudget {

  /**
   * Objects per list page: a manifest, or a look-alike, holds up to 1 MiB, a BloomFilter with an
   * inline source as much.
   */
  static final long PAGE_SIZE = 4;

  private NamespaceBudget() {}

  /**
   * The bytes the published snapshots (base and deltas, with 2 KiB per object, and a replaced
   * version still within its grace period) of every filter of the namespace except {@code
   * filterName} hold, from their manifests (no chunk is read). Manifests that do not parse count as
   * nothing: they are not served.
   */
  public static long publishedBytesExcept(
      KubernetesClient client, String namespace, String filterName) {
    Map<String, String> uidByFilter = new HashMap<>();
    Pages.forEach(
        client.resources(BloomFilter.class).inNamespace(namespace),
        PAGE_SIZE,
        f -> uidByFilter.put(f.getMetadata().getName(), f.getMetadata().getUid()));
    long[] total = {0};
    Pages.forEach(
        client
            .configMaps()
            .inNamespace(namespace)
            .withLabels(
                Map.of(
                    SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
                    SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_MANIFEST)),
        PAGE_SIZE,
        manifest -> {
          Optional<String> filter = publishedBy(manifest, uidByFilter);
          if (filter.isPresent() && !filter.get().equals(filterName)) {
            total[0] += storedBytes(manifest);
          }
        });
    return total[0];
  }

  /** The filter that published {@code manifest}, if it is a manifest the operator wrote. */
  private static Optional<String> publishedBy(ConfigMap manifest, Map<String, String> uidByFilter) {
    Optional<OwnerReference> owner = ControllingFilter.of(manifest);
    if (owner.isEmpty()) {
      return Optional.empty();
    }
    String filter = owner.get().getName();
    boolean published =
        owner.get().getUid().equals(uidByFilter.get(filter))
            && SnapshotNames.manifestName(filter).equals(manifest.getMetadata().getName());
    return published ? Optional.of(filter) : Optional.empty();
  }

  private static long storedBytes(ConfigMap manifest) {
    String json = SnapshotConfigMaps.manifestJson(manifest);
    if (json == null) {
      return 0;
    }
    Manifest parsed;
    try {
      parsed = Manifest.fromJson(json);
    } catch (SnapshotVerificationException e) {
      return 0; // not a servable snapshot, so it holds no budget
    }
    if (parsed.inObjectStore()) {
      // Its chunks are objects of a store, which has a budget of its own: etcd holds the manifest.
      return WriteBudget.Limits.cost(json.length(), 1);
    }
    Map<String, String> annotations = manifest.getMetadata().getAnnotations();
    boolean retaining =
        annotations != null
            && annotations.containsKey(SnapshotConfigMaps.ANNOTATION_PREVIOUS_VERSIONS);
    // Versions replaced within their grace period are still stored; the manifest names only their
    // numbers, so they count at the size of the chain that replaced them.
    return stored(parsed) * (retaining ? 2 : 1)
        + RetainedVersions.of(manifest).storedBytesBeyond(parsed)
        + canaryBytesBeyond(manifest, parsed);
  }

  /**
   * A canary announced beside the published version holds chunks of its own until it is promoted or
   * withdrawn, so they count as published ones do. Read from the ConfigMap as it stands: an edited
   * canary can only make its own namespace's figure larger.
   */
  private static long canaryBytesBeyond(ConfigMap manifest, Manifest published) {
    AnnouncedCanary canary;
    try {
      canary = SnapshotConfigMaps.readCanary(manifest);
    } catch (SnapshotVerificationException e) {
      return 0; // not servable: readers do not load it, nothing more is stored for it
    }
    if (canary == null || canary.announced().manifest().inObjectStore()) {
      return 0;
    }
    return RetainedVersions.storedBytesBeyond(List.of(canary.announced().manifest()), published);
  }

  /**
   * What the objects of a published chain hold in etcd: its bytes, and {@link
   * WriteBudget.Limits#OBJECT_OVERHEAD_BYTES} for each chunk and the manifest.
   */
  static long stored(Manifest manifest) {
    return WriteBudget.Limits.cost(manifest.storedBytes(), manifest.chunkCount() + 1L);
  }
}
