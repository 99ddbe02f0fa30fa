package io.bloomoperator.snapshot;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Chunks as ConfigMaps, laid out by {@link SnapshotConfigMaps} and named by {@link SnapshotNames}:
 * immutable, created (never applied: client-side apply would copy the chunk into an annotation far
 * beyond its limit), read one GET by name at a time (never a list: each holds up to 1 MiB), and
 * deleted with their resourceVersion as the precondition.
 *
 * <p>Ownership is the controller ownerReference this store sets on what it creates: labels select
 * candidates but prove nothing (anyone may label a ConfigMap, and another filter's label value may
 * equal this one's).
 */
public final class ConfigMapChunkStore implements ChunkStore {

  /** Chunks per list page: each holds up to 1 MiB, and look-alikes may carry the same labels. */
  private static final long PAGE_SIZE = 2;

  private final KubernetesClient client;
  private final String namespace;
  private final String filterName;
  private final OwnerReference owner;
  private final Map<String, String> annotations;

  private ConfigMapChunkStore(
      KubernetesClient client,
      String namespace,
      String filterName,
      OwnerReference owner,
      Map<String, String> annotations) {
    this.client = client;
    this.namespace = namespace;
    this.filterName = filterName;
    this.owner = owner;
    this.annotations = Map.copyOf(annotations);
  }

  /** Reads chunks of {@code namespace} by the names a manifest gives; writes nothing. */
  public static ConfigMapChunkStore reader(KubernetesClient client, String namespace) {
    return new ConfigMapChunkStore(client, namespace, null, null, Map.of());
  }

  /**
   * Reads and writes the chunks of {@code filterName}.
   *
   * @param owner the controller ownerReference every chunk gets: ownership is judged by its UID
   * @param annotations set on every chunk created (e.g. which replica wrote it); may be empty
   */
  public static ConfigMapChunkStore writer(
      KubernetesClient client,
      String namespace,
      String filterName,
      OwnerReference owner,
      Map<String, String> annotations) {
    return new ConfigMapChunkStore(client, namespace, filterName, owner, annotations);
  }

  @Override
  public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
    ConfigMap chunk = client.configMaps().inNamespace(namespace).withName(ref.name()).get();
    return chunk == null
        ? null
        : SnapshotConfigMaps.chunkBytes(
            chunk, ref.bytes(), "chunk ConfigMap " + namespace + "/" + ref.name());
  }

  @Override
  public String name(Part part, int index) {
    return part.role() == Role.BASE
        ? SnapshotNames.chunkName(writable(), part.version(), index)
        : SnapshotNames.deltaChunkName(writable(), part.version(), index);
  }

  @Override
  public Stored create(Part part, int index, byte[] data, int length, String sha256)
      throws IOException {
    String filter = writable();
    ConfigMap chunk =
        part.role() == Role.BASE
            ? SnapshotConfigMaps.chunk(namespace, filter, part.version(), index, data, length)
            : SnapshotConfigMaps.deltaChunk(namespace, filter, part.version(), index, data, length);
    chunk.getMetadata().setOwnerReferences(List.of(owner));
    if (!annotations.isEmpty()) {
      chunk.getMetadata().setAnnotations(new HashMap<>(annotations));
    }
    String name = chunk.getMetadata().getName();
    ConfigMap stored;
    try {
      stored = client.configMaps().inNamespace(namespace).resource(chunk).create();
    } catch (KubernetesClientException e) {
      // Leftovers of this filter are removed before a publish, so an existing object of this
      // name is someone else's.
      if (e.getCode() == 409) {
        throw new NameTakenException(name, e);
      }
      throw e;
    }
    return new Stored(
        name,
        part,
        stored == null || stored.getMetadata() == null
            ? null
            : stored.getMetadata().getResourceVersion());
  }

  @Override
  public List<Stored> list() {
    List<Stored> chunks = new ArrayList<>();
    forEachOwned(
        chunksOfFilter(),
        chunk -> {
          Part part = partOf(chunk);
          if (part != null) {
            chunks.add(
                new Stored(
                    chunk.getMetadata().getName(), part, chunk.getMetadata().getResourceVersion()));
          }
        });
    return chunks;
  }

  @Override
  public boolean delete(Stored chunk) {
    var resource = client.configMaps().inNamespace(namespace).withName(chunk.name());
    try {
      if (chunk.revision() != null) {
        resource.lockResourceVersion(chunk.revision()).delete();
        return true;
      }
      ConfigMap maybe = resource.get();
      if (maybe != null && owned(maybe)) {
        resource.lockResourceVersion(maybe.getMetadata().getResourceVersion()).delete();
      }
      return true;
    } catch (KubernetesClientException e) {
      // 409: the name now holds another writer's chunk, which stays.
      return false;
    }
  }

  @Override
  public void deleteExcept(Set<Part> keep) {
    if (keep.isEmpty()) {
      deleteOwned(chunksOfFilter());
      return;
    }
    String[] bases = versions(keep, Role.BASE);
    String[] deltas = versions(keep, Role.DELTA);
    // Two selections by label; on the usual reconcile they match nothing. "notin" also matches
    // chunks without the part label: whole-payload chunks.
    var wholeChunks =
        chunksOfFilter().withLabelNotIn(SnapshotNames.LABEL_PART, SnapshotNames.PART_DELTA);
    deleteOwned(
        bases.length == 0
            ? wholeChunks
            : wholeChunks.withLabelNotIn(SnapshotNames.LABEL_VERSION, bases));
    var deltaChunks =
        chunksOfFilter().withLabel(SnapshotNames.LABEL_PART, SnapshotNames.PART_DELTA);
    deleteOwned(
        deltas.length == 0
            ? deltaChunks
            : deltaChunks.withLabelNotIn(SnapshotNames.LABEL_VERSION, deltas));
  }

  private static String[] versions(Set<Part> parts, Role role) {
    return parts.stream()
        .filter(p -> p.role() == role)
        .map(p -> Long.toString(p.version()))
        .distinct()
        .toArray(String[]::new);
  }

  private String writable() {
    if (owner == null) {
      throw new IllegalStateException("a chunk reader does not write");
    }
    return filterName;
  }

  private FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> chunksOfFilter() {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withLabels(
            Map.of(
                SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
                SnapshotNames.LABEL_FILTER, SnapshotNames.filterLabelValue(writable()),
                SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_CHUNK));
  }

  /**
   * Deletes the selected chunks this filter owns, each only as it was listed (its resourceVersion
   * as a precondition), so that a name taken over meanwhile is left alone.
   */
  private void deleteOwned(
      FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> query) {
    // Names and resourceVersions only: the chunks themselves go with their page.
    Map<String, String> owned = new LinkedHashMap<>();
    forEachOwned(
        query, c -> owned.put(c.getMetadata().getName(), c.getMetadata().getResourceVersion()));
    for (Map.Entry<String, String> chunk : owned.entrySet()) {
      try {
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(chunk.getKey())
            .lockResourceVersion(chunk.getValue())
            .delete();
      } catch (KubernetesClientException e) {
        if (e.getCode() != 404 && e.getCode() != 409) {
          throw e;
        }
        // Gone already, or replaced since the list: either way not ours to delete now.
      }
    }
  }

  /** Each listed chunk this filter owns, at most {@link #PAGE_SIZE} held at a time. */
  private void forEachOwned(
      FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> query,
      Consumer<ConfigMap> each) {
    String next = null;
    do {
      ConfigMapList page =
          query.list(new ListOptionsBuilder().withLimit(PAGE_SIZE).withContinue(next).build());
      page.getItems().stream().filter(this::owned).forEach(each);
      next = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (next != null && !next.isEmpty());
  }

  private boolean owned(ConfigMap chunk) {
    List<OwnerReference> references = chunk.getMetadata().getOwnerReferences();
    return references != null
        && references.stream()
            .anyMatch(
                r ->
                    Boolean.TRUE.equals(r.getController())
                        && owner.getUid() != null
                        && owner.getUid().equals(r.getUid()));
  }

  /** The part a chunk's labels name; null for a hand-made look-alike (no version in the range). */
  private static Part partOf(ConfigMap chunk) {
    Map<String, String> labels = chunk.getMetadata().getLabels();
    if (labels == null) {
      return null;
    }
    OptionalLong version = SnapshotVersions.parse(labels.get(SnapshotNames.LABEL_VERSION));
    if (version.isEmpty()) {
      return null;
    }
    return SnapshotNames.PART_DELTA.equals(labels.get(SnapshotNames.LABEL_PART))
        ? Part.delta(version.getAsLong())
        : Part.base(version.getAsLong());
  }
}
