package io.bloomoperator.objectstore;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.BloomStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store a BloomFilter that names none goes to because it is large: the BloomStore that sets
 * {@code defaultForSnapshotsOver} below the filter's snapshot size and allows its namespace. Only
 * an administrator chooses it (the author's spec still names no store); a filter whose namespace no
 * default store allows stays in ConfigMaps. Several default stores allowing one namespace are a
 * misconfiguration: the one whose name sorts first is used (the same on every replica and
 * reconcile, so filters do not hop between stores) and a warning is logged.
 */
public final class DefaultStores {

  private static final Logger LOG = LoggerFactory.getLogger(DefaultStores.class);

  /** Whether a refused list was logged: once per operator, not once per reconcile. */
  private static final AtomicBoolean UNLISTABLE_LOGGED = new AtomicBoolean();

  private DefaultStores() {}

  /** The default store for {@code filter}, if it is larger than a default store's threshold. */
  public static Optional<String> forFilter(KubernetesClient client, BloomFilter filter) {
    long size = expectedBytes(filter);
    if (size <= 0) {
      return Optional.empty();
    }
    String namespace = filter.getMetadata().getNamespace();
    List<BloomStore> stores;
    try {
      stores = client.resources(BloomStore.class).list().getItems();
    } catch (KubernetesClientException e) {
      // The namespaced install has no BloomStore RBAC (and a cluster may lack the CRD): there are
      // no default stores then, and filters stay on ConfigMaps instead of failing to reconcile.
      if (e.getCode() != 403 && e.getCode() != 404) {
        throw e;
      }
      if (UNLISTABLE_LOGGED.compareAndSet(false, true)) {
        LOG.warn("cannot list BloomStores (HTTP {}): no default object store is used", e.getCode());
      }
      return Optional.empty();
    }
    List<BloomStore> defaults =
        stores.stream()
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
