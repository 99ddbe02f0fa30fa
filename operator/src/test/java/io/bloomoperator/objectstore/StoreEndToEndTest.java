package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.changeKeys;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.snapshotConfigMaps;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.storeread.RecordingListener;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * Issue 19 end to end on real servers: the operator publishes to a BloomStore (versitygw), and a
 * sidecar-lib reader, configured with bloom-sidecar-s3 and holding only a read-only user (GET under
 * the store's prefix, by bucket policy), loads the filter, answers every key, and swaps without a
 * restart when the source changes, whole or as a delta through the store. Etcd holds the manifest
 * alone. The two sides share no code path of the test: the operator writes what it writes, the
 * reader finds it from its own configuration (endpoint, bucket, prefix) and the manifest.
 */
@RealKubernetes(crdDirs = "crds")
class StoreEndToEndTest {

  private static final String OPERATOR_NAMESPACE = "bloom-s3e2e-operator";
  private static final String READER = "bloomreader";
  private static final String READER_SECRET = "reader-secret-" + System.nanoTime();
  private static final String PREFIX = "bloom";
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static final S3Server SERVER = S3Server.start(Map.of(READER, READER_SECRET));

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_MIN_PUBLISH_INTERVAL", "0")
          .build();

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  private static List<String> keys(String tag, int from, int to) {
    return IntStream.range(from, to).mapToObj(i -> tag + "-" + i).toList();
  }

  @Test
  void operatorPublishesToTheStoreAndAReadOnlyReaderLoadsAndSwapsWholeAndDelta(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String storeName = "e2e-" + System.nanoTime() % 100000;
    String bucket = SERVER.createReadOnlyBucket("e2e", READER, PREFIX);
    TestStores.store(storeName)
        .on(SERVER, bucket)
        .allowing(ns.name())
        .with("prefix: " + PREFIX)
        .create(client);

    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 5000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 20000
          source:
            configMap: {name: ids, key: ids}
          refreshInterval: 10m
          snapshot: {store: %s, chunkSizeBytes: 4096, retainPreviousFor: 3s}
        """
            .formatted(storeName));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest v1 = manifest(client, ns.name(), "ids");
    assertThat(v1.store()).isEqualTo(storeName);
    assertThat(v1.chunks()).as("several objects").hasSizeGreaterThan(3);

    RecordingListener events = new RecordingListener();
    try (TcpProxy proxy = new TcpProxy("127.0.0.1", SERVER.port());
        S3ObjectStore store =
            S3ObjectStore.builder()
                .endpoint(URI.create("http://127.0.0.1:" + proxy.port()))
                .bucket(bucket)
                .prefix(PREFIX)
                .region(S3Server.REGION)
                .credentials(
                    StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(READER, READER_SECRET)))
                .build();
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                .objectStore(storeName, store)
                .listener(events)
                .start()) {
      assertThat(live.awaitReady(WAIT)).as("loaded from the store: %s", events.failures).isTrue();
      assertThat(live.currentVersion()).isEqualTo(v1.version());
      assertThat(keys).allMatch(live::mightContain);
      assertThat(proxy.bytesFromTarget()).isGreaterThanOrEqualTo(v1.totalBytes());

      // A new source: half the keys new, too big a change for a delta, so a whole new base.
      List<String> half = new ArrayList<>(keys("k", 0, 2500));
      half.addAll(keys("b", 0, 2500));
      keys = new LinkedHashSet<>(half);
      changeKeys(client, ns.name(), "ids", List.copyOf(keys));
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() > v1.version());
      Manifest v2 = manifest(client, ns.name(), "ids");
      await().atMost(WAIT).until(() -> live.currentVersion() == v2.version());
      assertThat(keys).allMatch(live::mightContain);

      // 50 keys out, 50 in: published as a delta on v2, and the reader fetches only the delta.
      keys.removeAll(keys("k", 0, 50));
      keys.addAll(keys("d", 0, 50));
      long before = proxy.bytesFromTarget();
      changeKeys(client, ns.name(), "ids", List.copyOf(keys));
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() > v2.version());
      Manifest v3 = manifest(client, ns.name(), "ids");
      assertThat(v3.chained()).as("published as a delta").isTrue();
      assertThat(v3.deltas()).hasSize(1);
      await().atMost(WAIT).until(() -> live.currentVersion() == v3.version());
      assertThat(keys).allMatch(live::mightContain);
      assertThat(proxy.bytesFromTarget() - before)
          .as("a reader holding v2 downloads the delta, not the whole payload")
          .isLessThan(v3.totalBytes() / 2);

      assertThat(events.failures).isEmpty();
      assertThat(events.swaps).containsExactly(v1.version(), v2.version(), v3.version());
    }
    // Etcd: the manifest alone, through all three publishes.
    assertThat(snapshotConfigMaps(client, ns.name(), "ids"))
        .extracting(c -> c.getMetadata().getName())
        .containsExactly(SnapshotNames.manifestName("ids"));
  }
}
