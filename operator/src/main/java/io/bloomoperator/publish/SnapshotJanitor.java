package io.bloomoperator.publish;

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
 * Deletes chunk ConfigMaps that no reader needs: every version except those the published manifest
 * names (its base and deltas) and, for their grace period, those the previous manifest named. That
 * also removes chunks left by a failed publish or an operator that died mid-publish, because their
 * version is never the published one.
 */
public final class SnapshotJanitor {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotJanitor.class);

  private final KubernetesClient client;

  public SnapshotJanitor(KubernetesClient client) {
    this.client = client;
  }

  /**
   * @param snapshot the manifest as last read or written (null: no version published, so every
   *     chunk of the filter goes)
   * @return how long until the previous version's grace period ends, while it is still running
   */
  public Optional<Duration> clean(
      String namespace,
      String filterName,
      PublishedSnapshot snapshot,
      Duration retainPrevious,
      Instant now) {
    List<String> keep = new ArrayList<>();
    Optional<Duration> recheck = Optional.empty();
    if (snapshot != null && snapshot.manifest() != null) {
      for (long version : snapshot.manifest().referencedVersions()) {
        keep.add(Long.toString(version));
      }
      List<Long> previous = new ArrayList<>(snapshot.previousVersions());
      previous.removeIf(v -> keep.contains(Long.toString(v)));
      if (!previous.isEmpty()) {
        Instant expires =
            snapshot.supersededAt() == null ? now : snapshot.supersededAt().plus(retainPrevious);
        if (now.isBefore(expires)) {
          previous.forEach(v -> keep.add(Long.toString(v)));
          recheck = Optional.of(Duration.between(now, expires));
        } else {
          retirePrevious(namespace, filterName, snapshot, previous);
        }
      }
    }
    deleteChunksExcept(namespace, filterName, keep);
    return recheck;
  }

  /**
   * Deletes the previous versions' chunks (one delete-collection by label, so a hand-edited
   * annotation cannot make it loop), then forgets them in the manifest.
   */
  private void retirePrevious(
      String namespace, String filterName, PublishedSnapshot snapshot, List<Long> previous) {
    chunksOf(namespace, filterName)
        .withLabelIn(
            SnapshotNames.LABEL_VERSION,
            previous.stream().map(String::valueOf).toArray(String[]::new))
        .delete();
    ConfigMap manifest = snapshot.configMap();
    try {
      // update() sends the resourceVersion we read: if the manifest moved on meanwhile, this
      // fails instead of erasing the bookkeeping of a newer version.
      ConfigMap forgotten = Serialization.clone(manifest);
      SnapshotConfigMaps.removeSuperseded(forgotten.getMetadata().getAnnotations());
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

  /**
   * One server-side delete-collection by label selector for everything else; it never lists a chunk
   * (each holds up to 1 MB) and on the usual reconcile it matches nothing.
   */
  private void deleteChunksExcept(String namespace, String filterName, List<String> keepVersions) {
    var chunks = chunksOf(namespace, filterName);
    if (keepVersions.isEmpty()) {
      chunks.delete();
    } else {
      chunks
          .withLabelNotIn(SnapshotNames.LABEL_VERSION, keepVersions.toArray(String[]::new))
          .delete();
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
