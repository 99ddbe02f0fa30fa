package io.bloomoperator.readers;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.ReaderReport;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The pod checks behind reader reports, with a counting stand-in for the API server, at the
 * defaults (5,000 GETs per 5 s round, pods trusted for 1 min): forged reports of one namespace
 * spend only that namespace's share of a round, and what is known of another namespace's pods
 * survives any flood.
 */
class LivePodsTest {

  private static final int BUDGET = ReaderSettings.DEFAULT_MAX_REPORTS_PER_NAMESPACE;
  private static final Duration ROUND = ReaderSettings.DEFAULT_STATUS_INTERVAL;
  private static final Duration TRUSTED = ReaderSettings.DEFAULT_POD_CHECK_INTERVAL;

  /** The API server: the pods that exist, and every GET counted by namespace. */
  private static final class Pods implements LivePods.PodLookup {
    final Map<String, Pod> existing = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> gets = new ConcurrentHashMap<>();
    volatile boolean failing;

    Pod add(String namespace, String name) {
      Pod pod =
          new PodBuilder()
              .withNewMetadata()
              .withNamespace(namespace)
              .withName(name)
              .withUid("uid-" + namespace + "-" + name)
              .endMetadata()
              .build();
      existing.put(namespace + "/" + name, pod);
      return pod;
    }

    @Override
    public Pod get(String namespace, String name) {
      gets.computeIfAbsent(namespace, n -> new AtomicInteger()).incrementAndGet();
      if (failing) {
        throw new KubernetesClientException("unavailable", 503, null);
      }
      return existing.get(namespace + "/" + name);
    }

    int gets(String namespace) {
      AtomicInteger n = gets.get(namespace);
      return n == null ? 0 : n.get();
    }

    int total() {
      return gets.values().stream().mapToInt(AtomicInteger::get).sum();
    }
  }

  private static final class TestClock extends Clock {
    volatile Instant now = Instant.parse("2026-12-02T00:00:00Z");

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }

    void advance(Duration by) {
      now = now.plus(by);
    }
  }

  private final Pods api = new Pods();
  private final TestClock clock = new TestClock();
  private final LivePods pods = new LivePods(api, clock, TRUSTED, BUDGET, ROUND);

  private static ReaderReport report(String namespace, String pod, String uid) {
    Instant now = Instant.now();
    return new ReaderReport(
        namespace, pod, uid, "ids", 1, ReaderReport.NONE, null, now, now, Duration.ofMinutes(1));
  }

  private static ReaderReport reportOf(Pod pod) {
    return report(
        pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid());
  }

  /** {@code count} reports naming pods that do not exist. */
  private static List<ReaderReport> forged(String namespace, int count) {
    List<ReaderReport> reports = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      reports.add(report(namespace, "ghost-" + i, "uid-ghost-" + i));
    }
    return reports;
  }

  /** One counting round: the checks, then the clock moves on by a status interval. */
  private int round(Map<String, List<ReaderReport>> reports) {
    int gets = pods.checkRound(reports);
    clock.advance(ROUND);
    return gets;
  }

  @Test
  void sixtyThousandForgedReportsOfOneNamespaceDoNotDelayALiveReaderOfAnother() {
    // "a" sorts first and holds twelve times the round's budget of reports naming no pod.
    Pod victim = api.add("b", "app-0");
    Map<String, List<ReaderReport>> reports = new HashMap<>();
    reports.put("a", forged("a", 60_000));
    reports.put("b", List.of(reportOf(victim)));

    int first = round(reports);

    assertThat(pods.isLive(reportOf(victim))).as("b's reader after one round").isTrue();
    assertThat(first).isEqualTo(BUDGET);
    assertThat(api.gets("b")).isEqualTo(1);
    assertThat(api.gets("a")).isEqualTo(BUDGET - 1);

    // Every forged pod is asked about once: "absent" is final, so the flood costs nothing after.
    List<Integer> perRound = new ArrayList<>(List.of(first));
    while (perRound.size() < 13) {
      perRound.add(round(reports));
    }
    System.out.printf(
        "LivePodsTest: 60,000 forged reports in a, one live reader in b: Pod GETs per %d s round"
            + " %s (ceiling %d); b verified after round 1%n",
        ROUND.toSeconds(), perRound, BUDGET);
    assertThat(perRound).allMatch(n -> n <= BUDGET);
    assertThat(api.gets("a")).isEqualTo(60_000);
    // Round 13, 60 s after b's check: the last forged pod and b's pod, asked again.
    assertThat(perRound.get(12)).isEqualTo(2);
    assertThat(api.gets("b")).isEqualTo(2);
    assertThat(round(reports)).as("forged pods once asked about cost nothing").isZero();
    assertThat(pods.isLive(reportOf(victim))).isTrue();
  }

  @Test
  void twelveFloodedNamespacesShareTheRoundAndEveryLiveReaderIsCheckedInItsFirstRound() {
    Map<String, List<ReaderReport>> reports = new HashMap<>();
    for (int i = 0; i < 12; i++) {
      reports.put("attacker-" + i, forged("attacker-" + i, BUDGET));
    }
    List<Pod> victims = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Pod pod = api.add("victim-" + i, "app-0");
      victims.add(pod);
      reports.put("victim-" + i, List.of(reportOf(pod)));
    }

    assertThat(round(reports)).isEqualTo(BUDGET);

    assertThat(victims).allMatch(p -> pods.isLive(reportOf(p)));
    // Equal shares: 16 namespaces, 4 of them need one GET; the 12 others share the rest evenly.
    for (int i = 0; i < 12; i++) {
      assertThat(api.gets("attacker-" + i)).isBetween((BUDGET - 4) / 12, (BUDGET - 4) / 12 + 1);
    }
  }

  @Test
  void theNamespacesTakeTurnsWhenThereAreMoreThanTheBudget() {
    LivePods tight = new LivePods(api, clock, TRUSTED, 3, ROUND);
    Map<String, List<ReaderReport>> reports = new HashMap<>();
    for (int i = 0; i < 7; i++) {
      Pod pod = api.add("ns-" + i, "app");
      reports.put("ns-" + i, List.of(reportOf(pod)));
    }
    tight.checkRound(reports);
    tight.checkRound(reports);
    tight.checkRound(reports);
    assertThat(reports.values())
        .allMatch(r -> tight.isLive(r.get(0)))
        .as("7 namespaces, 3 GETs per round: everyone within 3 rounds");
  }

  @Test
  void aRoundSpendsAtMostOneIntervalOnGetsAndTheNextStartsWithTheNamespacesLeftOut() {
    // An API server that answers in 1 s: 5 GETs fit in a 5 s round.
    LivePods.PodLookup slow =
        (namespace, name) -> {
          clock.advance(Duration.ofSeconds(1));
          return api.get(namespace, name);
        };
    LivePods timed = new LivePods(slow, clock, TRUSTED, BUDGET, ROUND);
    Map<String, List<ReaderReport>> reports = new HashMap<>();
    for (int i = 0; i < 8; i++) {
      Pod pod = api.add("ns-" + i, "app");
      reports.put("ns-" + i, List.of(reportOf(pod)));
    }
    assertThat(timed.checkRound(reports)).isEqualTo(5);
    assertThat(timed.checkRound(reports)).isEqualTo(3);
    assertThat(reports.values()).allMatch(r -> timed.isLive(r.get(0)));
    assertThat(api.total()).isEqualTo(8);
  }

  @Test
  void aFloodNeverEvictsWhatIsKnownOfAnotherNamespace() {
    Pod victim = api.add("b", "app-0");
    Map<String, List<ReaderReport>> reports = new HashMap<>();
    reports.put("b", List.of(reportOf(victim)));
    round(reports);
    api.gets.clear();

    // 210,000 reports in "a": more than the 200,000 verdicts the operator once kept in all
    // namespaces together before it forgot every one of them.
    reports.put("a", forged("a", 210_000));
    for (int i = 0; i < 3; i++) {
      round(reports);
      assertThat(pods.isLive(reportOf(victim))).isTrue();
    }
    assertThat(api.gets("b")).as("b trusted for its minute, flood or not").isZero();
  }

  @Test
  void readingAVerdictNeverAsksTheApiServer() {
    Pod pod = api.add("b", "app-0");
    assertThat(pods.isLive(reportOf(pod))).as("not checked yet").isFalse();
    assertThat(api.total()).isZero();
  }

  @Test
  void aLivePodIsAskedAgainAfterTheIntervalAndADeadOneIsForgottenOnlyWithItsReport() {
    Pod pod = api.add("b", "app-0");
    ReaderReport ghost = report("b", "ghost", "uid-ghost");
    Map<String, List<ReaderReport>> reports = Map.of("b", List.of(reportOf(pod), ghost));
    round(reports);
    assertThat(api.gets("b")).isEqualTo(2);
    assertThat(pods.isLive(reportOf(pod))).isTrue();
    assertThat(pods.isLive(ghost)).isFalse();

    clock.advance(TRUSTED);
    round(reports);
    assertThat(api.gets("b")).as("only the live pod is asked again").isEqualTo(3);

    // The pod is deleted: found at the next check, and that verdict is final.
    api.existing.clear();
    clock.advance(TRUSTED);
    round(reports);
    assertThat(pods.isLive(reportOf(pod))).isFalse();
    clock.advance(TRUSTED);
    round(reports);
    assertThat(api.gets("b")).isEqualTo(4);

    // The reports go and come back: asked once more.
    round(Map.of());
    round(reports);
    assertThat(api.gets("b")).isEqualTo(6);
  }

  @Test
  void aFailedGetIsNoVerdictAndIsRetriedNextRound() {
    Pod pod = api.add("b", "app-0");
    Map<String, List<ReaderReport>> reports = Map.of("b", List.of(reportOf(pod)));
    api.failing = true;
    round(reports);
    assertThat(pods.isLive(reportOf(pod))).isFalse();
    api.failing = false;
    round(reports);
    assertThat(pods.isLive(reportOf(pod))).isTrue();
    assertThat(api.gets("b")).isEqualTo(2);
  }

  @Test
  void turnsGiveEqualSharesAndPassOnWhatAShortQueueLeaves() {
    List<String> picked =
        FairTurns.take(
            List.of(
                List.of("a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"),
                List.of("b0"),
                List.of("c0", "c1", "c2")),
            9);
    assertThat(picked).containsExactly("a0", "b0", "c0", "a1", "c1", "a2", "c2", "a3", "a4");
    assertThat(FairTurns.take(List.of(List.of("x")), 5)).containsExactly("x");
    assertThat(FairTurns.take(List.of(List.of("x")), 0)).isEmpty();
  }
}
