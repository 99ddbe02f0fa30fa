package io.bloomoperator.backend;

import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.objectstore.StoreLocation;
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
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The object stores a filter has left (its spec names another store, or none) whose objects still
 * wait for the janitor: the store the published manifest names until the new version replaces it,
 * then those the manifest ConfigMap records as former. Objects carry no ownerReference, so without
 * this they would stay in a store the filter moved away from for ever.
 *
 * <p>The manifest's store is the operator's own record ({@link
 * io.bloomoperator.publish.OwnManifests} checked its digest). The former stores are an annotation
 * whoever may edit the ConfigMap can rewrite: a name there counts only if its BloomStore exists and
 * allows the filter's namespace (a store the namespace may not use is never touched on its behalf),
 * and the clean-up stays in the filter's own directory, built from its namespace and name, deleting
 * only keys of its own chunks ({@link io.bloomoperator.objectstore.S3ChunkStore}).
 *
 * <p>Stores are told apart by {@link StoreLocation}, not by name: administrators may define two
 * BloomStores on one bucket and prefix, and a "former" store at the current store's location holds
 * the published version's objects. The janitor keeps those in every former store anyway ({@link
 * io.bloomoperator.publish.SnapshotJanitor}); comparing locations keeps it from listing them.
 */
public final class FormerStores {

  private static final Logger LOG = LoggerFactory.getLogger(FormerStores.class);

  private final ObjectStores stores;
  private final Clock clock;

  public FormerStores(ObjectStores stores, Clock clock) {
    this.stores = stores;
    this.clock = clock;
  }

  /**
   * The filter's chunk stores in the stores {@code published} names other than {@code current}. A
   * store that cannot be reached now is skipped (logged): the next reconcile tries again, and the
   * manifest keeps naming it until its objects are gone.
   */
  public List<ChunkStore> of(
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
    names.addAll(recorded(client, stores, namespace, published));
    names.removeIf(n -> Objects.equals(n, current));
    if (names.isEmpty()) {
      return List.of();
    }
    // By location, not name: another name of the current store's location is the current store,
    // whose objects the published version reads (docs/object-store.md, shared locations).
    Optional<StoreLocation> here =
        current == null ? Optional.empty() : stores.location(client, current);
    List<ChunkStore> left = new ArrayList<>();
    for (String name : names) {
      try {
        ObjectStores.Store former = stores.forCleanUp(client, name);
        if (here.isPresent() && here.get().equals(StoreLocation.of(former.spec()))) {
          LOG.info(
              "{}/{}: former store {} is at the location of store {}; not cleaned as former",
              namespace,
              filter,
              name,
              current);
          continue;
        }
        left.add(former.chunks(namespace, filter, minAge, clock));
      } catch (PublishException e) {
        LOG.warn(
            "{}/{}: objects in former store {} wait: {}", namespace, filter, name, e.getMessage());
      }
    }
    return left;
  }

  /**
   * The former stores {@code published}'s annotation records that exist and allow {@code
   * namespace}. Those that do not are dropped without naming them (the text may be anyone's):
   * objects of the filter in a store that stopped allowing its namespace stay there, to be removed
   * by hand (docs/object-store.md).
   */
  public static List<String> recorded(
      KubernetesClient client, ObjectStores stores, String namespace, PublishedSnapshot published) {
    List<String> admitted = new ArrayList<>();
    int refused = 0;
    for (String name : published.formerStores()) {
      if (stores.admits(client, name, namespace)) {
        admitted.add(name);
      } else {
        refused++;
      }
    }
    if (refused > 0) {
      LOG.warn(
          "{}: {} former store(s) recorded on a manifest ConfigMap are not BloomStores that allow"
              + " the namespace; ignored",
          namespace,
          refused);
    }
    return admitted;
  }
}
