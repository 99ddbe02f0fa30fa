package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderCount;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The requests behind status.readers, counted on the operator's own client: while readers only
 * heartbeat, the operator sends no status request at all (not merely none that changes the object:
 * the API server answers an identical merge patch without a write, so watching the BloomFilter
 * cannot tell a no-op patch from none), and when one reader moves to another version it sends
 * exactly one.
 */
@RealKubernetes(crdDirs = "crds")
class ReaderStatusWritesTest {

  private static final int REAL_READERS = 5;
  private static final Duration HEARTBEAT = Duration.ofSeconds(1);
  private static final Duration STATUS_INTERVAL = Duration.ofSeconds(1);

  private static final RequestLog REQUESTS = new RequestLog();

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")))
          .withReaderSettings(
              new ReaderSettings(
                  STATUS_INTERVAL, 200, Duration.ofMinutes(10), Duration.ofMinutes(1)))
          .withRequestLog(REQUESTS);

  @Test
  void heartbeatsCauseNoStatusRequestAndOneReaderMovingCausesExactlyOne(
      KubernetesClient client, TestNamespace ns) throws Exception {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a, b]
        """);
    awaitStatus(client, ns.name(), "ids", f -> Long.valueOf(1).equals(f.getStatus().getVersion()));
    mergePatch(
        client, ns.name(), "ids", Map.of("spec", Map.of("source", Map.of("inline", List.of("c")))));
    awaitStatus(client, ns.name(), "ids", f -> Long.valueOf(2).equals(f.getStatus().getVersion()));

    // Real readers (own clients, own pods) serve version 2 and heartbeat every second; one more
    // pod's reader lags on version 1 and heartbeats as often (its report written here).
    List<KubernetesClient> clients = new ArrayList<>();
    List<LiveBloomFilter<String>> readers = new ArrayList<>();
    ScheduledExecutorService heartbeats = Executors.newSingleThreadScheduledExecutor();
    try {
      for (int i = 0; i < REAL_READERS; i++) {
        Pod pod = ReaderPods.pod(client, ns.name(), "app-" + i);
        KubernetesClient own = KubeCluster.shared().newClient();
        clients.add(own);
        readers.add(
            BloomFilterWatcher.builder(own, ns.name(), "ids", LiveKeyType.STRING)
                .podIdentity(pod.getMetadata().getName(), pod.getMetadata().getUid())
                .readerReportInterval(HEARTBEAT)
                .start());
      }
      Pod lagging = ReaderPods.pod(client, ns.name(), "app-lagging");
      AtomicLong served = new AtomicLong(1);
      heartbeats.scheduleAtFixedRate(
          () -> report(client, ns, lagging, served.get()),
          0,
          HEARTBEAT.toMillis(),
          TimeUnit.MILLISECONDS);

      ReaderStatus steady =
          awaitReaders(
              client,
              ns,
              r ->
                  r.getTotal() == REAL_READERS + 1
                      && r.getCurrent() == REAL_READERS
                      && r.getOtherVersions().equals(List.of(ReaderCount.ofVersion(1, 1))));
      assertThat(steady.getVersion()).isEqualTo(2L);
      Thread.sleep(2 * STATUS_INTERVAL.toMillis()); // a round under way when it was seen ends

      int before = statusRequests(ns);
      Thread.sleep(5_000);
      int whileSteady = statusRequests(ns) - before;
      System.out.printf(
          "ReaderStatusWritesTest: %d readers heartbeating every %d s, status every %d s:"
              + " %d status requests in 5 s%n",
          REAL_READERS + 1, HEARTBEAT.toSeconds(), STATUS_INTERVAL.toSeconds(), whileSteady);
      assertThat(whileSteady).as("status requests while only heartbeats arrive").isZero();
      assertThat(readers(client, ns)).isEqualTo(steady);

      // The lagging reader loads version 2: the counts change once.
      int beforeMove = statusRequests(ns);
      served.set(2);
      ReaderStatus moved = awaitReaders(client, ns, r -> r.getCurrent() == REAL_READERS + 1);
      assertThat(moved.getOtherVersions()).isEmpty();
      assertThat(moved.getRolloutCompletedAt()).isNotNull();
      Thread.sleep(4 * STATUS_INTERVAL.toMillis());
      int afterMove = statusRequests(ns) - beforeMove;
      System.out.printf(
          "ReaderStatusWritesTest: one reader moved to v2: %d status request(s) in %d s%n",
          afterMove, 4 + 1);
      assertThat(afterMove).as("status requests for one reader moving").isEqualTo(1);
    } finally {
      heartbeats.shutdownNow();
      readers.forEach(LiveBloomFilter::close);
      clients.forEach(KubernetesClient::close);
    }
  }

  /** The lagging pod's report, serving {@code version}, renewed now. */
  private static void report(KubernetesClient client, TestNamespace ns, Pod pod, long version) {
    Instant now = Instant.now();
    try {
      client
          .resource(
              ReaderReports.toLease(
                  new ReaderReport(
                      ns.name(),
                      pod.getMetadata().getName(),
                      pod.getMetadata().getUid(),
                      "ids",
                      version,
                      ReaderReport.NONE,
                      null,
                      now,
                      now,
                      Duration.ofSeconds(10))))
          .forceConflicts()
          .serverSideApply();
    } catch (RuntimeException e) {
      System.out.println("ReaderStatusWritesTest: heartbeat failed: " + e);
    }
  }

  /** PATCH or PUT requests of the operator to the filter's status subresource so far. */
  private static int statusRequests(TestNamespace ns) {
    String path = "/namespaces/" + ns.name() + "/bloomfilters/ids/status";
    return (int)
        REQUESTS.paths().stream()
            .filter(p -> (p.startsWith("PATCH ") || p.startsWith("PUT ")) && p.endsWith(path))
            .count();
  }

  private static ReaderStatus readers(KubernetesClient client, TestNamespace ns) {
    BloomFilter filter =
        client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").get();
    return filter == null || filter.getStatus() == null ? null : filter.getStatus().getReaders();
  }

  private static ReaderStatus awaitReaders(
      KubernetesClient client, TestNamespace ns, java.util.function.Predicate<ReaderStatus> test) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> readers(client, ns), r -> r != null && test.test(r));
  }
}
