package io.bloomoperator.reconcile;

import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.ChunkStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The object stores a filter has left (its spec names another store, or none) whose objects still
 * wait for the janitor: the store the published manifest names until the new version replaces it,
 * then those the manifest records as former. Objects carry no ownerReference, so without this they
 * would stay in a store the filter moved away from for ever.
 */
final class FormerStores {

  private static final Logger LOG = LoggerFactory.getLogger(FormerStores.class);

  private final ObjectStores stores;
  private final Clock clock;

  FormerStores(ObjectStores stores, Clock clock) {
    this.stores = stores;
    this.clock = clock;
  }

  /**
   * The filter's chunk stores in the stores {@code published} names other than {@code current}. A
   * store that cannot be reached now is skipped (logged): the next reconcile tries again, and the
   * manifest keeps naming it until its objects are gone.
   */
  List<ChunkStore> of(
      KubernetesClient client,
      String namespace,
      String filter,
      PublishedSnapshot published,
      String current,
      Duration minAge) {
    if (published == null || published.manifest() == null) {
      return List.of();
    }
    Set<String> names = new LinkedHashSet<>();
    if (published.manifest().store() != null) {
      names.add(published.manifest().store());
    }
    names.addAll(published.formerStores());
    names.removeIf(n -> Objects.equals(n, current));
    List<ChunkStore> left = new ArrayList<>();
    for (String name : names) {
      try {
        left.add(stores.forCleanUp(client, name).chunks(namespace, filter, minAge, clock));
      } catch (PublishException e) {
        LOG.warn(
            "{}/{}: objects in former store {} wait: {}", namespace, filter, name, e.getMessage());
      }
    }
    return left;
  }
}
