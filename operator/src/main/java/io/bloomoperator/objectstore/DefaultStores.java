package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.BloomStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.health.Status;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store a BloomFilter that names none goes to because it is large: the BloomStore that sets
 * {@code defaultForSnapshotsOver} below the filter's snapshot size and allows its namespace. Only
 * an administrator chooses it (the author's spec still names no store); a filter whose namespace no
 * default store allows stays in ConfigMaps. Several default stores allowing one namespace are a
 * misconfiguration: the one whose name sorts first is used (the same on every replica and
 * reconcile, so filters do not hop between stores) and a warning is logged.
 *
 * <p>The BloomStores are read from an informer's cache, started with the controller, so a reconcile
 * costs no API request for them (a list per reconcile did, for every filter of the cluster). An
 * operator that may not list BloomStores when it starts (the namespaced install has no BloomStore
 * RBAC; a cluster may lack the CRD) keeps no cache and uses no default store until it is restarted
 * with the permission. An event source of the BloomFilter controller only for its lifecycle: a
 * BloomStore change reconciles no filter, each filter sees it at its next reconcile.
 */
public final class DefaultStores extends AbstractEventSource<Void, BloomFilter> {

  private static final Logger LOG = LoggerFactory.getLogger(DefaultStores.class);

  private final KubernetesClient client;
  private volatile SharedIndexInformer<BloomStore> informer;

  /**
   * @param client the operator's client: whether it may list BloomStores is asked at {@link
   *     #start()}
   */
  public DefaultStores(KubernetesClient client) {
    super(Void.class, "default-stores");
    this.client = client;
  }

  @Override
  public synchronized void start() {
    if (isRunning()) {
      return;
    }
    super.start();
    if (!BloomStoreReconciler.canWatch(client)) {
      LOG.warn("cannot list BloomStores (CRD or RBAC missing): no default object store is used");
      return;
    }
    // Blocks until the first list is in the cache: no filter is placed before the stores are known.
    try {
      informer = client.resources(BloomStore.class).inform();
    } catch (KubernetesClientException e) {
      LOG.warn("cannot watch BloomStores (HTTP {}): no default object store is used", e.getCode());
    }
  }

  @Override
  public synchronized void stop() {
    if (!isRunning()) {
      return;
    }
    super.stop();
    if (informer != null) {
      informer.stop();
      informer = null;
    }
  }

  @Override
  public Status getStatus() {
    SharedIndexInformer<BloomStore> running = informer;
    return running == null || running.isRunning() ? Status.HEALTHY : Status.UNHEALTHY;
  }

  @Override
  public Set<Void> getSecondaryResources(BloomFilter primary) {
    return Set.of();
  }

  /**
   * The default store for {@code filter}, if it is larger than a default store's threshold.
   *
   * @param client reads the namespace's labels when a default store allows namespaces by selector
   */
  public Optional<String> forFilter(KubernetesClient client, BloomFilter filter) {
    long size = expectedBytes(filter);
    SharedIndexInformer<BloomStore> cache = informer;
    if (size <= 0 || cache == null) {
      return Optional.empty();
    }
    String namespace = filter.getMetadata().getNamespace();
    List<BloomStore> defaults =
        cache.getStore().list().stream()
            .filter(s -> s.getSpec() != null && s.getSpec().getDefaultForSnapshotsOver() != null)
            .filter(s -> ObjectStores.allows(client, s.getSpec(), namespace))
            .sorted(Comparator.comparing(s -> s.getMetadata().getName()))
            .toList();
    if (defaults.isEmpty()) {
      return Optional.empty();
    }
    BloomStore chosen = defaults.get(0);
    if (defaults.size() > 1) {
      LOG.warn(
          "{} BloomStores set defaultForSnapshotsOver and allow namespace {}; using {}",
          defaults.size(),
          namespace,
          chosen.getMetadata().getName());
    }
    return size > chosen.getSpec().getDefaultForSnapshotsOver()
        ? Optional.of(chosen.getMetadata().getName())
        : Optional.empty();
  }

  /**
   * The filter's snapshot size as far as it is known before the build: the larger of its last
   * published size and the size {@code spec.expectedInsertions} at its false-positive rate needs; 0
   * when neither is known.
   */
  static long expectedBytes(BloomFilter filter) {
    long published =
        filter.getStatus() == null || filter.getStatus().getSizeBytes() == null
            ? 0
            : filter.getStatus().getSizeBytes();
    BloomFilterSpec spec = filter.getSpec();
    long planned = 0;
    if (spec != null
        && spec.getExpectedInsertions() != null
        && spec.getFalsePositiveRate() != null
        && spec.getFalsePositiveRate() > 0
        && spec.getFalsePositiveRate() < 1) {
      // The classic optimum m = -n ln p / (ln 2)^2 bits; header and rounding are negligible here.
      double bits =
          -spec.getExpectedInsertions()
              * Math.log(spec.getFalsePositiveRate())
              / (Math.log(2) * Math.log(2));
      planned = (long) Math.min(Long.MAX_VALUE / 2, Math.ceil(bits / 8));
    }
    return Math.max(published, planned);
  }
}
