package io.bloomoperator.faults;

import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;

/**
 * How a kill is judged to have landed mid-publish: right after the operator stopped, some filter
 * has chunk ConfigMaps of a version above the one its manifest names (chunks were written, the
 * manifest was not).
 */
final class UnpublishedChunks {

  private UnpublishedChunks() {}

  /** Chunk ConfigMaps of versions above each filter's manifest: publishes cut short. */
  static long count(KubernetesClient client, String namespace, List<String> filters)
      throws Exception {
    long stray = 0;
    for (String filter : filters) {
      ConfigMap manifest =
          client
              .configMaps()
              .inNamespace(namespace)
              .withName(SnapshotNames.manifestName(filter))
              .get();
      long published =
          manifest == null ? 0 : SnapshotConfigMaps.readManifest(manifest).manifest().version();
      stray +=
          client
              .configMaps()
              .inNamespace(namespace)
              .withLabelSelector(SnapshotNames.chunkSelector(filter))
              .list()
              .getItems()
              .stream()
              .filter(
                  c ->
                      Long.parseLong(c.getMetadata().getLabels().get(SnapshotNames.LABEL_VERSION))
                          > published)
              .count();
    }
    return stray;
  }
}
