package io.bloomoperator.publish;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
   * @param snapshot the manifest as last read or written (null: no version published, so every
   *     chunk of the filter goes)
   */
  public Cleaned clean(
      String namespace,
      String filterName,
      PublishedSnapshot snapshot,
      Duration retainPrevious,
      Instant now) {
    if (snapshot == null || snapshot.manifest() == null) {
      chunksOf(namespace, filterName).delete();
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
    // Two server-side delete-collections by label selector; neither lists a chunk (each holds up
    // to 1 MB) and on the usual reconcile they match nothing. "notin" also matches chunks without
    // the part label: whole-payload chunks.
    chunksOf(namespace, filterName)
        .withLabelNotIn(SnapshotNames.LABEL_PART, SnapshotNames.PART_DELTA)
        .withLabelNotIn(SnapshotNames.LABEL_VERSION, keepWhole.toArray(String[]::new))
        .delete();
    var deltaChunks =
        chunksOf(namespace, filterName)
            .withLabel(SnapshotNames.LABEL_PART, SnapshotNames.PART_DELTA);
    if (keepDeltas.isEmpty()) {
      deltaChunks.delete();
    } else {
      deltaChunks
          .withLabelNotIn(SnapshotNames.LABEL_VERSION, keepDeltas.toArray(String[]::new))
          .delete();
    }
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

  private FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> chunksOf(
      String namespace, String filterName) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withLabels(
            Map.of(
                SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
                SnapshotNames.LABEL_FILTER, SnapshotNames.filterLabelValue(filterName),
                SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_CHUNK));
  }
}
