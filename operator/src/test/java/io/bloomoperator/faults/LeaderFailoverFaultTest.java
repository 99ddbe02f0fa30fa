package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 2 of docs/reliability.md: two replicas of the packaged operator elect a leader through the
 * Lease (as two pods of the Deployment do: BLOOM_LEADER_ELECTION, POD_NAMESPACE, POD_NAME) while
 * several multi-chunk filters publish a new source round every second. The leader is taken away in
 * the middle of a publish; the follower must take over within the lease time and publish consistent
 * versions ({@link SnapshotChecker} throughout), and no manifest may ever be written by a replica
 * that did not hold the Lease at that moment ({@link LeaderWriteHistory}, from the {@code
 * bloomoperator.io/published-by} stamp and etcd's revision order).
 *
 * <p>Two ways to take the leader away: SIGKILL (a crashed pod; restarted afterwards under the same
 * identity, as the kubelet restarts a container, and then a follower), and SIGSTOP for longer than
 * the lease (a frozen VM or a stop-the-world pause) followed by SIGCONT: the old leader wakes up in
 * the middle of its publish after another replica has taken over.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class LeaderFailoverFaultTest {

  /** OperatorMain's LeaderElectionConfiguration. */
  private static final Duration LEASE = Duration.ofSeconds(15);

  /** The longest a waiting replica sleeps between two tries: retry period 2 s, fabric8's jitter. */
  private static final Duration MAX_RETRY = Duration.ofMillis(2_000 + 2_400);

  private static final Duration RETAIN = Duration.ofSeconds(4);

  @Test
  void followerTakesOverAKilledLeaderAndOnlyTheLeaderWrites(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    long seed = FaultParameters.seed();
    int failovers = FaultParameters.integer("failovers", 2);
    Duration maxUptime = FaultParameters.millis("maxLeaderUptime", 4_000);
    Random random = new Random(seed);
    System.out.printf(
        "leader-failover: seed=%d failovers=%d (repeat with -Dfaults.seed=%d)%n",
        seed, failovers, seed);
    Fixture fixture = new Fixture(client, ns.name(), cluster, "failover");
    int midPublish = 0;
    long strayChunksAtKill = 0;
    List<Duration> toNewHolder = new ArrayList<>();
    List<Duration> toFirstWrite = new ArrayList<>();
    try (SnapshotChecker checker = fixture.checker();
        LeaderWriteHistory history = new LeaderWriteHistory(client, ns.name());
        Replicas replicas = fixture.replicas()) {
      history.start();
      checker.start();
      replicas.startAll();
      fixture.sources.startChanging(Duration.ofSeconds(1));
      String leader = awaitLeaderWriting(history, Instant.now());
      for (int failover = 1; failover <= failovers; failover++) {
        Thread.sleep(random.nextLong(maxUptime.toMillis() + 1));
        leader = history.holder();
        Instant killedAt = Instant.now();
        replicas.get(leader).kill();
        long stray = UnpublishedChunks.count(client, ns.name(), fixture.filters);
        if (stray > 0) {
          midPublish++;
          strayChunksAtKill += stray;
        }
        String killed = leader;
        LeaderWriteHistory.Takeover takeover =
            history.awaitTakeover(killed, killedAt, LEASE.plus(Duration.ofSeconds(60)));
        toNewHolder.add(Duration.between(killedAt, takeover.lease().seen()));
        toFirstWrite.add(Duration.between(killedAt, takeover.firstWrite().seen()));
        System.out.printf(
            "leader-failover %d: killed %s (%d unpublished chunks); %s holds the Lease after %d ms,"
                + " first manifest write (%s) after %d ms%n",
            failover,
            killed,
            stray,
            takeover.lease().holder(),
            toNewHolder.get(toNewHolder.size() - 1).toMillis(),
            takeover.firstWrite(),
            toFirstWrite.get(toFirstWrite.size() - 1).toMillis());
        // The kubelet restarts the container: same pod, same identity, now a follower.
        replicas.get(killed).start();
        replicas.get(killed).awaitStarted(Duration.ofSeconds(90));
      }
      long finalRound = fixture.sources.stopChanging();
      fixture.awaitConverged(checker, finalRound);
      Thread.sleep(2_000); // the watches deliver the last writes
      List<LeaderWriteHistory.Write> byNonHolder = history.manifestWritesByNonHolder();
      FaultParameters.report(
          "leader-failover",
          String.format(
              "seed=%d failovers=%d midPublish=%d strayChunksAtKill=%d lease=%ds"
                  + " killToNewHolderMs(min/median/max)=%s killToFirstWriteMs=%s"
                  + " manifestWrites=%d leaseRevisions=%d writesByNonHolder=%d checks=%d"
                  + " (polled %d, watched %d) staleReads=%d violations=%d",
              seed,
              failovers,
              midPublish,
              strayChunksAtKill,
              LEASE.toSeconds(),
              spread(toNewHolder),
              spread(toFirstWrite),
              history.manifestWrites(),
              history.leaseRevisions(),
              byNonHolder.size(),
              checker.checks(),
              checker.polledChecks(),
              checker.watchedChecks(),
              checker.staleReads(),
              checker.violations().size()));
      replicas.close();
      checker.close();
      assertThat(checker.violations()).isEmpty();
      assertThat(byNonHolder).as("manifest writes by a replica not holding the Lease").isEmpty();
      assertThat(history.watchFailures()).isEmpty();
      assertThat(toNewHolder)
          .as("the follower holds the Lease at most a lease duration and one retry after the kill")
          .allSatisfy(d -> assertThat(d).isLessThanOrEqualTo(LEASE.plus(MAX_RETRY)));
      assertThat(midPublish).as("kills that landed mid-publish").isPositive();
    } finally {
      fixture.sources.stopChanging();
    }
  }

  @Test
  void aPausedLeaderThatWakesUpAfterLosingTheLeaseWritesNoManifest(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    long seed = FaultParameters.seed();
    int pauses = FaultParameters.integer("pauses", 1);
    Random random = new Random(seed);
    System.out.printf(
        "leader-pause: seed=%d pauses=%d (repeat with -Dfaults.seed=%d)%n", seed, pauses, seed);
    Fixture fixture = new Fixture(client, ns.name(), cluster, "pause");
    List<String> outcomes = new ArrayList<>();
    long chunkWritesAfterLoss = 0;
    long fenceRefusals = 0;
    long statusReportsAfterLoss = 0;
    int exited = 0;
    try (SnapshotChecker checker = fixture.checker();
        LeaderWriteHistory history = new LeaderWriteHistory(client, ns.name());
        Replicas replicas = fixture.replicas()) {
      history.start();
      checker.start();
      replicas.startAll();
      fixture.sources.startChanging(Duration.ofSeconds(1));
      awaitLeaderWriting(history, Instant.now());
      for (int pause = 1; pause <= pauses; pause++) {
        String paused = history.holder();
        OperatorProcess old = replicas.get(paused);
        long stray = 0;
        // Freeze it in the middle of a publish: short pauses (far below the lease) until one
        // finds chunks of an unpublished version.
        for (int attempt = 0; attempt < 50 && stray == 0; attempt++) {
          Thread.sleep(random.nextLong(700));
          old.pause();
          stray = UnpublishedChunks.count(client, ns.name(), fixture.filters);
          if (stray == 0) {
            old.resume();
          }
        }
        assertThat(stray).as("a pause that caught a publish under way").isPositive();
        Instant pausedAt = Instant.now();
        LeaderWriteHistory.Takeover takeover =
            history.awaitTakeover(paused, pausedAt, LEASE.plus(Duration.ofSeconds(60)));
        // Wake it up while the new leader's first versions are still current or retained.
        Instant resumedAt = Instant.now();
        old.resume();
        OptionalInt exit = old.awaitExit(Duration.ofSeconds(60));
        Duration toExit = Duration.between(resumedAt, Instant.now());
        Thread.sleep(2_000); // the watches deliver the last writes
        List<LeaderWriteHistory.Write> late = history.writesBy(paused, takeover.lease().revision());
        long lateChunks = late.stream().filter(w -> !w.manifest()).count();
        long lateManifests = late.size() - lateChunks;
        chunkWritesAfterLoss += lateChunks;
        if (exit.isPresent()) {
          exited++;
        }
        // What the old leader tried after waking up, from its log: reconciles the write fence
        // stopped, and status updates it still made (the status is not fenced).
        String log = old.logSinceStart();
        long refused = log.lines().filter(l -> l.contains("not writing, not the leader")).count();
        int lost = log.indexOf("Stopped leading");
        long statusReports =
            lost < 0
                ? 0
                : log.substring(lost).lines().filter(l -> l.contains("StatusReport")).count();
        fenceRefusals += refused;
        statusReportsAfterLoss += statusReports;
        String outcome =
            String.format(
                "pause %d: froze %s with %d unpublished chunks; %s held the Lease %d ms later and"
                    + " wrote %s; after SIGCONT the old leader %s and wrote %d chunks and %d"
                    + " manifests after losing the Lease (write fence refused %d reconciles;"
                    + " %d status reports logged after it stopped leading)",
                pause,
                paused,
                stray,
                takeover.lease().holder(),
                Duration.between(pausedAt, takeover.lease().seen()).toMillis(),
                takeover.firstWrite(),
                exit.isPresent()
                    ? "exited with " + exit.getAsInt() + " after " + toExit.toMillis() + " ms"
                    : "was still running after " + toExit.toMillis() + " ms",
                lateChunks,
                lateManifests,
                refused,
                statusReports);
        System.out.println("leader-pause " + outcome);
        late.forEach(w -> System.out.println("  late write: " + w));
        outcomes.add(outcome);
        if (old.isAlive()) {
          old.kill();
        }
        old.start();
        old.awaitStarted(Duration.ofSeconds(90));
      }
      long finalRound = fixture.sources.stopChanging();
      fixture.awaitConverged(checker, finalRound);
      Thread.sleep(2_000);
      List<LeaderWriteHistory.Write> byNonHolder = history.manifestWritesByNonHolder();
      FaultParameters.report(
          "leader-pause",
          String.format(
              "seed=%d pauses=%d exitedAfterSigcont=%d chunkWritesAfterLosingLease=%d"
                  + " fenceRefusals=%d statusReportsAfterLosingLease=%d manifestWrites=%d writesByNonHolder=%d checks=%d (polled %d, watched %d)"
                  + " staleReads=%d violations=%d",
              seed,
              pauses,
              exited,
              chunkWritesAfterLoss,
              fenceRefusals,
              statusReportsAfterLoss,
              history.manifestWrites(),
              byNonHolder.size(),
              checker.checks(),
              checker.polledChecks(),
              checker.watchedChecks(),
              checker.staleReads(),
              checker.violations().size()));
      replicas.close();
      checker.close();
      checker.violations().forEach(v -> System.out.println("  violation: " + v));
      byNonHolder.forEach(w -> System.out.println("  write by a non-holder: " + w));
      assertThat(checker.violations()).isEmpty();
      assertThat(byNonHolder).as("manifest writes by a replica not holding the Lease").isEmpty();
      assertThat(history.watchFailures()).isEmpty();
      assertThat(exited).as("old leaders that exited after SIGCONT").isEqualTo(pauses);
    } finally {
      fixture.sources.stopChanging();
    }
  }

  /** Waits for the first leader's first manifest write; returns the leader. */
  private static String awaitLeaderWriting(LeaderWriteHistory history, Instant since) {
    return await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              String holder = history.holder();
              return holder != null && history.firstManifestWrite(0, holder).isPresent()
                  ? holder
                  : null;
            },
            h -> h != null);
  }

  private static String spread(List<Duration> durations) {
    if (durations.isEmpty()) {
      return "-";
    }
    List<Long> ms = new ArrayList<>(durations.stream().map(Duration::toMillis).toList());
    Collections.sort(ms);
    return ms.get(0) + "/" + ms.get(ms.size() / 2) + "/" + ms.get(ms.size() - 1);
  }

  /** The filters, their changing sources and the two replicas' settings, as in fault 1. */
  private static final class Fixture {
    private final KubernetesClient client;
    private final String namespace;
    private final KubeCluster cluster;
    private final String prefix;
    private final List<String> filters;
    private final ChangingSources sources;
    private final int keys;

    Fixture(KubernetesClient client, String namespace, KubeCluster cluster, String prefix) {
      this.client = client;
      this.namespace = namespace;
      this.cluster = cluster;
      this.prefix = prefix;
      int filterCount = FaultParameters.integer("filters", 3);
      this.keys = FaultParameters.integer("keys", 20_000);
      this.filters = IntStream.range(0, filterCount).mapToObj(i -> prefix + "-" + i).toList();
      this.sources = new ChangingSources(client, namespace, filters, keys);
      sources.writeSources(0);
      sources.createFilters(RETAIN);
    }

    SnapshotChecker checker() {
      return new SnapshotChecker(client, namespace, filters, RETAIN);
    }

    /** Two replicas, replica-a and replica-b, each with its own log. */
    Replicas replicas() throws Exception {
      Map<String, OperatorProcess> replicas = new LinkedHashMap<>();
      for (String identity : List.of("replica-a", "replica-b")) {
        Path log = Files.createTempFile(prefix + "-" + identity + "-", ".log");
        System.out.println(prefix + ": " + identity + " log " + log);
        replicas.put(
            identity,
            new OperatorProcess(
                cluster.kubeconfig(),
                Map.of(
                    "BLOOM_LEADER_ELECTION", "true",
                    "POD_NAMESPACE", namespace,
                    "POD_NAME", identity,
                    "BLOOM_MIN_PUBLISH_INTERVAL", "0",
                    "BLOOM_WATCH_NAMESPACES", namespace),
                log));
      }
      return new Replicas(replicas);
    }

    /**
     * After the last fault the leader serves the final round (new content, not an older round) and
     * only the current version's chunks remain once the grace period is over.
     */
    void awaitConverged(SnapshotChecker checker, long finalRound) {
      for (String filter : filters) {
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () -> {
                  BloomFilterBits bits = checker.current(filter);
                  assertThat(bits).as("%s is published", filter).isNotNull();
                  assertThat(
                          sources.keys(filter, finalRound).stream()
                              .allMatch(bits::mightContainString))
                      .as("%s serves the final source content", filter)
                      .isTrue();
                });
        BloomFilterBits last = checker.current(filter);
        long falsePositives =
            sources.keys(filter, finalRound - 1).stream().filter(last::mightContainString).count();
        assertThat(falsePositives).isLessThan(keys / 20);
        await()
            .atMost(RETAIN.plus(Duration.ofSeconds(60)))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () ->
                    assertThat(SnapshotFixtures.chunkNames(client, namespace, filter))
                        .isEqualTo(
                            SnapshotFixtures.manifest(client, namespace, filter).chunks().stream()
                                .map(Manifest.ChunkRef::name)
                                .sorted()
                                .toList()));
      }
    }
  }

  /** The replicas by identity. */
  private record Replicas(Map<String, OperatorProcess> byIdentity) implements AutoCloseable {

    void startAll() throws InterruptedException {
      byIdentity.values().forEach(OperatorProcess::start);
      for (OperatorProcess replica : byIdentity.values()) {
        replica.awaitStarted(Duration.ofSeconds(90));
      }
    }

    OperatorProcess get(String identity) {
      OperatorProcess replica = byIdentity.get(identity);
      if (replica == null) {
        throw new IllegalStateException("no replica named " + identity);
      }
      return replica;
    }

    @Override
    public void close() throws InterruptedException {
      for (OperatorProcess replica : byIdentity.values()) {
        replica.close();
      }
    }
  }
}
