package io.bloomoperator.backend;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.objectstore.DefaultStores;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.objectstore.S3ChunkStore;
import io.bloomoperator.publish.ConfigMapBackend;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotBackend;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.ChunkStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Clock;
import java.time.Instant;
import java.util.List;

/**
 * Where a filter's chunks live: ConfigMaps (the default, {@link ConfigMapBackend}) or the object
 * store its spec names, or the default store for its size ({@link ObjectStoreBackend}). The one
 * place that picks a {@link SnapshotBackend}: it puts the run's snapshot store on the filter's
 * backend (with the finalizer that deletes the objects in place), finds the stores a filter moved
 * away from, and finishes a deleted filter's objects. Steps see only the resolved {@link
 * io.bloomoperator.publish.SnapshotStore} and its backend's interface.
 */
public final class SnapshotBackends {

  private final ObjectStores stores;
  private final StoreObjectsFinalizer finalizer;
  private final FormerStores formerStores;
  private final Clock clock;
  private final OperatorSettings.Snapshots limits;

  /** The BloomStores large filters naming none go to; set when the event sources are prepared. */
  private volatile DefaultStores defaultStores;

  public SnapshotBackends(ObjectStores stores, Clock clock, OperatorSettings.Snapshots limits) {
    this.stores = stores;
    this.clock = clock;
    this.limits = limits;
    this.finalizer = new StoreObjectsFinalizer(stores);
    this.formerStores = new FormerStores(stores, clock);
  }

  /** The informer of the default stores (an event source of the controller). */
  public DefaultStores defaultStores(KubernetesClient client) {
    defaultStores = new DefaultStores(client);
    return defaultStores;
  }

  /** {@code filter}'s chunk ConfigMaps, every build bounded by BLOOM_MAX_SNAPSHOT_BYTES. */
  public SnapshotBackend configMaps(KubernetesClient client, BloomFilter filter) {
    return ConfigMapBackend.of(client, filter)
        .limitedTo(new SnapshotBackend.SizeLimit(limits.maxBytes(), "BLOOM_MAX_SNAPSHOT_BYTES"));
  }

  /**
   * {@code run} with its chunks in the object store its spec names (or, naming none, the default
   * store for its size: {@link DefaultStores}), the store resolved (it exists, allows the
   * namespace, and is reachable as configured) and the finalizer that deletes the filter's objects
   * in place before anything is written there; {@code run} itself for ConfigMaps.
   */
  public FilterRun resolve(FilterRun run, Context<BloomFilter> context) throws PublishException {
    var snapshot = run.filter().getSpec().getSnapshot();
    String name = snapshot == null ? null : snapshot.getStore();
    if (name == null) {
      DefaultStores defaults = defaultStores;
      name = defaults == null ? null : defaults.forFilter(run.client(), run.filter()).orElse(null);
    }
    if (name == null) {
      return run;
    }
    ObjectStores.Store store = stores.resolve(run.client(), name, run.namespace());
    BloomFilter filter = StoreObjectsFinalizer.ensure(run.filter(), context);
    S3ChunkStore chunks =
        store.chunks(run.namespace(), run.name(), run.spec().retainPrevious(), clock);
    // The ConfigMap backend the run was opened with is where the chunks were before they moved.
    SnapshotBackend backend =
        new ObjectStoreBackend(
            chunks,
            name,
            store.budget(run.namespace()),
            run.store().backend(),
            List.of(),
            new SnapshotBackend.SizeLimit(
                limits.maxStoreBytes(), "BLOOM_MAX_STORE_SNAPSHOT_BYTES"));
    return run.on(filter, run.store().on(backend));
  }

  /** The chunk stores of the object stores {@code usable} records the filter moved away from. */
  public List<ChunkStore> formerStores(FilterRun run, PublishedSnapshot usable) {
    return formerStores.of(
        run.client(),
        run.namespace(),
        run.name(),
        usable,
        run.store().backend().location(),
        run.spec().retainPrevious());
  }

  /** A filter being deleted: its objects deleted from its stores, then its finalizer removed. */
  public UpdateControl<BloomFilter> finish(
      BloomFilter filter, Context<BloomFilter> context, EventRecorder events, Instant now) {
    return finalizer.finish(filter, context, events, now);
  }
}
