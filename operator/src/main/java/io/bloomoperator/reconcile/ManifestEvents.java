package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.publish.ControllingFilter;
import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapList;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.FilterWatchListDeletable;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.javaoperatorsdk.operator.api.config.informer.InformerConfiguration;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reconciles a BloomFilter when its manifest ConfigMap changes or goes away, so that a manifest
 * deleted or edited by someone else is repaired promptly, and keeps nothing of what it sees.
 *
 * <p>Not an informer: an informer holds every object its label selector matches, and anyone who may
 * create ConfigMaps in a watched namespace may copy the manifest labels onto hundreds of 1 MB
 * ConfigMaps (that stopped the operator at start-up, out of memory). Not a metadata-only informer
 * either: fabric8 has none, and its cache would still grow with every look-alike (annotations alone
 * may hold 256 KB). This source opens a plain watch from the current resourceVersion, decodes one
 * event at a time and maps it to the BloomFilter its controller ownerReference names, if that
 * filter is in the operator's cache with the same UID and the ConfigMap carries that filter's
 * manifest name; everything else is dropped.
 *
 * <p>No initial list: every BloomFilter is reconciled when the operator starts. A watch that
 * fabric8 cannot resume (410 Gone, after a compaction or an API server restart) is opened again
 * from a fresh resourceVersion and every known filter of its scope is reconciled, for whatever
 * happened while no watch was open.
 */
final class ManifestEvents extends AbstractEventSource<Void, BloomFilter> {

  private static final Logger LOG = LoggerFactory.getLogger(ManifestEvents.class);

  private static final Duration FIRST_RETRY = Duration.ofSeconds(1);
  private static final Duration MAX_RETRY = Duration.ofSeconds(30);

  /** The scope of a watch over every namespace. */
  private static final String ALL_NAMESPACES = "";

  private final KubernetesClient client;
  private final Set<String> scopes;
  private final Cache<BloomFilter> filters;
  private final Map<String, Watch> watches = new ConcurrentHashMap<>();

  /** Scopes whose watch was lost and is not open again yet. */
  private final Set<String> lost = ConcurrentHashMap.newKeySet();

  private ScheduledExecutorService reopener;

  /**
   * @param namespaces the namespaces the controller watches, as JOSDK resolves them
   * @param filters the controller's cache of BloomFilters: events are mapped only to these
   */
  ManifestEvents(KubernetesClient client, Set<String> namespaces, Cache<BloomFilter> filters) {
    super(Void.class, "manifests");
    this.client = client;
    this.scopes =
        InformerConfiguration.allNamespacesWatched(namespaces)
            ? Set.of(ALL_NAMESPACES)
            : Set.copyOf(namespaces);
    this.filters = filters;
  }

  @Override
  public synchronized void start() {
    if (isRunning()) {
      return;
    }
    reopener =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "manifest-watch-reopen");
              t.setDaemon(true);
              return t;
            });
    super.start();
    // At start a failure (e.g. no RBAC to watch ConfigMaps) fails the operator's start, as an
    // informer's would.
    scopes.forEach(this::open);
  }

  @Override
  public synchronized void stop() {
    if (!isRunning()) {
      return;
    }
    super.stop();
    reopener.shutdownNow();
    watches.values().forEach(Watch::close);
    watches.clear();
  }

  @Override
  public Status getStatus() {
    return isRunning() && lost.isEmpty() ? Status.HEALTHY : Status.UNHEALTHY;
  }

  @Override
  public Set<Void> getSecondaryResources(BloomFilter primary) {
    return Set.of();
  }

  /** The filter {@code configMap} is the manifest of, if the operator knows that filter. */
  Optional<ResourceID> filterOf(ConfigMap configMap) {
    return ControllingFilter.of(configMap)
        .map(owner -> new ResourceID(owner.getName(), configMap.getMetadata().getNamespace()))
        .filter(
            id ->
                filters
                    .get(id)
                    .filter(f -> ControllingFilter.is(configMap, f.getMetadata().getUid()))
                    .filter(
                        f ->
                            SnapshotNames.manifestName(f.getMetadata().getName())
                                .equals(configMap.getMetadata().getName()))
                    .isPresent());
  }

  private FilterWatchListDeletable<ConfigMap, ConfigMapList, Resource<ConfigMap>> manifests(
      String scope) {
    var configMaps = client.configMaps();
    return (scope.equals(ALL_NAMESPACES)
            ? configMaps.inAnyNamespace()
            : configMaps.inNamespace(scope))
        .withLabels(
            Map.of(
                SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
                SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_MANIFEST));
  }

  /** Opens the watch of {@code scope} from now on (replacing a lost one). */
  private synchronized void open(String scope) {
    if (!isRunning()) {
      return;
    }
    var query = manifests(scope);
    // A list of at most one object, for the collection's resourceVersion only: a watch without
    // one would first replay every matching object, look-alikes included.
    String now =
        query
            .list(new ListOptionsBuilder().withLimit(1L).build())
            .getMetadata()
            .getResourceVersion();
    Watch watch =
        query.watch(
            new ListOptionsBuilder().withResourceVersion(now).withAllowWatchBookmarks(true).build(),
            new Events(scope));
    Watch previous = watches.put(scope, watch);
    if (previous != null) {
      previous.close();
    }
    lost.remove(scope);
  }

  private void reopenLater(String scope, Duration delay) {
    if (!isRunning()) {
      return;
    }
    reopener.schedule(
        () -> {
          try {
            open(scope);
            reconcileAll(scope);
          } catch (RuntimeException e) {
            Duration next = delay.multipliedBy(2);
            next = next.compareTo(MAX_RETRY) > 0 ? MAX_RETRY : next;
            LOG.warn(
                "could not watch manifests ({}), retrying in {}: {}",
                describe(scope),
                next,
                e.getMessage());
            reopenLater(scope, next);
          }
        },
        delay.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Every known filter of {@code scope}: their manifests may have changed while unwatched. */
  private void reconcileAll(String scope) {
    List<ResourceID> ids =
        filters
            .list(f -> scope.equals(ALL_NAMESPACES) || scope.equals(f.getMetadata().getNamespace()))
            .map(ResourceID::fromResource)
            .toList();
    ids.forEach(id -> getEventHandler().handleEvent(new Event(id)));
  }

  private static String describe(String scope) {
    return scope.equals(ALL_NAMESPACES) ? "all namespaces" : "namespace " + scope;
  }

  /** Maps each event to its filter; holds nothing once the event is handled. */
  private final class Events implements Watcher<ConfigMap> {

    private final String scope;

    Events(String scope) {
      this.scope = scope;
    }

    @Override
    public void eventReceived(Action action, ConfigMap configMap) {
      if (action == Action.BOOKMARK || !isRunning()) {
        return;
      }
      filterOf(configMap).ifPresent(id -> getEventHandler().handleEvent(new Event(id)));
    }

    @Override
    public void onClose(WatcherException cause) {
      if (!isRunning()) {
        return;
      }
      lost.add(scope);
      LOG.info(
          "manifest watch ({}) closed, opening it again: {}", describe(scope), cause.getMessage());
      reopenLater(scope, FIRST_RETRY);
    }

    @Override
    public void onClose() {
      // Closed by stop() or by open() replacing it.
    }
  }
}
