package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.snapshotConfigMaps;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Issue 19: a filter too large for etcd publishes when its chunks go to an object store. The
 * ConfigMap bound (BLOOM_MAX_SNAPSHOT_BYTES) protects etcd and binds ConfigMap filters only;
 * store-backed ones have their own bound (BLOOM_MAX_STORE_SNAPSHOT_BYTES), which still refuses
 * before any bit array is allocated. Both bounds are scaled down here so the filters stay small.
 */
@RealKubernetes(crdDirs = "crds")
class StoreSnapshotBoundTest {

  private static final String OPERATOR_NAMESPACE = "bloom-s3bound-operator";
  private static final S3Server SERVER = S3Server.shared();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_MAX_SNAPSHOT_BYTES", "4096")
          .setting("BLOOM_MAX_STORE_SNAPSHOT_BYTES", "65536")
          .build();

  private static String filter(String name, String store, int expectedInsertions) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: %d
          source:
            configMap: {name: keys, key: keys}
          snapshot: {%s}
        """
        .formatted(name, expectedInsertions, store == null ? "" : "store: " + store);
  }

  @Test
  void aFilterTooLargeForEtcdPublishesToAStoreUpToTheStoresOwnBound(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String store = "bound-" + System.nanoTime() % 100000;
    String bucket = SERVER.createBucket("bound");
    TestStores.store(store).on(SERVER, bucket).allowing(ns.name()).create(client);
    List<String> keys = IntStream.range(0, 5000).mapToObj(i -> "k-" + i).toList();
    sourceConfigMap(client, ns.name(), "keys", "keys", keys);

    // ~12 KB of bits: over the ConfigMap bound, under the store's.
    apply(client, ns.name(), filter("etcd", null, 10_000));
    apply(client, ns.name(), filter("stored", store, 10_000));
    // ~120 KB: over the store's bound too.
    apply(client, ns.name(), filter("huge", store, 100_000));

    var etcd =
        awaitStatus(client, ns.name(), "etcd", f -> ready(f, "False", Reasons.SNAPSHOT_TOO_LARGE));
    assertThat(ReadyCondition.of(etcd).orElseThrow().getMessage())
        .contains("BLOOM_MAX_SNAPSHOT_BYTES");

    awaitStatus(client, ns.name(), "stored", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(manifest(client, ns.name(), "stored").totalBytes()).isGreaterThan(4096);

    var huge =
        awaitStatus(client, ns.name(), "huge", f -> ready(f, "False", Reasons.SNAPSHOT_TOO_LARGE));
    assertThat(ReadyCondition.of(huge).orElseThrow().getMessage())
        .contains("BLOOM_MAX_STORE_SNAPSHOT_BYTES");
    assertThat(snapshotConfigMaps(client, ns.name(), "huge")).isEmpty();
    try (S3Client s3 = SERVER.client()) {
      assertThat(
              s3.listObjectsV2(
                      b ->
                          b.bucket(bucket)
                              .prefix(StoreObjectKeys.filterDirectory("bloom", ns.name(), "huge")))
                  .contents())
          .isEmpty();
    }
  }
}
