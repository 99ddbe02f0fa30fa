package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.changeKeys;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.storeread.RecordingListener;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.ForeignReaderProcesses;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
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
import org.junit.jupiter.api.io.TempDir;

/**
 * The Go and Python readers on chunks the operator published into an object store (versitygw, a
 * real S3 server) on a real API server: each reads with its own store configuration and a read-only
 * user's key files, never anything but the store's name from the manifest, and must answer every
 * key exactly as the Java reader (bloom-sidecar-s3) does, for a whole version and for the delta
 * published on it. Both readers run at once, as separate processes ({@code go test -run
 * TestClusterStore ./kube/} and {@code pytest tests/test_store.py}), taking turns with this side
 * through files: this side writes {@code s<N>.keys} (the version on the first line, then a key and
 * Java's answer per line) and {@code s<N>.published}; each reader writes {@code s<N>.<lang>.seen}.
 */
@RealKubernetes(crdDirs = "crds")
class ForeignReaderStoreTest {

  private static final String OPERATOR_NAMESPACE = "bloom-foreign-store-operator";
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
  void goAndPythonReadersLoadOperatorStoreSnapshotsWithJavasAnswers(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path dir)
      throws Exception {
    String storeName = "foreign-" + System.nanoTime() % 100000;
    String bucket = SERVER.createReadOnlyBucket("foreign", READER, PREFIX);
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
          snapshot: {store: %s, chunkSizeBytes: 4096, retainPreviousFor: 1m}
        """
            .formatted(storeName));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest v1 = manifest(client, ns.name(), "ids");
    assertThat(v1.store()).isEqualTo(storeName);
    assertThat(v1.chunks()).as("several objects").hasSizeGreaterThan(3);

    // The readers' own store configuration: endpoint, bucket, prefix, region and key files.
    Files.writeString(dir.resolve("access-key-id"), READER + "\n");
    Files.writeString(dir.resolve("secret-access-key"), READER_SECRET + "\n");
    Map<String, String> env =
        Map.ofEntries(
            Map.entry("KUBECONFIG", cluster.kubeconfig().toString()),
            Map.entry("BLOOM_CLUSTER_NAMESPACE", ns.name()),
            Map.entry("BLOOM_CLUSTER_FILTER", "ids"),
            Map.entry("BLOOM_STORE_NAME", storeName),
            Map.entry("BLOOM_STORE_ENDPOINT", SERVER.endpoint().toString()),
            Map.entry("BLOOM_STORE_BUCKET", bucket),
            Map.entry("BLOOM_STORE_PREFIX", PREFIX),
            Map.entry("BLOOM_STORE_REGION", S3Server.REGION),
            Map.entry("BLOOM_STORE_ACCESS_KEY_FILE", dir.resolve("access-key-id").toString()),
            Map.entry("BLOOM_STORE_SECRET_KEY_FILE", dir.resolve("secret-access-key").toString()));
    RecordingListener events = new RecordingListener();
    try (ForeignReaderProcesses readers =
            ForeignReaderProcesses.start(dir, "^TestClusterStore$", "tests/test_store.py", env);
        S3ObjectStore store =
            S3ObjectStore.builder()
                .endpoint(SERVER.endpoint())
                .bucket(bucket)
                .prefix(PREFIX)
                .region(S3Server.REGION)
                .accessKeyFiles(dir.resolve("access-key-id"), dir.resolve("secret-access-key"))
                .build();
        LiveBloomFilter<String> java =
            BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                .objectStore(storeName, store)
                .listener(events)
                .start()) {
      assertThat(java.awaitReady(WAIT)).as("Java loaded v1: %s", events.failures).isTrue();
      assertThat(java.currentVersion()).isEqualTo(v1.version());
      List<String> asked = new ArrayList<>(keys("k", 0, 5000));
      asked.addAll(keys("d", 0, 50));
      asked.addAll(keys("absent", 0, 3000));
      readers.publishStep(1, v1.version(), asked, asked.stream().map(java::mightContain).toList());
      readers.awaitSeen(1, ForeignReaderProcesses.FIRST_STEP);

      // 50 keys out, 50 in: a delta on v1 in the store; readers holding v1 fetch only the delta.
      keys.removeAll(keys("k", 0, 50));
      keys.addAll(keys("d", 0, 50));
      changeKeys(client, ns.name(), "ids", List.copyOf(keys));
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() > v1.version());
      Manifest v2 = manifest(client, ns.name(), "ids");
      assertThat(v2.chained()).as("published as a delta").isTrue();
      await().atMost(WAIT).until(() -> java.currentVersion() == v2.version());
      readers.publishStep(2, v2.version(), asked, asked.stream().map(java::mightContain).toList());
      readers.awaitSeen(2, WAIT.multipliedBy(2));
      assertThat(events.failures).isEmpty();
      readers.finish(WAIT);
    }
  }
}
