package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.cluster.RestartableCluster;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 3 of docs/reliability.md: kube-apiserver and etcd are SIGKILLed and restarted (same port,
 * same data) while several {@link LiveBloomFilter} readers follow a filter and look up keys
 * non-stop. Two API servers share the etcd: the readers use the first, the operator and the test
 * the second, so while the readers' API server is down the operator publishes a new version through
 * the other one. When etcd is down nothing can be written; the new version is published as soon as
 * etcd is back, while the readers' watches are still recovering.
 *
 * <p>Every lookup asks for a key that every version contains (the source only ever grows), so every
 * answer must be true: a reader that lost, emptied or tore its filter would answer false, and a
 * lookup must never throw. After each recovery every reader must serve the new version.
 */
@Tag("fault")
class ControlPlaneRestartFaultTest {

  private static final String NS = "faults";
  private static final String FILTER = "restart";
  private static final int READERS = 3;

  @Test
  void readersKeepAnsweringThroughApiServerAndEtcdRestarts() throws Exception {
    int restarts = FaultParameters.integer("restarts", 1);
    Duration outage = FaultParameters.millis("outage", 5_000);
    try (RestartableCluster cluster = RestartableCluster.start(2, 0)) {
      System.out.println("control-plane-restart: process logs in " + cluster.logDirectory());
      cluster.installCrds("crds");
      try (KubernetesClient admin = cluster.newClient(1)) {
        List<String> keys = createFilter(admin);
        Path log = Files.createTempFile("control-plane-restart-", ".log");
        try (OperatorProcess operator =
                new OperatorProcess(
                    cluster.kubeconfig(1),
                    Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0", "BLOOM_WATCH_NAMESPACES", NS),
                    log);
            Readers readers = new Readers(cluster, READERS, keys.subList(0, 5_000))) {
          operator.start();
          readers.awaitVersion(1, Duration.ofSeconds(120));
          readers.startLookups();
          long version = 1;
          List<Long> apiServerCatchUp = new ArrayList<>();
          List<Long> etcdCatchUp = new ArrayList<>();
          for (int round = 1; round <= restarts; round++) {
            // The readers' API server goes away; a new version is published through the other.
            cluster.killApiServer(0);
            keys.addAll(range("api-" + round, 500));
            writeSource(admin, keys, version);
            version = awaitPublished(admin, version + 1);
            Thread.sleep(outage.toMillis());
            cluster.startApiServer(0);
            apiServerCatchUp.add(readers.awaitVersion(version, Duration.ofSeconds(120)));
            readers.assertAllHold(keys);

            // etcd goes away under both API servers, the operator and the readers.
            cluster.killEtcd();
            Thread.sleep(outage.toMillis());
            cluster.startEtcd();
            long etcdBack = System.nanoTime();
            keys.addAll(range("etcd-" + round, 500));
            writeSource(admin, keys, version + 1_000L);
            version = awaitPublished(admin, version + 1);
            readers.awaitVersion(version, Duration.ofSeconds(120));
            etcdCatchUp.add(Duration.ofNanos(System.nanoTime() - etcdBack).toMillis());
            readers.assertAllHold(keys);
          }
          readers.stopLookups();
          FaultParameters.report(
              "control-plane-restart",
              String.format(
                  "apiServerRestarts=%d etcdRestarts=%d outage=%s readers=%d lookups=%d"
                      + " wrongLookups=%d failedLookups=%d readerLoadFailures=%d"
                      + " apiServerRestart->allReadersOnNewVersion(ms)=%s"
                      + " etcdRestart->newVersionPublishedAndLoadedByAll(ms)=%s"
                      + " versionsPublished=%d",
                  restarts,
                  restarts,
                  outage,
                  READERS,
                  readers.lookups.get(),
                  readers.wrong.get(),
                  readers.failed.get(),
                  readers.loadFailures(),
                  apiServerCatchUp,
                  etcdCatchUp,
                  version));
          assertThat(readers.wrong.get()).isZero();
          assertThat(readers.failed.get()).isZero();
          assertThat(readers.lookups.get()).isPositive();
        }
      }
    }
  }

  /** The namespace, the source (5,000 keys every version keeps) and the filter. */
  private static List<String> createFilter(KubernetesClient admin) {
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();
    List<String> keys = new ArrayList<>(range("stable", 5_000));
    writeSource(admin, keys, 0);
    SnapshotFixtures.apply(
        admin,
        NS,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source: {configMap: {name: ids, key: ids}}
          snapshot: {chunkSizeBytes: 1024, retainPreviousFor: 30s}
        """
            .formatted(FILTER));
    return keys;
  }

  @Test
  void readerWhoseWatchHistoryWasCompactedAwayRelistsAndConverges() throws Exception {
    try (RestartableCluster cluster = RestartableCluster.start(2, 0)) {
      cluster.installCrds("crds");
      try (KubernetesClient admin = cluster.newClient(1)) {
        List<String> keys = createFilter(admin);
        Path log = Files.createTempFile("watch-gone-", ".log");
        try (OperatorProcess operator =
                new OperatorProcess(
                    cluster.kubeconfig(1),
                    Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0", "BLOOM_WATCH_NAMESPACES", NS),
                    log);
            Readers readers = new Readers(cluster, 1, keys.subList(0, 5_000))) {
          operator.start();
          readers.awaitVersion(1, Duration.ofSeconds(120));
          readers.startLookups();
          int disconnects = FaultParameters.integer("restarts", 1);
          long version = 1;
          int gone = 0;
          List<Long> catchUps = new ArrayList<>();
          for (int round = 1; round <= disconnects; round++) {
            String seenByReader = manifestResourceVersion(admin);
            cluster.killApiServer(0);
            for (int i = 1; i <= 3; i++) {
              keys.addAll(range("gone-" + round + "-" + i, 500));
              writeSource(admin, keys, version);
              version = awaitPublished(admin, version + 1);
            }
            cluster.compactEtcd();
            cluster.startApiServer(0);
            long started = System.nanoTime();
            // What the reader's watch meets when it resumes where it was: the history is gone.
            if (watchFromIsGone(cluster, seenByReader)) {
              gone++;
            }
            readers.awaitVersion(version, Duration.ofSeconds(120));
            catchUps.add(Duration.ofNanos(System.nanoTime() - started).toMillis());
            readers.assertAllHold(keys);
          }
          readers.stopLookups();
          FaultParameters.report(
              "watch-gone",
              String.format(
                  "disconnects=%d compactions=%d watchesFromReaderVersionGot410=%d"
                      + " versionsPublishedWhileDisconnected=%d apiServerBack->readerOnLatest(ms)=%s"
                      + " lookups=%d wrongLookups=%d failedLookups=%d",
                  disconnects,
                  disconnects,
                  gone,
                  version - 1,
                  catchUps,
                  readers.lookups.get(),
                  readers.wrong.get(),
                  readers.failed.get()));
          assertThat(gone).isEqualTo(disconnects);
          assertThat(readers.wrong.get()).isZero();
          assertThat(readers.failed.get()).isZero();
        }
      }
    }
  }

  private static String manifestResourceVersion(KubernetesClient admin) {
    return admin
        .configMaps()
        .inNamespace(NS)
        .withName(SnapshotNames.manifestName(FILTER))
        .get()
        .getMetadata()
        .getResourceVersion();
  }

  /** Whether a watch of the manifest resumed from {@code resourceVersion} is closed with 410. */
  private static boolean watchFromIsGone(RestartableCluster cluster, String resourceVersion)
      throws Exception {
    CompletableFuture<Boolean> gone = new CompletableFuture<>();
    try (KubernetesClient client = cluster.newClient(0);
        Watch watch =
            client
                .configMaps()
                .inNamespace(NS)
                .withField("metadata.name", SnapshotNames.manifestName(FILTER))
                .watch(
                    new ListOptionsBuilder().withResourceVersion(resourceVersion).build(),
                    new Watcher<>() {
                      @Override
                      public void eventReceived(Action action, ConfigMap resource) {}

                      @Override
                      public void onClose(WatcherException cause) {
                        gone.complete(cause.isHttpGone());
                      }
                    })) {
      return gone.get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      return false;
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      return e.getCode() == 410;
    }
  }

  private static List<String> range(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  private static void writeSource(KubernetesClient admin, List<String> keys, long request) {
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .until(() -> writeSourceOnce(admin, keys, request));
  }

  private static boolean writeSourceOnce(KubernetesClient admin, List<String> keys, long request) {
    SnapshotFixtures.sourceConfigMap(admin, NS, "ids", "ids", keys);
    if (request > 0) {
      SnapshotFixtures.mergePatch(
          admin,
          NS,
          FILTER,
          Map.of(
              "metadata", Map.of("annotations", Map.of(RebuildRequest.ANNOTATION, "r" + request))));
    }
    return true;
  }

  private static long awaitPublished(KubernetesClient admin, long atLeast) {
    return await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(() -> SnapshotFixtures.manifest(admin, NS, FILTER).version(), v -> v >= atLeast);
  }

  /** The readers, each with its own client of API server 0, and their lookup threads. */
  private static final class Readers implements AutoCloseable {
    private final List<KubernetesClient> clients = new ArrayList<>();
    private final List<LiveBloomFilter<String>> filters = new ArrayList<>();
    private final List<String> alwaysPresent;
    private final AtomicBoolean looking = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    final AtomicLong lookups = new AtomicLong();
    final AtomicLong wrong = new AtomicLong();
    final AtomicLong failed = new AtomicLong();

    Readers(RestartableCluster cluster, int count, List<String> alwaysPresent) {
      this.alwaysPresent = List.copyOf(alwaysPresent);
      for (int i = 0; i < count; i++) {
        KubernetesClient client = cluster.newClient(0);
        clients.add(client);
        filters.add(
            BloomFilterWatcher.builder(client, NS, FILTER, LiveKeyType.STRING)
                .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(2))
                .start());
      }
    }

    /** Waits until every reader serves {@code version}; returns how long that took (ms). */
    long awaitVersion(long version, Duration timeout) {
      long start = System.nanoTime();
      for (LiveBloomFilter<String> filter : filters) {
        await()
            .atMost(timeout)
            .pollInterval(Duration.ofMillis(50))
            .until(() -> filter.currentVersion() >= version);
      }
      return Duration.ofNanos(System.nanoTime() - start).toMillis();
    }

    void assertAllHold(List<String> keys) {
      for (LiveBloomFilter<String> filter : filters) {
        assertThat(keys).allMatch(filter::mightContain);
      }
    }

    void startLookups() {
      looking.set(true);
      for (LiveBloomFilter<String> filter : filters) {
        Thread thread =
            new Thread(
                () -> {
                  int i = 0;
                  while (looking.get()) {
                    String key = alwaysPresent.get(i++ % alwaysPresent.size());
                    try {
                      if (!filter.mightContain(key)) {
                        wrong.incrementAndGet();
                      }
                    } catch (RuntimeException e) {
                      failed.incrementAndGet();
                    }
                    if (lookups.incrementAndGet() % 1_000 == 0) {
                      Thread.yield(); // two cores: leave room for the control plane
                      try {
                        Thread.sleep(1);
                      } catch (InterruptedException e) {
                        return;
                      }
                    }
                  }
                },
                "lookups");
        thread.setDaemon(true);
        threads.add(thread);
        thread.start();
      }
    }

    void stopLookups() throws InterruptedException {
      looking.set(false);
      for (Thread thread : threads) {
        thread.join(10_000);
      }
    }

    long loadFailures() {
      return filters.stream().mapToLong(LiveBloomFilter::failures).sum();
    }

    @Override
    public void close() throws InterruptedException {
      stopLookups();
      filters.forEach(LiveBloomFilter::close);
      clients.forEach(KubernetesClient::close);
    }
  }
}
