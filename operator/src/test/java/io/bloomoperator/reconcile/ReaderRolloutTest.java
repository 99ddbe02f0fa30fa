package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderCount;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Readers acknowledge what they serve (docs/reader-protocol.md), on a real API server: 50 readers,
 * each with its own client and its own Pod object (no kubelet runs, so the pods stay Pending, but
 * they are live objects with UIDs), are counted in status.readers exactly as they really serve; one
 * stopped shows as stale, one failing with its reason; reports that no live pod of the namespace
 * stands behind are not counted.
 */
@RealKubernetes(crdDirs = "crds")
class ReaderRolloutTest {

  private static final int READERS = 50;

  /** Heartbeat of the test readers: silent after 3 s. */
  private static final Duration HEARTBEAT = Duration.ofSeconds(1);

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withDefaults()
          .withReaderSettings(
              new ReaderSettings(
                  Duration.ofSeconds(1), 200, Duration.ofMinutes(10), Duration.ofMinutes(1)));

  private static String filter(String name, String keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [%s]
        """
        .formatted(name, keys);
  }

  private static ReaderStatus readers(KubernetesClient client, String namespace, String name) {
    BloomFilter filter =
        client.resources(BloomFilter.class).inNamespace(namespace).withName(name).get();
    return filter == null || filter.getStatus() == null ? null : filter.getStatus().getReaders();
  }

  private static ReaderStatus awaitReaders(
      KubernetesClient client,
      String namespace,
      String name,
      java.util.function.Predicate<ReaderStatus> condition) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> readers(client, namespace, name), r -> r != null && condition.test(r));
  }

  /** One reader: its own client, its own pod identity. */
  private record Reader(KubernetesClient client, LiveBloomFilter<String> filter, Pod pod)
      implements AutoCloseable {
    @Override
    public void close() {
      filter.close();
      client.close();
    }
  }

  private static Reader reader(
      String namespace,
      Pod pod,
      java.util.function.UnaryOperator<BloomFilterWatcher.Builder<String>> options) {
    KubernetesClient client = KubeCluster.shared().newClient();
    LiveBloomFilter<String> filter =
        options
            .apply(
                BloomFilterWatcher.builder(client, namespace, "ids", LiveKeyType.STRING)
                    .podIdentity(pod.getMetadata().getName(), pod.getMetadata().getUid())
                    .readerReportInterval(HEARTBEAT))
            .start();
    return new Reader(client, filter, pod);
  }

  @Test
  void fiftyReadersAreCountedAsTheyServeStoppedOnesTurnStaleFailingOnesShowWhy(
      KubernetesClient client, TestNamespace ns) throws Exception {
    apply(client, ns.name(), filter("ids", "a, b"));
    awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() != null);
    List<Reader> readers = new ArrayList<>();
    try {
      for (int i = 0; i < READERS; i++) {
        readers.add(reader(ns.name(), ReaderPods.pod(client, ns.name(), "app-" + i), b -> b));
      }
      ReaderStatus first = awaitReaders(client, ns.name(), "ids", r -> r.getCurrent() == READERS);
      long v1 = first.getVersion();
      assertThat(readers).allMatch(r -> r.filter().currentVersion() == v1);
      assertThat(first.getTotal()).isEqualTo(READERS);
      assertThat(first.getServing()).isEqualTo(READERS + "/" + READERS);
      assertThat(first.getStale()).isZero();
      assertThat(first.getFailing()).isZero();

      // A publish: counted as the readers really take it up, to 50/50.
      SnapshotFixtures.mergePatch(
          client,
          ns.name(),
          "ids",
          java.util.Map.of(
              "spec",
              java.util.Map.of("source", java.util.Map.of("inline", List.of("a", "b", "c")))));
      BloomFilter published =
          awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() > v1);
      long v2 = published.getStatus().getVersion();
      long seen = System.nanoTime();
      ReaderStatus second =
          awaitReaders(
              client, ns.name(), "ids", r -> r.getVersion() == v2 && r.getCurrent() == READERS);
      long toFull = (System.nanoTime() - seen) / 1_000_000;
      System.out.printf(
          "ReaderRolloutTest: status.version=v%d to status.readers %s in %d ms%n",
          v2, second.getServing(), toFull);
      assertThat(readers).allMatch(r -> r.filter().currentVersion() == v2);
      assertThat(second.getRolloutCompletedAt()).isNotNull();
      assertThat(second.getOtherVersions()).isEmpty();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () -> client.v1().events().inNamespace(ns.name()).list().getItems(),
              events ->
                  events.stream()
                      .anyMatch(
                          e ->
                              ReaderRollouts.EVENT_ROLLOUT_COMPLETE.equals(e.getReason())
                                  && e.getMessage().startsWith("v" + v2 + " served by 50/50")));

      // Steady state, heartbeats only: what they cost the API server, and that they cause no
      // status write (nor a build) however many readers there are.
      int window = 5;
      AtomicInteger leaseWrites = new AtomicInteger();
      AtomicInteger filterWrites = new AtomicInteger();
      try (Watch leases =
              client.resources(Lease.class).inNamespace(ns.name()).watch(counting(leaseWrites));
          Watch filters =
              client
                  .resources(BloomFilter.class)
                  .inNamespace(ns.name())
                  .withName("ids")
                  .watch(counting(filterWrites))) {
        Thread.sleep(window * 1000L);
      }
      double perSecond = leaseWrites.get() / (double) window;
      System.out.printf(
          "ReaderRolloutTest: %d readers, heartbeat %d s: %.1f Lease writes/s (%.2f per reader"
              + " and heartbeat), %d BloomFilter writes in %d s%n",
          READERS,
          HEARTBEAT.toSeconds(),
          perSecond,
          perSecond / READERS * HEARTBEAT.toSeconds(),
          filterWrites.get(),
          window);
      assertThat(filterWrites.get()).as("status writes while only heartbeats arrive").isZero();
      assertThat(perSecond / READERS * HEARTBEAT.toSeconds())
          .as("one write per reader and heartbeat (0.8 to 1.2 x the interval)")
          .isBetween(0.6, 1.3);

      // A reader stops (hangs, is frozen): it stays counted, as stale.
      readers.get(0).close();
      ReaderStatus stopped = awaitReaders(client, ns.name(), "ids", r -> r.getStale() == 1);
      assertThat(stopped.getTotal()).isEqualTo(READERS);
      assertThat(stopped.getCurrent()).isEqualTo(READERS - 1);
      assertThat(stopped.getServing()).isEqualTo((READERS - 1) + "/" + READERS);

      // A reader that fails to load the published version: counted with its reason.
      var untrusted = KeyPairGenerator.getInstance("Ed25519").generateKeyPair().getPublic();
      readers.add(
          reader(
              ns.name(),
              ReaderPods.pod(client, ns.name(), "app-strict"),
              b -> b.trustedKey(untrusted)));
      ReaderStatus failing = awaitReaders(client, ns.name(), "ids", r -> r.getFailing() == 1);
      assertThat(failing.getTotal()).isEqualTo(READERS + 1);
      assertThat(failing.getFailingReasons())
          .containsExactly(ReaderCount.ofReason(LoadFailureReason.UNSIGNED.name(), 1));
      assertThat(failing.getOtherVersions()).containsExactly(ReaderCount.ofVersion(0, 1));
      assertThat(failing.getCurrent()).isEqualTo(READERS - 1);
      assertThat(Ed25519Keys.keyId(untrusted)).isNotEmpty();
    } finally {
      readers.forEach(Reader::close);
    }
  }

  /** Counts modifications (not the ADDED events a new watch starts with). */
  private static <T> Watcher<T> counting(AtomicInteger modified) {
    return new Watcher<>() {
      @Override
      public void eventReceived(Action action, T resource) {
        if (action == Action.MODIFIED) {
          modified.incrementAndGet();
        }
      }

      @Override
      public void onClose(WatcherException cause) {}
    };
  }

  @Test
  void reportsWithoutALivePodOfTheNamespaceAreNotCounted(KubernetesClient client, TestNamespace ns)
      throws Exception {
    apply(client, ns.name(), filter("ids", "a, b"));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    Pod real = ReaderPods.pod(client, ns.name(), "real");
    Pod silent = ReaderPods.pod(client, ns.name(), "silent"); // live, but runs no reader
    String other = ns.name() + "-other";
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
        .create();
    try (Reader reader = reader(ns.name(), real, b -> b)) {
      awaitReaders(client, ns.name(), "ids", r -> r.getTotal() == 1 && r.getCurrent() == 1);
      long version = reader.filter().currentVersion();

      // 1. A report for a pod that does not exist (made-up UID and name).
      ReaderPods.create(
          client,
          ReaderPods.report(ns.name(), "ghost", UUID.randomUUID().toString(), "ids", version));
      // 2. A live pod's name with another UID (a pod that was deleted and re-created).
      ReaderPods.create(
          client,
          ReaderPods.report(ns.name(), "silent", UUID.randomUUID().toString(), "ids", version));
      // 3. A report in another namespace, owned by a live pod there, naming this filter.
      Pod elsewhere = ReaderPods.pod(client, other, "elsewhere");
      ReaderPods.create(
          client,
          ReaderPods.report(other, "elsewhere", elsewhere.getMetadata().getUid(), "ids", version));
      // 4. Garbage in the values of the live pod "silent"'s report (a version that is not a
      // number, a reason that is not a code, 200 KB of padding): not a report.
      Lease garbage =
          ReaderPods.report(ns.name(), "silent", silent.getMetadata().getUid(), "ids", version);
      garbage
          .getMetadata()
          .getAnnotations()
          .put(ReaderReports.ANNOTATION_SERVED, "7; DROP TABLE readers");
      garbage.getMetadata().getAnnotations().put("bloomoperator.io/padding", "x".repeat(200_000));
      garbage.getMetadata().getAnnotations().put(ReaderReports.ANNOTATION_FAILING_VERSION, "99");
      garbage
          .getMetadata()
          .getAnnotations()
          .put(ReaderReports.ANNOTATION_FAILING_REASON, "see http://evil.example");
      ReaderPods.create(client, garbage);
      // 5. The live pod "real" a second time, under another name: one report per pod and filter.
      Lease twice =
          ReaderPods.report(ns.name(), "real", real.getMetadata().getUid(), "ids", version);
      twice.getMetadata().setName("ids-bloom-ack-second");
      ReaderPods.create(client, twice);

      // Several rounds (1 s each) later: still the one real reader.
      Thread.sleep(4_000);
      ReaderStatus counted = readers(client, ns.name(), "ids");
      assertThat(counted.getTotal()).isEqualTo(1);
      assertThat(counted.getCurrent()).isEqualTo(1);
      assertThat(Serialization.asJson(counted))
          .doesNotContain("DROP")
          .doesNotContain("evil")
          .doesNotContain("xxxx");

      // The control: a well-formed report of the live pod "silent" counts.
      client
          .resources(Lease.class)
          .inNamespace(ns.name())
          .withName(garbage.getMetadata().getName())
          .delete();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  client
                          .resources(Lease.class)
                          .inNamespace(ns.name())
                          .withName(garbage.getMetadata().getName())
                          .get()
                      == null);
      ReaderPods.create(
          client,
          ReaderPods.report(ns.name(), "silent", silent.getMetadata().getUid(), "ids", version));
      awaitReaders(client, ns.name(), "ids", r -> r.getTotal() == 2);
    } finally {
      client.namespaces().withName(other).delete();
    }
  }
}
