package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The audit's M4 attack (2026-12-02) on a real API server, with compressed settings: 300 reports
 * kept per namespace (the operator-wide ceiling of pod GETs per round too), pods trusted for 1 s, a
 * counting round every 1 s. Four attacker namespaces each hold 300 reader-report Leases naming pods
 * that do not exist, about their own published filter: together four times the round's GETs. Four
 * victim namespaces each have one live reader (a Pod object and its report). Every victim's reader
 * must be counted in its status.readers within a few rounds, whatever order the operator walks the
 * filters in; the forged reports never count.
 */
@RealKubernetes(crdDirs = "crds")
class ReaderPodCheckFairnessTest {

  private static final int PER_NAMESPACE = 300;
  private static final int ATTACKERS = 4;
  private static final int VICTIMS = 4;
  private static final Duration ROUND = Duration.ofSeconds(1);
  private static final Duration WINDOW = Duration.ofSeconds(20);

  /** A victim's reader counted within this: a few rounds, the status write and the poll. */
  private static final Duration BOUND = Duration.ofSeconds(10);

  private static final RequestLog REQUESTS = new RequestLog();

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withDefaults()
          .withReaderSettings(
              new ReaderSettings(ROUND, PER_NAMESPACE, Duration.ofMinutes(10), ROUND))
          .withRequestLog(REQUESTS);

  @Test
  void forgedReportsOfSomeNamespacesDoNotKeepLiveReadersOfOthersFromBeingCounted(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> attackers = names(ns, "a", ATTACKERS);
    List<String> victims = names(ns, "v", VICTIMS);
    List<String> all = new ArrayList<>(attackers);
    all.addAll(victims);
    try {
      for (String namespace : all) {
        client
            .namespaces()
            .resource(
                new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
            .create();
        apply(
            client,
            namespace,
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: ids}
            spec:
              falsePositiveRate: 0.01
              source:
                inline: [a, b]
            """);
      }
      Map<String, Long> versions = new LinkedHashMap<>();
      for (String namespace : all) {
        versions.put(
            namespace,
            awaitStatus(client, namespace, "ids", f -> f.getStatus().getVersion() != null)
                .getStatus()
                .getVersion());
      }

      // The attack: 300 reports per attacker namespace, each naming a pod that does not exist.
      for (String namespace : attackers) {
        IntStream.range(0, PER_NAMESPACE)
            .parallel()
            .forEach(
                i ->
                    ReaderPods.create(
                        client,
                        ReaderPods.report(
                            namespace,
                            "ghost-" + i,
                            UUID.randomUUID().toString(),
                            "ids",
                            versions.get(namespace))));
      }
      long start = System.nanoTime();
      int getsBefore = podGets(ns);

      // The victims: one live reader each.
      for (String namespace : victims) {
        Pod pod = ReaderPods.pod(client, namespace, "app-0");
        ReaderPods.create(
            client,
            ReaderPods.report(
                namespace,
                pod.getMetadata().getName(),
                pod.getMetadata().getUid(),
                "ids",
                versions.get(namespace)));
      }
      Map<String, Long> countedAfterMillis = new LinkedHashMap<>();
      while (countedAfterMillis.size() < VICTIMS && millisSince(start) < WINDOW.toMillis()) {
        for (String namespace : victims) {
          ReaderStatus readers = readers(client, namespace);
          if (!countedAfterMillis.containsKey(namespace)
              && readers != null
              && readers.getTotal() == 1
              && readers.getCurrent() == 1) {
            countedAfterMillis.put(namespace, millisSince(start));
          }
        }
        Thread.sleep(100);
      }
      long rest = WINDOW.toMillis() - millisSince(start);
      if (rest > 0) {
        Thread.sleep(rest); // the whole window, to compare the GETs with the audit's
      }
      int gets = podGets(ns) - getsBefore;
      List<String> starved =
          victims.stream().filter(v -> !countedAfterMillis.containsKey(v)).toList();
      System.out.printf(
          "M4 %d attacker namespaces x %d forged reports, %d victims with one live reader"
              + " (ceiling %d GETs per %d s round, pods trusted %d s): victims not counted after"
              + " %d s: %d/%d %s; counted after ms %s; Pod GETs by the operator in the %d s window:"
              + " %d%n",
          ATTACKERS,
          PER_NAMESPACE,
          VICTIMS,
          PER_NAMESPACE,
          ROUND.toSeconds(),
          ROUND.toSeconds(),
          WINDOW.toSeconds(),
          starved.size(),
          VICTIMS,
          starved,
          countedAfterMillis.values(),
          WINDOW.toSeconds(),
          gets);
      assertThat(starved).as("victims whose live reader is never counted").isEmpty();
      assertThat(countedAfterMillis.values())
          .as("ms until each victim's reader is counted")
          .allMatch(ms -> ms <= BOUND.toMillis());
      // Each forged pod is asked about once ("absent" is final), the live ones once per second.
      assertThat(gets)
          .as("Pod GETs in the window")
          .isLessThanOrEqualTo(ATTACKERS * PER_NAMESPACE + VICTIMS * (int) WINDOW.toSeconds() + 50);
      for (String namespace : attackers) {
        ReaderStatus readers = readers(client, namespace);
        assertThat(readers == null || readers.getTotal() == 0)
            .as("forged reports of %s are not counted", namespace)
            .isTrue();
      }
    } finally {
      for (String namespace : all) {
        client.resources(Lease.class).inNamespace(namespace).delete();
        client.resources(BloomFilter.class).inNamespace(namespace).delete();
        client.namespaces().withName(namespace).delete();
      }
    }
  }

  private static List<String> names(TestNamespace ns, String kind, int count) {
    return IntStream.range(0, count).mapToObj(i -> ns.name() + "-" + kind + i).toList();
  }

  /**
   * The operator's GETs of single pods of this test's namespaces so far (not of the reports other
   * test classes of the JVM left behind: without a namespace controller nothing empties them).
   */
  private static int podGets(TestNamespace ns) {
    return (int)
        REQUESTS.paths().stream()
            .filter(
                p ->
                    p.startsWith("GET /api/v1/namespaces/" + ns.name() + "-")
                        && p.contains("/pods/"))
            .count();
  }

  private static ReaderStatus readers(KubernetesClient client, String namespace) {
    BloomFilter filter =
        client.resources(BloomFilter.class).inNamespace(namespace).withName("ids").get();
    return filter == null || filter.getStatus() == null ? null : filter.getStatus().getReaders();
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }
}
