package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.watch.BloomFilterListener;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 6 of docs/reliability.md: a reader whose chunk GETs are slowed down (each waits {@code
 * faults.chunkDelayMs} before it is sent, so a whole load takes several times the grace period)
 * follows a filter that is republished every {@code faults.publishIntervalMs}. It must keep serving
 * the complete version it has, report the missing chunks, never swap to a payload that is not one
 * complete source round, and load the newest version once publishing pauses. A reader at full speed
 * follows the same filter as the control.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class SlowReaderFaultTest {

  private static final String FILTER = "slow";

  @Test
  void readerSlowerThanTheGracePeriodKeepsItsFilterAndCatchesUp(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    Outcome outcome =
        run(
            "slow-reader",
            client,
            ns,
            cluster,
            Duration.ofSeconds(1),
            FaultParameters.millis("publishInterval", 2_000));
    // The fault really happened: the slow reader lost chunks to retirement mid-load.
    assertThat(outcome.slow().missing.get()).isPositive();
  }

  /**
   * Only the immediately previous version is retained (docs/configuration.md, retainPreviousFor): a
   * reader slower than the time between two publishes loses chunks even within a long grace period.
   * It must behave as above: keep its filter and load the newest version once publishing pauses.
   * The missed chunks are reported as a figure.
   */
  @Test
  void readerSlowerThanThePublishIntervalKeepsItsFilterAndCatchesUp(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    run(
        "reader-slower-than-publishes",
        client,
        ns,
        cluster,
        Duration.ofSeconds(30),
        FaultParameters.millis("fastPublishInterval", 1_000));
  }

  private record Outcome(Swaps slow, Swaps fast) {}

  private Outcome run(
      String fault,
      KubernetesClient client,
      TestNamespace ns,
      KubeCluster cluster,
      Duration retain,
      Duration publishEvery)
      throws Exception {
    int rounds = FaultParameters.integer("slowRounds", 10);
    Duration chunkDelay = FaultParameters.millis("chunkDelay", 600);
    int keys = 5_000;
    String namespace = ns.name();
    ChangingSources sources = new ChangingSources(client, namespace, List.of(FILTER), keys);
    sources.writeSources(0);
    sources.createFilters(retain);
    Path log = Files.createTempFile("slow-reader-", ".log");
    AtomicLong slowedRequests = new AtomicLong();
    try (OperatorProcess operator =
            new OperatorProcess(
                cluster.kubeconfig(),
                Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0", "BLOOM_WATCH_NAMESPACES", namespace),
                log);
        KubernetesClient slowClient = slowChunkClient(cluster, chunkDelay, slowedRequests)) {
      operator.start();
      Swaps slowSwaps = new Swaps(sources);
      Swaps fastSwaps = new Swaps(sources);
      try (LiveBloomFilter<String> slow = follow(slowClient, namespace, slowSwaps);
          LiveBloomFilter<String> fast = follow(client, namespace, fastSwaps)) {
        slowSwaps.live = slow;
        fastSwaps.live = fast;
        assertThat(slow.awaitReady(Duration.ofSeconds(90))).isTrue();
        long loadedBefore = slow.currentVersion();

        sources.startChanging(publishEvery);
        await()
            .atMost(publishEvery.multipliedBy(rounds + 30L))
            .until(() -> sources.round() >= rounds);
        long finalRound = sources.stopChanging();
        long changedFor = finalRound;

        long published = awaitPublishedRound(client, namespace, sources, finalRound);
        long started = System.nanoTime();
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> slow.currentVersion() == published);
        Duration catchUp = Duration.ofNanos(System.nanoTime() - started);
        await().atMost(Duration.ofSeconds(30)).until(() -> fast.currentVersion() == published);

        assertThat(sources.keys(FILTER, finalRound)).allMatch(slow::mightContain);
        FaultParameters.report(
            fault,
            String.format(
                "sourceRounds=%d publishInterval=%s chunkDelay=%s retainPreviousFor=%s"
                    + " versionsPublishedWhileChanging=%d slowedChunkGets=%d"
                    + " slowReader[swaps=%d missingChunkFailures=%d otherFailures=%d"
                    + " catchUpAfterLastPublish=%dms] fastReader[swaps=%d missingChunkFailures=%d"
                    + " otherFailures=%d] violations=%d",
                changedFor,
                publishEvery,
                chunkDelay,
                retain,
                published - loadedBefore,
                slowedRequests.get(),
                slowSwaps.swaps.get(),
                slowSwaps.missing.get(),
                slowSwaps.other.get(),
                catchUp.toMillis(),
                fastSwaps.swaps.get(),
                fastSwaps.missing.get(),
                fastSwaps.other.get(),
                slowSwaps.violations.size() + fastSwaps.violations.size()));
        assertThat(slowSwaps.violations).isEmpty();
        assertThat(fastSwaps.violations).isEmpty();
        assertThat(slowSwaps.other.get()).isZero();
        assertThat(fastSwaps.other.get()).isZero();
        return new Outcome(slowSwaps, fastSwaps);
      }
    }
  }

  /** Waits until the manifest publishes {@code round} and returns its version. */
  private static long awaitPublishedRound(
      KubernetesClient client, String namespace, ChangingSources sources, long round) {
    return await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(
            () -> {
              Manifest manifest = SnapshotFixtures.manifest(client, namespace, FILTER);
              BloomFilterBits bits =
                  SnapshotDecoder.decode(
                      manifest, SnapshotConfigMaps.chunkSource(client, namespace));
              return sources.keys(FILTER, round).stream().allMatch(bits::mightContainString)
                  ? manifest.version()
                  : -1L;
            },
            v -> v > 0);
  }

  private static LiveBloomFilter<String> follow(
      KubernetesClient client, String namespace, BloomFilterListener listener) {
    return BloomFilterWatcher.builder(client, namespace, FILTER, LiveKeyType.STRING)
        .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(2))
        .listener(listener)
        .start();
  }

  /**
   * A client whose GETs of this filter's chunk ConfigMaps each wait {@code delay} before they are
   * sent: a reader on a slow link, with the reader's own code unchanged.
   */
  private static KubernetesClient slowChunkClient(
      KubeCluster cluster, Duration delay, AtomicLong slowed) {
    String chunkPath = "/configmaps/" + SnapshotNames.manifestName(FILTER) + "-v";
    Interceptor slow =
        new Interceptor() {
          @Override
          public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
            if (request.uri().getPath().contains(chunkPath)) {
              slowed.incrementAndGet();
              try {
                Thread.sleep(delay.toMillis());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        };
    return new KubernetesClientBuilder()
        .withConfig(cluster.clientConfig())
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("slow-chunks", slow))
        .build();
  }

  /**
   * Checks every swap of one reader, on the reader's own thread (no other swap can happen while a
   * listener runs): the filter now served holds one complete source round, and versions only move
   * forward with rounds.
   */
  private static final class Swaps implements BloomFilterListener {
    private final ChangingSources sources;
    private final AtomicLong swaps = new AtomicLong();
    private final AtomicLong missing = new AtomicLong();
    private final AtomicLong other = new AtomicLong();
    private final List<String> violations = new CopyOnWriteArrayList<>();
    private final Map<Long, Long> roundOfVersion = new ConcurrentHashMap<>();
    private volatile LiveBloomFilter<String> live;
    private long lastRound = -1;

    Swaps(ChangingSources sources) {
      this.sources = sources;
    }

    @Override
    public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
      swaps.incrementAndGet();
      LiveBloomFilter<String> filter = live;
      if (filter == null) {
        return; // the first load can finish before the test holds the reference
      }
      OptionalLong round = sources.roundHeldBy(FILTER, filter::mightContain, sources.round());
      if (round.isEmpty()) {
        violations.add("version " + newVersion + " holds no complete source round");
        return;
      }
      Long before = roundOfVersion.putIfAbsent(newVersion, round.getAsLong());
      if (before != null && before != round.getAsLong()) {
        violations.add("version " + newVersion + " held rounds " + before + " and " + round);
      }
      if (newVersion <= oldVersion || round.getAsLong() < lastRound) {
        violations.add("went back: v" + oldVersion + " -> v" + newVersion);
      }
      lastRound = round.getAsLong();
    }

    @Override
    public void onFailure(long version, Exception exception) {
      String message = String.valueOf(exception.getMessage());
      if (exception instanceof SnapshotVerificationException && message.contains("missing")) {
        missing.incrementAndGet();
      } else {
        other.incrementAndGet();
        System.out.println("slow-reader: load of v" + version + " failed: " + message);
      }
    }
  }
}
