package io.bloomoperator.publish;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;

/**
 * How many snapshot bytes a namespace already publishes, so that the operator can keep one
 * namespace from filling etcd for every other.
 */
public final class NamespaceBudget {

  private NamespaceBudget() {}

  /**
   * The bytes the published manifests (base and deltas) of every filter of the namespace except
   * {@code filterName}, from their manifests (one list of the small manifest ConfigMaps, no chunk
   * is read). Manifests that do not parse count as nothing: they are not served.
   */
  public static long publishedBytesExcept(
      KubernetesClient client, String namespace, String filterName) {
    String ownManifest = SnapshotNames.manifestName(filterName);
    long total = 0;
    for (ConfigMap manifest :
        client
            .configMaps()
            .inNamespace(namespace)
            .withLabels(
                Map.of(
                    SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
                    SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_MANIFEST))
            .list()
            .getItems()) {
      String json = SnapshotConfigMaps.manifestJson(manifest);
      if (ownManifest.equals(manifest.getMetadata().getName()) || json == null) {
        continue;
      }
      try {
        total += Manifest.fromJson(json).storedBytes();
      } catch (SnapshotVerificationException e) {
        // not a servable snapshot, so it holds no budget
      }
    }
    return total;
  }
}
