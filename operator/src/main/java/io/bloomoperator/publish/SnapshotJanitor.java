package io.bloomoperator.publish;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes chunk ConfigMaps that no reader needs: every chunk except the published manifest's base
 * and delta chunks and, for their grace period, those the previous manifest named. That also
 * removes chunks left by a failed publish or an operator that died mid-publish, because their
 * version is never the published one.
 *
 * <p>Only chunks controlled by the filter being cleaned (its UID in their controller
 * ownerReference) are deleted. Labels select the candidates but prove nothing: anyone may label a
 * ConfigMap, and another filter's label value (or a look-alike's) may equal this one's.
 */
public final class SnapshotJanitor {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotJanitor.class);

  private final KubernetesClient client;
  private final String publisher;

  public SnapshotJanitor(KubernetesClient client) {
    this(client, null);
  }

  /**
   * @param publisher stamped as {@link SnapshotStore#ANNOTATION_PUBLISHED_BY} on the manifest when
   *     the janitor updates it (null: the stamp stays as it was)
   */
  public SnapshotJanitor(KubernetesClient client, String publisher) {
    this.client = client;
    this.publisher = SnapshotStore.boundedPublisher(publisher);
  }

  /**
   * What a clean did.
   *
   * @param graceLeft how long until the previous versions' grace period ends, while it is still
   *     running
   * @param manifestTouched whether the manifest ConfigMap was (or was tried to be) updated: the
   *     copy the caller read is stale, and a write guarded by its resourceVersion would fail
   */
  public record Cleaned(Optional<Duration> graceLeft, boolean manifestTouched) {}

  /**
   * @param filter the BloomFilter whose chunks are cleaned (its namespace, name and UID)
   * @param snapshot the manifest as last read or written (null: no version published, so every
   *     chunk of the filter goes)
   */
  public Cleaned clean(
      HasMetadata filter, PublishedSnapshot snapshot, Duration retainPrevious, Instant now) {
    String namespace = filter.getMetadata().getNamespace();
    Chunks chunks = new Chunks(filter);
    if (snapshot == null || snapshot.manifest() == null) {
      chunks.deleteOwned(chunks.all());
      return new Cleaned(Optional.empty(), false);
    }
    Manifest manifest = snapshot.manifest();
    List<String> keepWhole = new ArrayList<>(List.of(Long.toString(manifest.baseVersion())));
    List<String> keepDeltas = new ArrayList<>();
    manifest.deltas().forEach(d -> keepDeltas.add(Long.toString(d.version())));
    Optional<Duration> recheck = Optional.empty();
    boolean manifestTouched = false;
    List<Long> previous = snapshot.previousVersions();
    if (!previous.isEmpty()) {
      Instant expires =
          snapshot.supersededAt() == null ? now : snapshot.supersededAt().plus(retainPrevious);
      if (now.isBefore(expires)) {
        // Both kinds: the previous manifest may have named a version as a delta that is now the
        // base, and readers of it may still fetch that delta.
        previous.forEach(
            v -> {
              keepWhole.add(Long.toString(v));
              keepDeltas.add(Long.toString(v));
            });
        recheck = Optional.of(Duration.between(now, expires));
      } else {
        forgetPrevious(namespace, snapshot);
        manifestTouched = true;
      }
    }
    // Two selections by label; on the usual reconcile they match nothing. "notin" also matches
    // chunks without the part label: whole-payload chunks.
    chunks.deleteOwned(
        chunks
            .all()
            .withLabelNotIn(SnapshotNames.LABEL_PART, SnapshotNames.PART_DELTA)
            .withLabelNotIn(SnapshotNames.LABEL_VERSION, keepWhole.toArray(String[]::new)));
    var deltaChunks = chunks.all().withLabel(SnapshotNames.LABEL_PART, SnapshotNames.PART_DELTA);
    chunks.deleteOwned(
        keepDeltas.isEmpty()
            ? deltaChunks
            : deltaChunks.withLabelNotIn(
                SnapshotNames.LABEL_VERSION, keepDeltas.toArray(String[]::new)));
    return new Cleaned(recheck, manifestTouched);
  }

  /**
   * The grace period is over: forget the previous versions in the manifest (their chunks are no
   * longer kept, so the deletes below remove them).
   */
  private void forgetPrevious(String namespace, PublishedSnapshot snapshot) {
    ConfigMap manifest = snapshot.configMap();
    try {
      // update() sends the resourceVersion we read: if the manifest moved on meanwhile, this
      // fails instead of erasing the bookkeeping of a newer version.
      ConfigMap forgotten = Serialization.clone(manifest);
      SnapshotConfigMaps.removeSuperseded(forgotten.getMetadata().getAnnotations());
      SnapshotStore.stamp(forgotten.getMetadata().getAnnotations(), publisher);
      client.configMaps().inNamespace(namespace).resource(forgotten).update();
    } catch (KubernetesClientException e) {
      // Harmless: the next clean finds the chunks already gone and tries again.
      LOG.debug(
          "could not clear previous-version annotations of {}/{}: {}",
          namespace,
          manifest.getMetadata().getName(),
          e.getMessage());
    }
  }

  /** The chunk ConfigMaps labelled as one filter's, and which of them it really owns. */
  private final class Chunks {

    /**
     * Chunks per list page: each holds up to 1 MiB, and chunks of other filters or look-alikes may
     * carry the same labels.
     */
    private static final long PAGE_SIZE = 2;

    private final String namespace;
    private final String filterName;
    private final String filterUid;

    Chunks(HasMetadata filter) {
      this.namespace = filter.getMetadata().getNamespace();
      this.filterName = filter.getMetadata().getName();
      this.filterUid = filter.getMetadata().getUid();
    }

    FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> all() {
      return client
          .configMaps()
          .inNamespace(namespace)
          .withLabels(
              Map.of(
                  SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
                  SnapshotNames.LABEL_FILTER, SnapshotNames.filterLabelValue(filterName),
                  SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_CHUNK));
    }

    /**
     * Deletes the selected chunks this filter controls, each only as it was listed (its
     * resourceVersion as a precondition), so that a name taken over meanwhile is left alone.
     */
    void deleteOwned(FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> q) {
      // Names and resourceVersions only: the chunks themselves go with their page.
      Map<String, String> owned = new LinkedHashMap<>();
      int[] foreign = {0};
      Pages.forEach(
          q,
          PAGE_SIZE,
          chunk -> {
            if (ControllingFilter.is(chunk, filterUid)) {
              owned.put(chunk.getMetadata().getName(), chunk.getMetadata().getResourceVersion());
            } else {
              foreign[0]++;
            }
          });
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
      if (foreign[0] > 0) {
        LOG.debug(
            "{}/{}: {} chunk(s) labelled as this filter's are not controlled by it; left alone",
            namespace,
            filterName,
            foreign[0]);
      }
    }
  }
}
