package io.bloomoperator.faults;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Fault 11 of docs/reliability.md: the packaged operator, in its own JVM, is SIGKILLed while it
 * PUTs the chunks of a new version to an object store (versitygw behind a {@link TcpProxy} that
 * slows uploads, so the upload takes seconds), the moment the store holds some of them. Every
 * manifest the ConfigMap ever holds (each watch event, and polls) must name only objects that
 * exist; a restarted operator publishes, and the objects the killed upload left are removed once
 * they are older than the filter's grace period.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class StoreUploadKillFaultTest {

  private static final String OPERATOR_NAMESPACE = "bloom-storekill-operator";
  private static final String FILTER = "big";
  private static final String PREFIX = "bloom";

  @Test
  void anOperatorKilledMidUploadLeavesNoManifestNamingAMissingObject(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    long started = System.nanoTime();
    // ~19 MB of bits at 1 % (mostly zeros: 200 keys), 1 MB chunks, each connection slowed to
    // 1 MB/s: the upload of the big version takes about 5 s with the default 4 writers.
    long expected = FaultParameters.integer("storeKillExpected", 16_000_000);
    long rate = FaultParameters.integer("storeKillUploadRate", 1_000_000);
    // The restarted operator finds the crashed build and waits out its backoff (1 min) before it
    // builds again; by then the leftovers are older than this and go at its first clean-up. (A
    // grace period longer than the backoff leaves them to a later clean-up, which must tell them
    // from the republished version's chunks: ObjectStoreTransportTest covers that in seconds.)
    Duration retain = Duration.ofSeconds(10);
    String namespace = ns.name();
    try (S3Server server = S3Server.start();
        TcpProxy proxy = new TcpProxy("127.0.0.1", server.port());
        S3Client s3 = server.client()) {
      String bucket = server.createBucket("kill");
      String store = "kill-" + System.nanoTime() % 100000;
      TestStores.writerCredentials(client, OPERATOR_NAMESPACE, server);
      // Through the proxy, which slows the upload down.
      TestStores.store(store)
          .at("http://127.0.0.1:" + proxy.port(), bucket)
          .allowing(namespace)
          .create(client);
      apply(client, namespace, filter(store, 1_000, keys("a"), retain));
      String directory = StoreObjectKeys.filterDirectory(PREFIX, namespace, FILTER);
      Path log = Files.createTempFile("operator-storekill-", ".log");
      System.out.println("store-upload-kill: operator log " + log);
      try (ManifestChecker checker = new ManifestChecker(client, namespace, s3, bucket, directory);
          OperatorProcess operator =
              new OperatorProcess(
                  cluster.kubeconfig(),
                  Map.of(
                      "BLOOM_MIN_PUBLISH_INTERVAL",
                      "0",
                      "BLOOM_WATCH_NAMESPACES",
                      namespace,
                      "BLOOM_OPERATOR_NAMESPACE",
                      OPERATOR_NAMESPACE,
                      "BLOOM_HTTP_ALLOW",
                      "127.0.0.1/32",
                      "BLOOM_MAX_STORE_SNAPSHOT_BYTES",
                      Long.toString(32L << 20)),
                  log)) {
        checker.start();
        operator.start();
        operator.awaitStarted(Duration.ofSeconds(90));
        awaitStatus(client, namespace, FILTER, f -> ready(f, "True", Reasons.PUBLISHED));
        await().atMost(Duration.ofSeconds(10)).until(() -> checker.current() != null);
        Manifest first = checker.current();
        assertThat(first.store()).isEqualTo(store);

        // The big version: killed once the store holds some of its chunks, not all.
        proxy.throttleUploads(rate);
        mergePatch(
            client, namespace, FILTER, Map.of("spec", Map.of("expectedInsertions", expected)));
        long waitStart = System.nanoTime();
        List<String> unpublished = List.of();
        while (unpublished.size() < 2) {
          assertThat(System.nanoTime() - waitStart)
              .as("the big version's upload began")
              .isLessThan(Duration.ofSeconds(60).toNanos());
          Thread.sleep(20);
          unpublished = unnamed(keys(s3, bucket, directory), checker.current(), directory);
        }
        operator.kill();
        long killedAfterMs = (System.nanoTime() - waitStart) / 1_000_000;
        List<String> leftovers = unnamed(keys(s3, bucket, directory), checker.current(), directory);
        Manifest atKill = checker.current();
        assertThat(atKill.version()).as("the killed upload published nothing").isEqualTo(1);
        assertThat(leftovers).isNotEmpty();
        proxy.throttleUploads(0);

        // While the operator is down the source changes, so the next upload's chunks differ from
        // the leftovers (otherwise they would be reused as they are, content-addressed).
        mergePatch(
            client,
            namespace,
            FILTER,
            Map.of("spec", Map.of("source", Map.of("inline", keys("b")))));
        operator.start();
        operator.awaitStarted(Duration.ofSeconds(90));
        await()
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(250))
            .until(() -> checker.current().version() >= 2);
        Manifest published = checker.current();
        BloomFilterBits bits = decode(s3, bucket, directory, published);
        assertThat(keys("b")).allMatch(bits::mightContainString);
        int chunksNeeded = published.chunks().size();

        // Leftovers go once older than the grace period; then only the published version stays.
        Set<String> named = Set.copyOf(namedKeys(published, directory));
        List<String> stray = leftovers.stream().filter(k -> !named.contains(k)).toList();
        assertThat(stray).as("leftovers the new version does not reuse").isNotEmpty();
        await()
            .atMost(retain.plus(Duration.ofSeconds(60)))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () ->
                    assertThat(keys(s3, bucket, directory))
                        .containsExactlyInAnyOrderElementsOf(named));
        operator.kill();
        checker.close();
        long seconds = (System.nanoTime() - started) / 1_000_000_000;
        FaultParameters.report(
            "store-upload-kill",
            String.format(
                "killedAfterMs=%d chunksAtKill=%d of %d leftovers=%d strayRemoved=%d"
                    + " manifestsChecked=%d (watched %d) objectsChecked=%d violations=%d"
                    + " seconds=%d",
                killedAfterMs,
                leftovers.size(),
                chunksNeeded,
                leftovers.size(),
                stray.size(),
                checker.checks(),
                checker.watched(),
                checker.objectsChecked(),
                checker.violations().size(),
                seconds));
        assertThat(leftovers.size()).as("the kill landed mid-upload").isLessThan(chunksNeeded);
        assertThat(checker.violations()).isEmpty();
        assertThat(checker.watched()).as("manifest versions seen by the watch").isGreaterThan(1);
      }
    }
  }

  private static String filter(String store, long expected, List<String> keys, Duration retain) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: %d
          snapshot: {store: %s, retainPreviousFor: %ds}
          source:
            inline: [%s]
        """
        .formatted(FILTER, expected, store, retain.toSeconds(), String.join(", ", keys));
  }

  private static List<String> keys(String tag) {
    return IntStream.range(0, 200).mapToObj(i -> tag + "-" + i).toList();
  }

  /** Every key under {@code directory}. */
  private static List<String> keys(S3Client s3, String bucket, String directory) {
    return s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(directory)).contents().stream()
        .map(S3Object::key)
        .toList();
  }

  /** Keys of the objects {@code manifest} names, base and deltas. */
  private static List<String> namedKeys(Manifest manifest, String directory) {
    List<String> named = new ArrayList<>();
    manifest.chunks().forEach(c -> named.add(StoreObjectKeys.key(directory, c.name(), c.sha256())));
    manifest
        .deltas()
        .forEach(
            d ->
                d.chunks()
                    .forEach(c -> named.add(StoreObjectKeys.key(directory, c.name(), c.sha256()))));
    return named;
  }

  private static List<String> unnamed(List<String> present, Manifest manifest, String directory) {
    Set<String> named = new HashSet<>(namedKeys(manifest, directory));
    return present.stream().filter(k -> !named.contains(k)).toList();
  }

  private static BloomFilterBits decode(
      S3Client s3, String bucket, String directory, Manifest manifest) throws Exception {
    return SnapshotDecoder.decode(
        manifest,
        (index, ref) -> {
          try {
            return s3.getObjectAsBytes(
                    b ->
                        b.bucket(bucket)
                            .key(StoreObjectKeys.key(directory, ref.name(), ref.sha256())))
                .asByteArray();
          } catch (NoSuchKeyException e) {
            return null;
          }
        });
  }

  /**
   * Checks every manifest the filter's ConfigMap holds: each version the watch delivers and one
   * poll every 200 ms. Each object it names must exist with the size it names, unless a newer
   * version had replaced it and its grace period could be over (then it is only counted).
   */
  private static final class ManifestChecker implements AutoCloseable {

    private final KubernetesClient client;
    private final String namespace;
    private final S3Client s3;
    private final String bucket;
    private final String directory;
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final AtomicInteger checks = new AtomicInteger();
    private final AtomicInteger watched = new AtomicInteger();
    private final AtomicInteger objects = new AtomicInteger();
    private volatile Manifest current;
    private volatile boolean running;
    private Watch watch;
    private Thread poller;

    ManifestChecker(
        KubernetesClient client, String namespace, S3Client s3, String bucket, String directory) {
      this.client = client;
      this.namespace = namespace;
      this.s3 = s3;
      this.bucket = bucket;
      this.directory = directory;
    }

    void start() {
      running = true;
      watch =
          client
              .configMaps()
              .inNamespace(namespace)
              .withName(SnapshotNames.manifestName(FILTER))
              .watch(
                  new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, ConfigMap configMap) {
                      if (action != Action.DELETED && check(configMap)) {
                        watched.incrementAndGet();
                      }
                    }

                    @Override
                    public void onClose(WatcherException cause) {
                      if (running) {
                        violations.add("manifest watch closed: " + cause.getMessage());
                      }
                    }
                  });
      poller =
          new Thread(
              () -> {
                while (running) {
                  check(
                      client
                          .configMaps()
                          .inNamespace(namespace)
                          .withName(SnapshotNames.manifestName(FILTER))
                          .get());
                  try {
                    Thread.sleep(200);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "manifest-poll");
      poller.setDaemon(true);
      poller.start();
    }

    /** Whether {@code configMap} held a manifest (checked). */
    private synchronized boolean check(ConfigMap configMap) {
      String json = configMap == null ? null : SnapshotConfigMaps.manifestJson(configMap);
      if (json == null) {
        return false;
      }
      Manifest manifest;
      try {
        manifest = Manifest.fromJson(json);
      } catch (Exception e) {
        violations.add("unparsable manifest: " + e.getMessage());
        return false;
      }
      checks.incrementAndGet();
      if (current != null && manifest.version() < current.version()) {
        violations.add("version went back from " + current.version() + " to " + manifest.version());
      }
      for (Manifest.ChunkRef ref : manifest.chunks()) {
        check(manifest, ref);
      }
      manifest.deltas().forEach(d -> d.chunks().forEach(ref -> check(manifest, ref)));
      if (current == null || manifest.version() >= current.version()) {
        current = manifest;
      }
      return true;
    }

    private void check(Manifest manifest, Manifest.ChunkRef ref) {
      objects.incrementAndGet();
      String key = StoreObjectKeys.key(directory, ref.name(), ref.sha256());
      try {
        long size = s3.headObject(b -> b.bucket(bucket).key(key)).contentLength();
        if (size != ref.bytes()) {
          violations.add("v" + manifest.version() + " names " + key + " of another size");
        }
      } catch (NoSuchKeyException e) {
        missing(manifest, key);
      } catch (software.amazon.awssdk.services.s3.model.S3Exception e) {
        if (e.statusCode() == 404) {
          missing(manifest, key);
        } else {
          throw e;
        }
      }
    }

    private void missing(Manifest manifest, String key) {
      // Superseded versions lose their objects after the grace period: only the newest may not.
      if (current == null || manifest.version() >= current.version()) {
        violations.add("v" + manifest.version() + " names missing object " + key);
      }
    }

    Manifest current() {
      return current;
    }

    int checks() {
      return checks.get();
    }

    int watched() {
      return watched.get();
    }

    int objectsChecked() {
      return objects.get();
    }

    List<String> violations() {
      return List.copyOf(violations);
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      if (watch != null) {
        watch.close();
      }
      if (poller != null) {
        poller.interrupt();
        poller.join(5_000);
      }
    }
  }
}
