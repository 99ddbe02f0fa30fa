package io.bloomoperator.backend;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.publish.ManifestRecord;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Objects in a store have no ownerReference, so the garbage collector never removes them: a
 * finalizer on every BloomFilter that uses a store deletes its directory when the filter is
 * deleted. It never blocks a deletion for ever: while the store is down it retries with backoff,
 * and once {@code BLOOM_STORE_CLEANUP_TIMEOUT} has passed since the deletion it lets the deletion
 * proceed with a Warning event (docs/object-store.md gives the manual clean-up).
 *
 * <p>Stores named by what the author or a ConfigMap writer controls (the spec, the former-stores
 * annotation) are cleaned only if they allow the filter's namespace, like every other use of a
 * store on the namespace's behalf.
 */
public final class StoreObjectsFinalizer {

  /** Put on filters whose chunks go to an object store. */
  public static final String NAME = "bloomoperator.io/store-objects";

  /** Warning event when the objects could not be deleted in time. */
  public static final String EVENT_ABANDONED = "StoreCleanupAbandoned";

  private static final Logger LOG = LoggerFactory.getLogger(StoreObjectsFinalizer.class);
  private static final Duration RETRY = Duration.ofSeconds(10);

  private final ObjectStores stores;

  public StoreObjectsFinalizer(ObjectStores stores) {
    this.stores = stores;
  }

  /** {@code filter} with the finalizer, added (and the cache updated) when it is missing. */
  public static BloomFilter ensure(BloomFilter filter, Context<BloomFilter> context) {
    if (filter.hasFinalizer(NAME)) {
      return filter;
    }
    return PrimaryUpdateAndCacheUtils.addFinalizer(context, NAME);
  }

  /**
   * The deletion of {@code filter}: deletes its objects in every store it may have used (the one
   * its spec names, the one its published manifest names), then removes the finalizer.
   */
  public UpdateControl<BloomFilter> finish(
      BloomFilter filter, Context<BloomFilter> context, EventRecorder events, Instant now) {
    if (!filter.hasFinalizer(NAME)) {
      return UpdateControl.noUpdate(); // not ours to hold
    }
    KubernetesClient client = context.getClient();
    String namespace = filter.getMetadata().getNamespace();
    String name = filter.getMetadata().getName();
    String failed = null;
    for (String store : storesOf(client, filter)) {
      try {
        int deleted =
            stores
                .forCleanUp(client, store)
                .chunks(namespace, name, Duration.ZERO, java.time.Clock.systemUTC())
                .deleteAll();
        LOG.info("{}/{}: deleted {} object(s) from store {}", namespace, name, deleted, store);
      } catch (PublishException | IOException e) {
        LOG.warn(
            "{}/{}: objects in store {} not deleted yet: {}",
            namespace,
            name,
            store,
            e.getMessage());
        failed = store;
      }
    }
    if (failed != null && !expired(filter, now)) {
      return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(RETRY);
    }
    if (failed != null) {
      events.warning(
          filter,
          EVENT_ABANDONED,
          "the objects of this filter in store "
              + failed
              + " could not be deleted within BLOOM_STORE_CLEANUP_TIMEOUT; the deletion proceeds."
              + " Delete the directory <prefix>/"
              + namespace
              + "/"
              + name
              + "/ of the store by hand (docs/object-store.md)");
    }
    PrimaryUpdateAndCacheUtils.removeFinalizer(context, NAME);
    return UpdateControl.noUpdate();
  }

  private boolean expired(BloomFilter filter, Instant now) {
    String since = filter.getMetadata().getDeletionTimestamp();
    if (since == null) {
      return false;
    }
    Instant deleted = OffsetDateTime.parse(since).toInstant();
    return !now.isBefore(deleted.plus(stores.settings().cleanupTimeout()));
  }

  /**
   * The store the spec names, the one the published manifest names and those it records as former
   * (a filter that moved). The spec is the author's, like the former-stores annotation: its store
   * counts only if it allows the namespace. Only the store of the manifest the operator wrote
   * itself (its digest is the one the filter's status records) is cleaned whatever it allows now:
   * the filter published there while it was allowed.
   */
  private Set<String> storesOf(KubernetesClient client, BloomFilter filter) {
    Set<String> names = new LinkedHashSet<>();
    var snapshot = filter.getSpec() == null ? null : filter.getSpec().getSnapshot();
    String namespace = filter.getMetadata().getNamespace();
    if (snapshot != null
        && snapshot.getStore() != null
        && stores.admits(client, snapshot.getStore(), namespace)) {
      names.add(snapshot.getStore());
    }
    ConfigMap manifest =
        client
            .configMaps()
            .inNamespace(filter.getMetadata().getNamespace())
            .withName(SnapshotNames.manifestName(filter.getMetadata().getName()))
            .get();
    // Only a manifest this filter controls: anyone who may write ConfigMaps could make a
    // look-alike name another store.
    boolean ours =
        manifest != null
            && manifest.getMetadata().getOwnerReferences() != null
            && manifest.getMetadata().getOwnerReferences().stream()
                .anyMatch(
                    r ->
                        Boolean.TRUE.equals(r.getController())
                            && filter.getMetadata().getUid().equals(r.getUid()));
    String json = ours ? SnapshotConfigMaps.manifestJson(manifest) : null;
    if (json != null) {
      try {
        Manifest parsed = Manifest.fromJson(json);
        // Trusted as the operator's own only if its digest is the one the status records (a
        // controller ownerReference is anyone's to copy who may write ConfigMaps).
        boolean trusted =
            filter.getStatus() != null
                && ManifestRecord.manifestDigest(manifest)
                    .equals(filter.getStatus().getManifestDigest());
        if (parsed.store() != null
            && (trusted || stores.admits(client, parsed.store(), namespace))) {
          names.add(parsed.store());
        }
        // Stores it moved away from whose objects the janitor has not removed yet, as far as the
        // annotation (anyone's to edit) names stores that allow the namespace.
        names.addAll(
            FormerStores.recorded(
                client,
                stores,
                filter.getMetadata().getNamespace(),
                new PublishedSnapshot(manifest, parsed)));
      } catch (SnapshotVerificationException e) {
        // Not a manifest the operator could have written: it names nothing to clean up.
      }
    }
    return names;
  }
}
