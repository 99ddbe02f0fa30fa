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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 1 of docs/reliability.md: the packaged operator, in its own JVM, is SIGKILLed at random
 * instants while it keeps publishing new versions of several multi-chunk filters whose source
 * changes every second; a {@link SnapshotChecker} verifies every manifest it can read throughout.
 * After the last kill a fresh operator must converge on the final source content and leave only the
 * current version's chunks.
 *
 * <p>A kill "landed mid-publish" when, right after the process died, some filter had chunk
 * ConfigMaps of a version above the one its manifest names: chunks were written, the manifest was
 * not.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class OperatorKillFaultTest {

  @Test
  void sigkilledOperatorNeverPublishesATornSnapshot(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    long seed = FaultParameters.seed();
    int kills = FaultParameters.integer("kills", 20);
    int filterCount = FaultParameters.integer("filters", 3);
    int keys = FaultParameters.integer("keys", 20_000);
    Duration maxUptime = FaultParameters.millis("maxUptime", 4_000);
    Duration sourceEvery = FaultParameters.millis("sourceInterval", 1_000);
    Duration retain = Duration.ofSeconds(4);
    System.out.printf(
        "operator-kill: seed=%d kills=%d filters=%d keys=%d maxUptime=%s (repeat with"
            + " -Dfaults.seed=%d)%n",
        seed, kills, filterCount, keys, maxUptime, seed);
    Random random = new Random(seed);
    String namespace = ns.name();
    List<String> filters = IntStream.range(0, filterCount).mapToObj(i -> "kill-" + i).toList();
    ChangingSources sources = new ChangingSources(client, namespace, filters, keys);
    sources.writeSources(0);
    sources.createFilters(retain);
    Path log = Files.createTempFile("operator-kill-", ".log");
    System.out.println("operator-kill: operator log " + log);
    int midPublish = 0;
    long strayChunksAtKill = 0;
    try (SnapshotChecker checker = new SnapshotChecker(client, namespace, filters, retain);
        OperatorProcess operator =
            new OperatorProcess(
                cluster.kubeconfig(),
                // A kill during a build backs its filter off (BuildCrashed); at the default of a
                // minute, doubling, the first kills could hold every filter for the rest of the
                // run and no later kill would land mid-publish.
                Map.of(
                    "BLOOM_MIN_PUBLISH_INTERVAL",
                    "0",
                    "BLOOM_WATCH_NAMESPACES",
                    namespace,
                    "BLOOM_BUILD_CRASH_BACKOFF",
                    "1s"),
                log)) {
      checker.start();
      sources.startChanging(sourceEvery);
      for (int kill = 1; kill <= kills; kill++) {
        operator.start();
        operator.awaitStarted(Duration.ofSeconds(90));
        Thread.sleep(random.nextLong(maxUptime.toMillis() + 1));
        operator.kill();
        long stray = UnpublishedChunks.count(client, namespace, filters);
        if (stray > 0) {
          midPublish++;
          strayChunksAtKill += stray;
        }
      }
      long finalRound = sources.stopChanging();
      operator.start();
      operator.awaitStarted(Duration.ofSeconds(90));
      for (String filter : filters) {
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () ->
                    assertThat(holds(checker.current(filter), sources.keys(filter, finalRound)))
                        .as("%s serves the final source content", filter)
                        .isTrue());
      }
      BloomFilterBits last = null;
      for (String filter : filters) {
        last = checker.current(filter);
        // The final version is new content, not an older round that happens to match.
        long falsePositives =
            sources.keys(filter, finalRound - 1).stream().filter(last::mightContainString).count();
        assertThat(falsePositives).isLessThan(keys / 20);
      }
      // Nothing beyond the current version once its predecessor's grace period is over.
      for (String filter : filters) {
        await()
            .atMost(retain.plus(Duration.ofSeconds(60)))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () ->
                    assertThat(SnapshotFixtures.chunkNames(client, namespace, filter))
                        .isEqualTo(currentChunkNames(client, namespace, filter)));
      }
      operator.kill();
      checker.close();
      long publishes = 0;
      for (String filter : filters) {
        publishes += SnapshotFixtures.manifest(client, namespace, filter).version();
      }
      long errors =
          Files.readAllLines(log).stream().filter(l -> l.contains("unexpected error")).count();
      FaultParameters.report(
          "operator-kill",
          String.format(
              "seed=%d kills=%d midPublish=%d strayChunksAtKill=%d versionsPublished=%d"
                  + " sourceRounds=%d checks=%d (polled %d, watched %d) staleReads=%d"
                  + " apiErrors=%d operatorUnexpectedErrors=%d violations=%d",
              seed,
              kills,
              midPublish,
              strayChunksAtKill,
              publishes,
              finalRound,
              checker.checks(),
              checker.polledChecks(),
              checker.watchedChecks(),
              checker.staleReads(),
              checker.apiErrors(),
              errors,
              checker.violations().size()));
      assertThat(checker.violations()).isEmpty();
      assertThat(checker.checks()).isGreaterThan(kills);
      assertThat(midPublish).as("kills that landed mid-publish").isPositive();
    } finally {
      sources.stopChanging();
    }
  }

  private static boolean holds(BloomFilterBits bits, List<String> keys) {
    return bits != null && keys.stream().allMatch(bits::mightContainString);
  }

  private static List<String> currentChunkNames(
      KubernetesClient client, String namespace, String filter) throws Exception {
    Manifest manifest = SnapshotFixtures.manifest(client, namespace, filter);
    return manifest.chunks().stream().map(Manifest.ChunkRef::name).sorted().toList();
  }
}
