package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.testing.operator.TestStores.keys;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * What a filter in an object store writes, on real servers (versitygw and a real API server, audit
 * M3): its manifest ConfigMap goes to etcd at every publish and is charged to the etcd write budget
 * like a ConfigMap filter's writes; what it uploads is bounded per namespace and hour.
 */
@RealKubernetes(crdDirs = "crds")
class StoreWriteBudgetTest {

  private static final String OPERATOR_NAMESPACE = "bloom-s3budget-operator";
  private static final long NAMESPACE_BYTES_PER_HOUR = 256 * 1024;
  private static final long FILTER_BYTES_PER_HOUR = 128 * 1024;
  private static final long UPLOAD_BYTES_PER_HOUR = 2 * 1024 * 1024;
  private static final Duration ATTACK = Duration.ofSeconds(40);
  private static final S3Server SERVER = S3Server.start();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_MIN_PUBLISH_INTERVAL", "1s")
          .setting(
              "BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR", Long.toString(NAMESPACE_BYTES_PER_HOUR))
          .setting("BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR", Long.toString(FILTER_BYTES_PER_HOUR))
          .setting(
              "BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR", Long.toString(UPLOAD_BYTES_PER_HOUR))
          .build();

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  private static String filter(String name, String store, long expected, List<String> keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: %d
          snapshot: {store: %s, chunkSizeBytes: 1024, keepVersions: 10}
          source:
            inline: [%s]
        """
        .formatted(name, expected, store, String.join(", ", keys));
  }

  private static String store(KubernetesClient client, String namespace) {
    String name = "budget-" + System.nanoTime() % 100000;
    TestStores.store(name)
        .on(SERVER, SERVER.createBucket("budget"))
        .allowing(namespace)
        .create(client);
    return name;
  }

  /** Bytes of every revision of one ConfigMap the API server stored, as its watch delivers them. */
  private static final class Revisions implements Watcher<ConfigMap> {
    final AtomicLong bytes = new AtomicLong();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicLong largest = new AtomicLong();

    @Override
    public void eventReceived(Action action, ConfigMap map) {
      if (action == Action.ADDED || action == Action.MODIFIED) {
        long size = Serialization.asJson(map).getBytes(StandardCharsets.UTF_8).length;
        bytes.addAndGet(size);
        writes.incrementAndGet();
        largest.accumulateAndGet(size, Math::max);
      }
    }

    @Override
    public void onClose(WatcherException cause) {}
  }

  /**
   * Audit M3: a store filter of 235 chunks, keepVersions 10, its inline keys changed every 1.5 s.
   * Before, each publish rewrote the manifest ConfigMap (up to ~300 KB) uncharged: 7.4 MB in 40 s
   * against a 256 KiB/h budget. Now the manifest bytes stay within the budget and the filter says
   * why it stopped publishing.
   */
  @Test
  void manifestWritesOfAStoreFilterAreChargedToTheEtcdWriteBudget(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String store = store(client, ns.name());
    Revisions revisions = new Revisions();
    Set<String> reasons = ConcurrentHashMap.newKeySet();
    try (Watch watch =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("churn"))
            .watch(revisions)) {
      apply(client, ns.name(), filter("churn", store, 200_000, keys(100, "k0")));
      awaitStatus(client, ns.name(), "churn", f -> ready(f, "True", Reasons.PUBLISHED));
      assertThat(manifest(client, ns.name(), "churn").chunks()).hasSizeGreaterThan(200);
      long end = System.nanoTime() + ATTACK.toNanos();
      for (int round = 1; System.nanoTime() < end; round++) {
        List<String> next = keys(100, "k" + round);
        client
            .resources(BloomFilter.class)
            .inNamespace(ns.name())
            .withName("churn")
            .edit(
                f -> {
                  f.getSpec().getSource().setInline(next);
                  return f;
                });
        Thread.sleep(1500);
        BloomFilter now =
            client.resources(BloomFilter.class).inNamespace(ns.name()).withName("churn").get();
        ReadyCondition.of(now).ifPresent(c -> reasons.add(c.getReason()));
      }
      Thread.sleep(2000);
    }
    System.out.printf(
        "M3 store-mode manifest ConfigMap: %d writes, %d bytes to etcd in %s (namespace budget %d"
            + " B/h, filter %d B/h); largest revision %d B; Ready reasons seen %s%n",
        revisions.writes.get(),
        revisions.bytes.get(),
        ATTACK,
        NAMESPACE_BYTES_PER_HOUR,
        FILTER_BYTES_PER_HOUR,
        revisions.largest.get(),
        reasons);
    assertThat(revisions.bytes.get())
        .as("manifest ConfigMap bytes written to etcd")
        .isLessThanOrEqualTo(FILTER_BYTES_PER_HOUR);
    assertThat(reasons).contains(Reasons.WRITE_BUDGET_EXCEEDED);
    // The last published version is whole and served.
    assertThat(manifest(client, ns.name(), "churn")).isNotNull();
  }

  /**
   * A publish whose upload does not fit the namespace's upload budget (a new geometry is a whole
   * new base) is refused before anything is uploaded; the published version keeps serving.
   */
  @Test
  void anUploadOverTheNamespaceUploadBudgetIsRefused(KubernetesClient client, TestNamespace ns)
      throws Exception {
    String store = store(client, ns.name());
    apply(client, ns.name(), filter("big", store, 200_000, keys(100, "a")));
    awaitStatus(client, ns.name(), "big", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest published = manifest(client, ns.name(), "big");
    String bucket =
        client
            .resources(io.bloomoperator.api.BloomStore.class)
            .withName(store)
            .get()
            .getSpec()
            .getBucket();
    int objects = objects(bucket, ns.name(), "big");

    // About 2.4 MB of bits: more than the 2 MiB an hour the namespace may upload.
    client
        .resources(BloomFilter.class)
        .inNamespace(ns.name())
        .withName("big")
        .edit(
            f -> {
              f.getSpec().setExpectedInsertions(2_000_000L);
              return f;
            });
    BloomFilter refused =
        awaitStatus(
            client, ns.name(), "big", f -> ready(f, "False", Reasons.STORE_UPLOAD_BUDGET_EXCEEDED));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains("BLOOM_STORE_NAMESPACE_UPLOAD_BYTES_PER_HOUR")
        .contains("keeps serving");
    assertThat(manifest(client, ns.name(), "big").version()).isEqualTo(published.version());
    assertThat(objects(bucket, ns.name(), "big")).isEqualTo(objects);
  }

  private static int objects(String bucket, String namespace, String filter) {
    try (S3Client s3 = SERVER.client()) {
      return s3
          .listObjectsV2Paginator(
              b ->
                  b.bucket(bucket)
                      .prefix(StoreObjectKeys.filterDirectory("bloom", namespace, filter)))
          .contents()
          .stream()
          .toList()
          .size();
    }
  }
}
