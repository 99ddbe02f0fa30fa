package io.bloomoperator.faults;

import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Whether a filter's chunk ConfigMaps stay within what the protocol allows: the chunks the
 * published manifest names (base and deltas), those of the versions it retains for their grace
 * period ({@code bloomoperator.io/previous-versions}), and a publish under way (versions from the
 * manifest's on: a compaction rewrites the published version as a base before the manifest moves).
 *
 * <p>Each look reads the manifest first, then lists the chunks, so a publish between the two only
 * adds chunks of newer versions. The janitor drops the retained versions from the manifest just
 * before it deletes their chunks, so a single look may catch chunks in between: a chunk counts as a
 * leftover only when two looks in a row find it outside the allowed set.
 */
final class ChunkRetention {

  /** One look at one filter. */
  record Look(
      long version, long baseVersion, int deltas, int named, int chunks, Set<String> outside) {}

  private final KubernetesClient client;
  private final String namespace;
  private final Map<String, Set<String>> outsideBefore = new HashMap<>();
  private long leftovers;
  private int maxChunks;

  ChunkRetention(KubernetesClient client, String namespace) {
    this.client = client;
    this.namespace = namespace;
  }

  /**
   * Looks at {@code filter} now; returns null before its first publish.
   *
   * @return the look, whose {@code outside} are chunks beyond current + retained + under way
   */
  synchronized Look look(String filter) throws SnapshotVerificationException {
    ConfigMap manifestMap =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName(filter))
            .get();
    if (manifestMap == null) {
      return null;
    }
    Manifest manifest = SnapshotConfigMaps.readManifest(manifestMap).manifest();
    Set<Long> retained =
        new HashSet<>(new PublishedSnapshot(manifestMap, manifest).previousVersions());
    Set<String> named = new HashSet<>();
    manifest.chunks().forEach(c -> named.add(c.name()));
    manifest.deltas().forEach(d -> d.chunks().forEach(c -> named.add(c.name())));
    List<ConfigMap> chunks =
        client
            .configMaps()
            .inNamespace(namespace)
            .withLabelSelector(SnapshotNames.chunkSelector(filter))
            .list()
            .getItems();
    Set<String> outside = new HashSet<>();
    for (ConfigMap chunk : chunks) {
      String name = chunk.getMetadata().getName();
      long version =
          Long.parseLong(chunk.getMetadata().getLabels().get(SnapshotNames.LABEL_VERSION));
      if (!named.contains(name) && !retained.contains(version) && version < manifest.version()) {
        outside.add(name);
      }
    }
    Set<String> before = outsideBefore.getOrDefault(filter, Set.of());
    leftovers += outside.stream().filter(before::contains).count();
    outsideBefore.put(filter, outside);
    maxChunks = Math.max(maxChunks, chunks.size());
    return new Look(
        manifest.version(),
        manifest.baseVersion(),
        manifest.deltas().size(),
        named.size(),
        chunks.size(),
        outside);
  }

  /** Chunks found outside the allowed set by two looks in a row (each counted per look). */
  synchronized long leftovers() {
    return leftovers;
  }

  /** The most chunk ConfigMaps one filter had at one look. */
  synchronized int maxChunks() {
    return maxChunks;
  }
}
