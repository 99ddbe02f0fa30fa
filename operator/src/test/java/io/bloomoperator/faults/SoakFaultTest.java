package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 9 of docs/reliability.md, the soak: the packaged operator (its own JVM) and ten {@link
 * LiveBloomFilter} readers (each with its own client) follow filters whose ConfigMap sources slide
 * by a few keys every 1–3 s, for {@code -Dfaults.soakMinutes}. Each change is small enough to be
 * published as a delta, so chains grow and get compacted all along. Every sample (each {@code
 * -Dfaults.soakSampleMs}) forces a full collection in both JVMs and reads heap, threads, open files
 * and sockets, scrapes kube-apiserver's own count of open watches, and looks at every filter's
 * chunk ConfigMaps.
 *
 * <p>At the end: every figure is flat (last quarter's median against the first quarter's, within a
 * stated tolerance, see {@link #TOLERANCES}), no chunk ConfigMap outlived current + retained
 * versions ({@link ChunkRetention}), the {@link SnapshotChecker} saw no violation, and every reader
 * serves its filter's final version with the final keys.
 *
 * <p>{@code -Dfaults.soakLeakWatches=true} opens one watch per source change in the test JVM and
 * never closes it, the leak the watch figures are there to catch: the test must then fail.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class SoakFaultTest {

  private static final double MIB = 1024 * 1024;

  /** Allowed growth, first quarter's median to last quarter's: absolute, relative to the first. */
  private record Tolerance(double absolute, double relative) {}

  private static final Map<String, Tolerance> TOLERANCES =
      Map.of(
          "operator heap after GC", new Tolerance(8 * MIB, 0.10),
          "operator threads", new Tolerance(3, 0),
          "operator open files", new Tolerance(5, 0),
          "operator sockets", new Tolerance(3, 0),
          "test JVM heap after GC", new Tolerance(16 * MIB, 0.10),
          "test JVM threads", new Tolerance(5, 0),
          "test JVM sockets", new Tolerance(5, 0),
          "kube-apiserver WATCH requests", new Tolerance(2, 0));

  @Test
  void operatorAndReadersStayFlatThroughContinuousPublishes(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    long seed = FaultParameters.seed();
    Duration duration = Duration.ofMinutes(FaultParameters.integer("soakMinutes", 3));
    Duration sampleEvery = FaultParameters.millis("soakSample", 10_000);
    int filterCount = FaultParameters.integer("filters", 3);
    int readerCount = FaultParameters.integer("readers", 10);
    int keys = FaultParameters.integer("keys", 10_000);
    int turnover = FaultParameters.integer("turnover", 25);
    boolean leakWatches = Boolean.getBoolean("faults.soakLeakWatches");
    Duration retain = Duration.ofSeconds(5);
    System.out.printf(
        "soak: seed=%d duration=%s sampleEvery=%s filters=%d readers=%d keys=%d turnover=%d"
            + " leakWatches=%s%n",
        seed, duration, sampleEvery, filterCount, readerCount, keys, turnover, leakWatches);
    String namespace = ns.name();
    List<String> filters = IntStream.range(0, filterCount).mapToObj(i -> "soak-" + i).toList();
    ChangingSources sources = new ChangingSources(client, namespace, filters, keys, turnover);
    sources.writeSources(0);
    sources.createFilters(retain);
    Path log = Files.createTempFile("soak-", ".log");
    System.out.println("soak: operator log " + log);
    Map<String, Trend> trends = new HashMap<>();
    TOLERANCES.keySet().forEach(name -> trends.put(name, new Trend(name)));
    ChunkRetention retention = new ChunkRetention(client, namespace);
    Map<String, Set<Long>> basesSeen = new HashMap<>();
    Map<String, Integer> longestChain = new HashMap<>();
    List<Watch> leaked = new ArrayList<>();
    int samples = 0;
    try (OperatorProcess operator =
            new OperatorProcess(
                cluster.kubeconfig(),
                Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0", "BLOOM_WATCH_NAMESPACES", namespace),
                log);
        Readers readers = new Readers(cluster, namespace, filters, readerCount);
        SnapshotChecker checker = new SnapshotChecker(client, namespace, filters, retain)) {
      operator.start();
      operator.awaitStarted(Duration.ofSeconds(90));
      readers.awaitVersion(filter -> 1L, Duration.ofSeconds(120));
      checker.start();
      try (JvmProbe operatorJvm = JvmProbe.attach(operator.pid());
          JvmProbe testJvm = JvmProbe.self()) {
        sources.startChanging(Duration.ofSeconds(1), Duration.ofSeconds(3), new Random(seed));
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        long leakedUpTo = sources.round();
        long threadsStartedBefore = operatorJvm.threadsStarted();
        while (System.nanoTime() < end) {
          Thread.sleep(sampleEvery.toMillis());
          if (leakWatches) {
            long round = sources.round();
            for (; leakedUpTo < round; leakedUpTo++) {
              leaked.add(leakWatch(client, namespace, filters.get(0)));
            }
          }
          double t = (System.nanoTime() - start) / 1e9;
          JvmProbe.Reading op = operatorJvm.read();
          JvmProbe.Reading self = testJvm.read();
          ApiServerWatches.Counts watches = ApiServerWatches.scrape(client);
          trends.get("operator heap after GC").add(t, op.heapAfterGc());
          trends.get("operator threads").add(t, op.threads());
          trends.get("operator open files").add(t, op.openFiles());
          trends.get("operator sockets").add(t, op.sockets());
          trends.get("test JVM heap after GC").add(t, self.heapAfterGc());
          trends.get("test JVM threads").add(t, self.threads());
          trends.get("test JVM sockets").add(t, self.sockets());
          trends.get("kube-apiserver WATCH requests").add(t, watches.watches());
          StringBuilder chains = new StringBuilder();
          for (String filter : filters) {
            ChunkRetention.Look look = retention.look(filter);
            if (look != null) {
              basesSeen.computeIfAbsent(filter, f -> new HashSet<>()).add(look.baseVersion());
              longestChain.merge(filter, look.deltas(), Math::max);
              chains.append(
                  String.format(
                      " %s=v%d(base v%d+%d, %d/%d chunks%s)",
                      filter,
                      look.version(),
                      look.baseVersion(),
                      look.deltas(),
                      look.named(),
                      look.chunks(),
                      look.outside().isEmpty() ? "" : ", outside " + look.outside().size()));
            }
          }
          samples++;
          System.out.printf(
              "soak t=%.0fs round=%d operator{heap=%.1fMiB threads=%d files=%d sockets=%d}"
                  + " test{heap=%.1fMiB threads=%d sockets=%d} apiserver{configmap watches=%d, all watches=%d}"
                  + "%s%n",
              t,
              sources.round(),
              op.heapAfterGc() / MIB,
              op.threads(),
              op.openFiles(),
              op.sockets(),
              self.heapAfterGc() / MIB,
              self.threads(),
              self.sockets(),
              watches.byResource().getOrDefault("configmaps", 0L),
              watches.watches(),
              chains);
        }
        long operatorThreadsStarted = operatorJvm.threadsStarted() - threadsStartedBefore;
        long finalRound = sources.stopChanging();
        long published =
            awaitReadersOnFinalRound(client, namespace, filters, sources, checker, readers);
        for (String filter : filters) {
          await()
              .atMost(retain.plus(Duration.ofSeconds(60)))
              .pollInterval(Duration.ofMillis(500))
              .untilAsserted(
                  () ->
                      assertThat(SnapshotFixtures.chunkNames(client, namespace, filter))
                          .as(
                              "%s: only the current version's chunks once the grace is over",
                              filter)
                          .containsExactlyInAnyOrderElementsOf(
                              SnapshotFixtures.namedChunks(
                                  SnapshotFixtures.manifest(client, namespace, filter))));
        }
        // Keys the window slid past since round 0 must be gone from what the readers serve.
        long slidOut = Math.min((long) finalRound * turnover, keys);
        long stillAnswered = readers.countAnsweredOfRemoved(sources, slidOut);
        checker.close();
        long errors =
            Files.readAllLines(log).stream().filter(l -> l.contains("unexpected error")).count();
        List<String> notFlat = new ArrayList<>();
        TOLERANCES.forEach(
            (name, tolerance) ->
                trends
                    .get(name)
                    .notFlat(tolerance.absolute(), tolerance.relative())
                    .ifPresent(notFlat::add));
        StringBuilder figures = new StringBuilder();
        for (String name : TOLERANCES.keySet().stream().sorted().toList()) {
          boolean bytes = name.contains("heap");
          figures
              .append("; ")
              .append(trends.get(name).summary(bytes ? MIB : 1, bytes ? "MiB" : ""));
        }
        FaultParameters.report(
            "soak",
            String.format(
                "seed=%d minutes=%d samples=%d filters=%d readers=%d keys=%d turnover=%d"
                    + " sourceRounds=%d versionsPublished=%d basesSeen=%s longestChainSeen=%s"
                    + " readerLoads=%d readerLoadFailures=%d slidOutKeysStillAnswered=%d/%d"
                    + " maxChunksPerFilter=%d chunkLeftovers=%d checks=%d (polled %d, watched %d)"
                    + " staleReads=%d violations=%d operatorThreadsStarted=%d"
                    + " operatorUnexpectedErrors=%d leakedWatches=%d notFlat=%s%s",
                seed,
                duration.toMinutes(),
                samples,
                filterCount,
                readerCount,
                keys,
                turnover,
                finalRound,
                published,
                sizes(basesSeen),
                longestChain,
                readers.loads(),
                readers.failures(),
                stillAnswered,
                slidOut * readerCount,
                retention.maxChunks(),
                retention.leftovers(),
                checker.checks(),
                checker.polledChecks(),
                checker.watchedChecks(),
                checker.staleReads(),
                checker.violations().size(),
                operatorThreadsStarted,
                errors,
                leaked.size(),
                notFlat.size(),
                figures));
        assertThat(notFlat).as("figures that grew beyond their tolerance").isEmpty();
        assertThat(checker.violations()).isEmpty();
        assertThat(retention.leftovers()).as("chunks beyond current + retained versions").isZero();
        assertThat(stillAnswered)
            .as("keys removed from the source that readers still answer (1 %% false positives)")
            .isLessThanOrEqualTo(slidOut * readerCount / 20);
        assertThat(basesSeen.values())
            .as("compactions: more than one base version seen per filter")
            .allMatch(b -> b.size() > 1);
        assertThat(longestChain.values()).as("delta chains").allMatch(d -> d > 0);
      }
    } finally {
      sources.stopChanging();
      leaked.forEach(Watch::close);
    }
  }

  /** A watch on a filter's source that nobody closes: the leak the watch figures must catch. */
  private static Watch leakWatch(KubernetesClient client, String namespace, String filter) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withName(ChangingSources.sourceName(filter))
        .watch(
            new Watcher<>() {
              @Override
              public void eventReceived(Action action, ConfigMap resource) {}

              @Override
              public void onClose(WatcherException cause) {}
            });
  }

  /**
   * Waits until every filter publishes the final round's keys and every reader serves that version
   * with those keys; returns the versions published in all.
   */
  private static long awaitReadersOnFinalRound(
      KubernetesClient client,
      String namespace,
      List<String> filters,
      ChangingSources sources,
      SnapshotChecker checker,
      Readers readers)
      throws Exception {
    long finalRound = sources.round();
    Map<String, Long> versions = new HashMap<>();
    for (String filter : filters) {
      List<String> finalKeys = sources.keys(filter, finalRound);
      await()
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(500))
          .ignoreExceptions()
          .until(
              () -> {
                BloomFilterBits bits = checker.current(filter);
                return bits != null && finalKeys.stream().allMatch(bits::mightContainString);
              });
      versions.put(filter, SnapshotFixtures.manifest(client, namespace, filter).version());
    }
    readers.awaitVersion(versions::get, Duration.ofSeconds(120));
    for (String filter : filters) {
      List<String> finalKeys = sources.keys(filter, finalRound);
      readers.of(filter).forEach(r -> assertThat(finalKeys).allMatch(r::mightContain));
    }
    return versions.values().stream().mapToLong(Long::longValue).sum();
  }

  private static Map<String, Integer> sizes(Map<String, Set<Long>> sets) {
    Map<String, Integer> sizes = new java.util.TreeMap<>();
    sets.forEach((k, v) -> sizes.put(k, v.size()));
    return sizes;
  }

  /** The readers: reader i follows filter i mod filters, each through its own client. */
  private static final class Readers implements AutoCloseable {
    private final List<String> filterOf = new ArrayList<>();
    private final List<KubernetesClient> clients = new ArrayList<>();
    private final List<LiveBloomFilter<String>> readers = new ArrayList<>();

    Readers(KubeCluster cluster, String namespace, List<String> filters, int count) {
      for (int i = 0; i < count; i++) {
        String filter = filters.get(i % filters.size());
        KubernetesClient client = cluster.newClient();
        clients.add(client);
        filterOf.add(filter);
        readers.add(
            BloomFilterWatcher.builder(client, namespace, filter, LiveKeyType.STRING)
                .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(2))
                .start());
      }
    }

    void awaitVersion(java.util.function.Function<String, Long> version, Duration timeout) {
      for (int i = 0; i < readers.size(); i++) {
        LiveBloomFilter<String> reader = readers.get(i);
        long wanted = version.apply(filterOf.get(i));
        await()
            .atMost(timeout)
            .pollInterval(Duration.ofMillis(100))
            .until(() -> reader.currentVersion() >= wanted);
        assertThat(reader.currentVersion()).isEqualTo(wanted);
      }
    }

    List<LiveBloomFilter<String>> of(String filter) {
      List<LiveBloomFilter<String>> of = new ArrayList<>();
      for (int i = 0; i < readers.size(); i++) {
        if (filterOf.get(i).equals(filter)) {
          of.add(readers.get(i));
        }
      }
      return of;
    }

    /** Lookups, over all readers, that answer true for the first {@code n} keys of round 0. */
    long countAnsweredOfRemoved(ChangingSources sources, long n) {
      long answered = 0;
      for (int i = 0; i < readers.size(); i++) {
        LiveBloomFilter<String> reader = readers.get(i);
        answered +=
            sources.keys(filterOf.get(i), 0).stream().limit(n).filter(reader::mightContain).count();
      }
      return answered;
    }

    long loads() {
      return readers.stream().mapToLong(LiveBloomFilter::loads).sum();
    }

    long failures() {
      return readers.stream().mapToLong(LiveBloomFilter::failures).sum();
    }

    @Override
    public void close() {
      readers.forEach(LiveBloomFilter::close);
      clients.forEach(KubernetesClient::close);
    }
  }
}
