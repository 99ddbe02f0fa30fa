package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 7 of docs/reliability.md: many BloomFilters (200 by default) in one namespace, served by
 * the packaged operator in its own JVM with a bounded heap and the default build concurrency. Every
 * filter must become Ready; then the sources change in rounds (each filter's ConfigMap rewritten
 * and a rebuild asked for) and every round must be published by every filter, first with healthy
 * sources only, then with filters whose HTTP server accepts the download and sends nothing ({@link
 * StallingHttpSource}). The figure that matters is each filter's delay from its source change to
 * the first published version holding it, with and without the stalled ones: a stalled source must
 * not make the others wait for it.
 *
 * <p>Then two hostile namespaces join (issue 17's fairness attack): each has filters whose source
 * sends one key and then nothing, so each build allocates its filter and holds a build slot while
 * it waits. The honest namespace's rounds must still publish, delayed at most by the stall bound
 * ({@code BLOOM_SOURCE_STALL_TIMEOUT}) that takes the slots back.
 *
 * <p>Throughout, the operator's heap and threads are sampled from outside, every new manifest is
 * verified ({@link SnapshotChecker}), and thread dumps say what the reconcile threads are doing.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class ManyFiltersFaultTest {

  private static final long MAX_SNAPSHOT_BYTES = 8L * 1024 * 1024;

  @Test
  void manyFiltersStayReadyAndAStalledSourceDoesNotHoldUpTheOthers(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    int count = FaultParameters.integer("manyFilters", 200);
    int keys = FaultParameters.integer("manyKeys", 20);
    int rounds = FaultParameters.integer("manyRounds", 3);
    int stalledCount = FaultParameters.integer("stalledFilters", 2);
    int builds = FaultParameters.integer("maxConcurrentBuilds", 2);
    Duration stalledReadTimeout = FaultParameters.millis("stalledReadTimeout", 30_000);
    Duration roundTimeout = FaultParameters.millis("manyRoundTimeout", 300_000);
    String heap = System.getProperty("faults.operatorHeap", "128m");
    int hostileCount = FaultParameters.integer("hostileFilters", 4);
    Duration stallTimeout = FaultParameters.millis("stallTimeout", 30_000);
    String namespace = ns.name();
    List<String> hostileNamespaces = List.of(namespace + "-hostile-a", namespace + "-hostile-b");
    for (String hostile : hostileNamespaces) {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(hostile).endMetadata().build())
          .create();
    }
    List<String> filters =
        IntStream.range(0, count).mapToObj(i -> String.format("many-%03d", i)).toList();
    List<String> stalled = IntStream.range(0, stalledCount).mapToObj(i -> "stalled-" + i).toList();
    System.out.printf(
        "many-filters: filters=%d keys=%d rounds=%d stalled=%d builds=%d heap=%s"
            + " maxSnapshotBytes=%d stalledReadTimeout=%s%n",
        count, keys, rounds, stalledCount, builds, heap, MAX_SNAPSHOT_BYTES, stalledReadTimeout);

    ChangingSources sources = new ChangingSources(client, namespace, filters, keys);
    sources.writeSources(0);
    for (String filter : filters) {
      SnapshotFixtures.apply(
          client,
          namespace,
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: %s}
          spec:
            falsePositiveRate: 0.01
            source: {configMap: {name: %s, key: ids}}
            refreshInterval: 5m
            snapshot: {retainPreviousFor: 5s}
          """
              .formatted(filter, ChangingSources.sourceName(filter)));
    }
    Path log = Files.createTempFile("many-filters-", ".log");
    System.out.println("many-filters: operator log " + log);
    Map<String, String> settings = new HashMap<>();
    settings.put("BLOOM_WATCH_NAMESPACES", namespace + "," + String.join(",", hostileNamespaces));
    settings.put("BLOOM_SOURCE_STALL_TIMEOUT", stallTimeout.toMillis() + "ms");
    settings.put("BLOOM_MIN_PUBLISH_INTERVAL", "0");
    settings.put("BLOOM_MAX_CONCURRENT_BUILDS", Integer.toString(builds));
    settings.put("BLOOM_MAX_SNAPSHOT_BYTES", Long.toString(MAX_SNAPSHOT_BYTES));
    settings.put("BLOOM_HTTP_ALLOW", "127.0.0.1");
    try (StallingHttpSource stallingServer = new StallingHttpSource();
        SnapshotChecker checker =
            new SnapshotChecker(client, namespace, filters, Duration.ofSeconds(5));
        PublishTimes published = new PublishTimes(client, namespace, sources, checker);
        OperatorProcess operator =
            new OperatorProcess(
                cluster.kubeconfig(),
                settings,
                log,
                List.of("-Xmx" + heap, "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError"))) {
      published.start();
      long startedAt = System.nanoTime();
      operator.start();
      operator.awaitStarted(Duration.ofSeconds(120));
      long up = System.nanoTime();
      try (OperatorVitals vitals = new OperatorVitals(operator.pid())) {
        await()
            .atMost(roundTimeout)
            .pollInterval(Duration.ofSeconds(1))
            .until(() -> notReady(client, namespace, filters).isEmpty());
        long allReady = System.nanoTime();

        List<OperatorVitals.ReconcileThreads> healthyDumps = new ArrayList<>();
        Latencies healthy = new Latencies();
        for (long r = 1; r <= rounds; r++) {
          changeRound(sources, published, filters, r, healthy, vitals, healthyDumps, roundTimeout);
        }

        for (String filter : stalled) {
          SnapshotFixtures.apply(
              client,
              namespace,
              """
              apiVersion: bloomoperator.io/v1alpha1
              kind: BloomFilter
              metadata: {name: %s}
              spec:
                falsePositiveRate: 0.01
                source: {http: {url: "%s", readTimeout: %dms, connectTimeout: 2s}}
                refreshInterval: 10s
              """
                  .formatted(
                      filter, stallingServer.url("/" + filter), stalledReadTimeout.toMillis()));
        }
        // Every stalled filter is inside its download before the measured rounds start.
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> stallingServer.stalledNow() >= stalledCount);
        List<OperatorVitals.ReconcileThreads> stalledDumps = new ArrayList<>();
        Latencies withStall = new Latencies();
        for (long r = rounds + 1; r <= 2L * rounds; r++) {
          changeRound(
              sources, published, filters, r, withStall, vitals, stalledDumps, roundTimeout);
        }

        // Two hostile namespaces: builds that hold a slot and then wait forever.
        for (String hostile : hostileNamespaces) {
          for (int i = 0; i < hostileCount; i++) {
            SnapshotFixtures.apply(
                client,
                hostile,
                """
                apiVersion: bloomoperator.io/v1alpha1
                kind: BloomFilter
                metadata: {name: hostile-%d}
                spec:
                  falsePositiveRate: 0.01
                  expectedInsertions: 1000000
                  source: {http: {url: "%s", readTimeout: 1h, connectTimeout: 2s}}
                  refreshInterval: 10s
                """
                    .formatted(
                        i,
                        stallingServer.url(
                            StallingHttpSource.FIRST_KEY_THEN_STALL + hostile + "/" + i)));
          }
        }
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> stallingServer.firstKeySent() >= hostileNamespaces.size());
        List<OperatorVitals.ReconcileThreads> hostileDumps = new ArrayList<>();
        Latencies withHostile = new Latencies();
        for (long r = 2L * rounds + 1; r <= 3L * rounds; r++) {
          changeRound(
              sources, published, filters, r, withHostile, vitals, hostileDumps, roundTimeout);
        }
        boolean hostileStopped =
            hostileNamespaces.stream()
                .flatMap(
                    h ->
                        client
                            .resources(BloomFilter.class)
                            .inNamespace(h)
                            .list()
                            .getItems()
                            .stream())
                .anyMatch(f -> SnapshotFixtures.ready(f, "False", Reasons.SOURCE_TIMEOUT));

        List<String> healthyNotReady = notReady(client, namespace, filters);
        // The stalled downloads end at their readTimeout and say so.
        for (String filter : stalled) {
          await()
              .atMost(stalledReadTimeout.plus(Duration.ofSeconds(60)))
              .pollInterval(Duration.ofSeconds(1))
              .until(
                  () ->
                      client
                          .resources(BloomFilter.class)
                          .inNamespace(namespace)
                          .withName(filter)
                          .get(),
                  f -> SnapshotFixtures.ready(f, "False", Reasons.SOURCE_TIMEOUT));
        }
        boolean alive = operator.isAlive();
        String operatorLog = Files.readString(log);
        long unexpected = operatorLog.lines().filter(l -> l.contains("unexpected error")).count();
        FaultParameters.report(
            "many-filters",
            String.format(
                "filters=%d keysEach=%d stalled=%d (GETs accepted, never answered: %d) builds=%d"
                    + " heap=-Xmx%s maxSnapshotBytes=%d |"
                    + " startToAllReady=%dms (JVM start to 'started' %dms)"
                    + " | healthy: %s | with stalled: %s | with 2 hostile namespaces (%d"
                    + " filters each, one key then nothing; stall bound %s): %s | heapUsedMax=%dMiB"
                    + " heapCommittedMax=%dMiB threadsMax=%d samples=%d | reconcile threads"
                    + " healthy %s, with stalled %s | checks=%d violations=%d"
                    + " operatorUnexpectedErrors=%d oom=%s",
                count,
                keys,
                stalledCount,
                stallingServer.gets(),
                builds,
                heap,
                MAX_SNAPSHOT_BYTES,
                Duration.ofNanos(allReady - startedAt).toMillis(),
                Duration.ofNanos(up - startedAt).toMillis(),
                healthy.summary(),
                withStall.summary(),
                hostileCount,
                stallTimeout,
                withHostile.summary(),
                vitals.maxHeapUsedMib(),
                vitals.maxHeapCommittedMib(),
                vitals.maxThreads(),
                vitals.samples(),
                healthyDumps,
                stalledDumps,
                checker.checks(),
                checker.violations().size(),
                unexpected,
                operatorLog.contains("OutOfMemoryError")));
        assertThat(healthyNotReady).as("healthy filters Ready").isEmpty();
        assertThat(alive).as("operator alive (no OutOfMemoryError exit)").isTrue();
        assertThat(checker.violations()).isEmpty();
        assertThat(operatorLog).doesNotContain("OutOfMemoryError");
        assertThat(stallingServer.gets()).as("the stalled sources were read").isPositive();
        // The stated bound: a filter whose source stalls (and keeps a reconcile thread until its
        // readTimeout) does not make another filter wait for it. Without the fix every build
        // queued behind the stalled downloads' build slots for up to their readTimeout.
        assertThat(withStall.max())
            .as("publish delay of the other filters while %d sources stall", stalledCount)
            .isLessThan(Math.max(2 * healthy.max(), healthy.max() + 10_000));
        // Two namespaces holding every build slot with stalled builds delay the others by about
        // the stall bound, not by their sources' timeouts (an hour here).
        assertThat(hostileStopped).as("the stall bound stopped a hostile build").isTrue();
        assertThat(withHostile.max())
            .as("publish delay of the honest namespace while two hostile ones stall")
            .isLessThan(2 * healthy.max() + 2 * stallTimeout.toMillis() + 10_000);
      }
    }
  }

  /**
   * Writes round {@code r} of every source (each followed by its rebuild request), takes a thread
   * dump while the operator works on it, and waits until every filter published it.
   */
  private static void changeRound(
      ChangingSources sources,
      PublishTimes published,
      List<String> filters,
      long r,
      Latencies latencies,
      OperatorVitals vitals,
      List<OperatorVitals.ReconcileThreads> dumps,
      Duration timeout)
      throws Exception {
    published.latestRound(r);
    Map<String, Long> changedAt = new HashMap<>();
    long first = System.nanoTime();
    for (String filter : filters) {
      sources.write(filter, r);
      changedAt.put(filter, System.nanoTime());
    }
    dumps.add(vitals.reconcileThreads());
    await()
        .atMost(timeout)
        .pollInterval(Duration.ofMillis(500))
        .until(() -> published.missing(filters, r).isEmpty());
    long last = 0;
    for (String filter : filters) {
      Long at = published.publishedAt(filter, r);
      if (at != null) { // null: skipped to a later round, not possible with rounds in sequence
        latencies.add(Duration.ofNanos(at - changedAt.get(filter)).toMillis());
        last = Math.max(last, at);
      }
    }
    latencies.round(Duration.ofNanos(last - first).toMillis());
  }

  private static List<String> notReady(
      KubernetesClient client, String namespace, List<String> filters) {
    Map<String, BloomFilter> byName = new HashMap<>();
    client
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .list()
        .getItems()
        .forEach(f -> byName.put(f.getMetadata().getName(), f));
    return filters.stream()
        .filter(f -> byName.get(f) == null || !SnapshotFixtures.ready(byName.get(f), "True", null))
        .toList();
  }

  /** Source change → publish delays (ms) of one phase, and how long its rounds took. */
  static final class Latencies {
    private final List<Long> delays = new ArrayList<>();
    private final List<Long> roundTimes = new ArrayList<>();

    void add(long millis) {
      delays.add(millis);
    }

    void round(long millis) {
      roundTimes.add(millis);
    }

    long percentile(double p) {
      List<Long> sorted = delays.stream().sorted().toList();
      int rank = (int) Math.ceil(p / 100 * sorted.size());
      return sorted.get(Math.max(0, Math.min(sorted.size() - 1, rank - 1)));
    }

    long max() {
      return percentile(100);
    }

    String summary() {
      return String.format(
          "%d publishes, change->published p50=%dms p99=%dms max=%dms, rounds took %s ms",
          delays.size(), percentile(50), percentile(99), max(), roundTimes);
    }
  }
}
