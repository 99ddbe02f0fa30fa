package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * Fault 12 of docs/reliability.md (issue 29), for any change stream ({@link StreamUnderTest}: a
 * Kafka topic, PostgreSQL logical replication): the packaged operator, in its own JVM, follows the
 * stream ({@code publishEvery: 1s}) while a writer adds unique keys to it continuously; the
 * operator is SIGKILLed at random instants and the stream's server is restarted under it. The
 * filter's full build is due only in an hour, so every key has to come through the stream. Readers
 * ({@link LiveBloomFilter}) and a {@link SnapshotChecker} follow the filter throughout.
 *
 * <p>Afterwards every key whose write the server acknowledged must be in the published filter and
 * in every reader (a Bloom filter has no false negatives, so one missing key is a lost add), and
 * every manifest read must have verified.
 */
final class StreamKillScenario {

  static final String FILTER = "stream";
  private static final Duration RETAIN = Duration.ofSeconds(4);

  /** How long a started operator, or one whose server came back, may take to publish a delta. */
  private static final Duration DELTA_WITHIN = Duration.ofSeconds(45);

  private StreamKillScenario() {}

  /**
   * Runs the scenario against {@code stream}, which this method starts and stops, in the namespace
   * {@code ns} of {@code cluster}, and asserts that no acknowledged key was lost.
   */
  static void run(
      StreamUnderTest stream, KubernetesClient client, TestNamespace ns, KubeCluster cluster)
      throws Exception {
    String tag = stream.name();
    long seed = FaultParameters.seed();
    // The short run of `mvn verify` sets fewer kills for the streams than for the other faults.
    int kills = FaultParameters.integer("streamKills", FaultParameters.integer("kills", 20));
    int restarts = Math.max(1, FaultParameters.integer("restarts", 1));
    int rate = FaultParameters.integer("streamKeysPerSecond", 50);
    int readerCount = FaultParameters.integer("streamReaders", 2);
    Duration allServedWithin = FaultParameters.millis("streamServedMs", 60_000);
    System.out.printf(
        "%s: seed=%d kills=%d serverRestarts=%d keysPerSecond=%d readers=%d (repeat"
            + " with -Dfaults.seed=%d)%n",
        tag, seed, kills, restarts, rate, readerCount, seed);
    Random random = new Random(seed);
    String namespace = ns.name();
    Path log = Files.createTempFile(tag + "-", ".log");
    System.out.println(tag + ": operator log " + log);

    Map<String, String> env = new HashMap<>(stream.operatorEnv());
    env.put("BLOOM_WATCH_NAMESPACES", namespace);
    // The stream's server listens on loopback, which the egress policy refuses by default.
    env.put("BLOOM_HTTP_ALLOW", "127.0.0.1/32");
    env.put("BLOOM_MIN_PUBLISH_INTERVAL", "0");
    // A kill during a publish counts as a crashed build; the default backoff (a minute, doubling)
    // would hold the filter for the rest of the run.
    env.put("BLOOM_BUILD_CRASH_BACKOFF", "1s");
    try (stream;
        OperatorProcess operator = new OperatorProcess(cluster.kubeconfig(), env, log)) {
      stream.prepare(client, namespace);
      SnapshotFixtures.apply(client, namespace, filter(stream));
      operator.start();
      operator.awaitStarted(Duration.ofSeconds(90));
      SnapshotFixtures.awaitStatus(
          client, namespace, FILTER, f -> SnapshotFixtures.ready(f, "True", "Published"));
      String builtAt = annotation(client, namespace, SnapshotConfigMaps.ANNOTATION_BUILT_AT);
      long firstVersion = SnapshotFixtures.manifest(client, namespace, FILTER).version();
      Set<String> builtAtSeen = new LinkedHashSet<>(List.of(builtAt));

      try (StreamUnderTest.KeyWriter producer = stream.writer(rate);
          SnapshotChecker checker =
              new SnapshotChecker(client, namespace, List.of(FILTER), RETAIN);
          Readers readers = new Readers(cluster, namespace, readerCount);
          ChunkWatch chunks = new ChunkWatch(client, namespace)) {
        checker.start();
        producer.start();
        int restarted = 0;
        int midPublish = 0;
        List<Long> firstDeltaMs = new ArrayList<>();
        List<Long> afterBrokerMs = new ArrayList<>();
        List<String> quiet = new ArrayList<>();
        for (int kill = 1; kill <= kills; kill++) {
          if (kill > 1) {
            operator.start();
            operator.awaitStarted(Duration.ofSeconds(90));
          }
          // Each kill lands while the stream is being published: after this incarnation's first
          // delta, at a random instant (every phase of the publish cycle) or right after a delta's
          // first chunk was written.
          long started = System.nanoTime();
          if (awaitNewVersion(client, namespace, DELTA_WITHIN)) {
            firstDeltaMs.add((System.nanoTime() - started) / 1_000_000);
          } else {
            quiet.add("incarnation " + kill + ": " + streamMessage(client, namespace));
          }
          // Server restarts spread over the run, each under a running operator, which must resume
          // reading without being restarted itself.
          if (restarted < restarts && kill * (restarts + 1) >= (restarted + 1) * kills) {
            long down = System.nanoTime();
            stream.restart();
            restarted++;
            long back = System.nanoTime();
            if (awaitNewVersion(client, namespace, DELTA_WITHIN)) {
              afterBrokerMs.add((System.nanoTime() - back) / 1_000_000);
            } else {
              quiet.add(
                  "after server restart " + restarted + ": " + streamMessage(client, namespace));
            }
            System.out.printf(
                "%s: server restarted (down %d ms) during incarnation %d%n",
                tag, (back - down) / 1_000_000, kill);
          }
          if (kill % 2 == 0) {
            // Every other kill waits for a delta's first chunk and kills before its manifest.
            long published = SnapshotFixtures.manifest(client, namespace, FILTER).version();
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (chunks.highest.get() <= published && System.nanoTime() < deadline) {
              Thread.sleep(1);
            }
          } else {
            Thread.sleep(1_000 + random.nextLong(3_001));
          }
          operator.kill();
          if (UnpublishedChunks.count(client, namespace, List.of(FILTER)) > 0) {
            midPublish++;
          }
          sample(client, namespace, builtAtSeen);
        }
        operator.start();
        operator.awaitStarted(Duration.ofSeconds(90));
        // Events keep flowing for a while after the last kill, as they would in production.
        Thread.sleep(2_000);
        producer.stop();
        long stopped = System.nanoTime();
        List<String> acknowledged = producer.acknowledged();

        List<String> lostPublished = acknowledged;
        List<List<String>> lostByReader = new ArrayList<>();
        long deadline = stopped + allServedWithin.toNanos();
        while (true) {
          BloomFilterBits bits = checker.current(FILTER);
          lostPublished =
              bits == null ? acknowledged : missing(acknowledged, bits::mightContainString);
          lostByReader.clear();
          for (LiveBloomFilter<String> reader : readers.readers) {
            lostByReader.add(missing(acknowledged, reader::mightContain));
          }
          boolean served = lostPublished.isEmpty() && lostByReader.stream().allMatch(List::isEmpty);
          if (served || System.nanoTime() > deadline) {
            break;
          }
          Thread.sleep(250);
        }
        long servedAfterMs = (System.nanoTime() - stopped) / 1_000_000;
        sample(client, namespace, builtAtSeen);
        operator.kill();
        checker.close();

        long lastVersion = SnapshotFixtures.manifest(client, namespace, FILTER).version();
        List<Event> streamFailures =
            client.v1().events().inNamespace(namespace).list().getItems().stream()
                .filter(e -> "ChangeStreamFailed".equals(e.getReason()))
                .toList();
        long errors =
            Files.readAllLines(log).stream().filter(l -> l.contains("unexpected error")).count();
        long lostInReaders = lostByReader.stream().mapToLong(List::size).max().orElse(0);
        FaultParameters.report(
            tag,
            String.format(
                "seed=%d kills=%d midPublish=%d serverRestarts=%d keysAcknowledged=%d"
                    + " writesFailed=%d firstDeltaAfterStartMs=%s deltaAfterServerBackMs=%s"
                    + " lostPublished=%d lostInReaders=%d allServedMsAfterLastProduce=%d"
                    + " versionsPublished=%d fullBuilds=%d changeStreamFailedEvents=%d"
                    + " checks=%d (polled %d, watched %d) staleReads=%d violations=%d"
                    + " readerLoads=%d readerFailures=%d operatorUnexpectedErrors=%d",
                seed,
                kills,
                midPublish,
                restarted,
                acknowledged.size(),
                producer.failed(),
                minMedianMax(firstDeltaMs),
                afterBrokerMs,
                lostPublished.size(),
                lostInReaders,
                servedAfterMs,
                lastVersion - firstVersion,
                builtAtSeen.size() - 1,
                streamFailures.size(),
                checker.checks(),
                checker.polledChecks(),
                checker.watchedChecks(),
                checker.staleReads(),
                checker.violations().size(),
                readers.loads(),
                readers.failures(),
                errors));
        quiet.forEach(
            q -> System.out.println(tag + ": no delta within " + DELTA_WITHIN + ", " + q));
        for (Event e : streamFailures) {
          System.out.println(tag + ": event ChangeStreamFailed: " + e.getMessage());
        }
        if (!lostPublished.isEmpty()) {
          System.out.println(
              tag
                  + ": lost from the published filter (key@where it was written): "
                  + producer.describe(lostPublished));
        }
        assertThat(acknowledged).hasSizeGreaterThan(rate * kills);
        assertThat(checker.violations()).isEmpty();
        assertThat(midPublish).as("kills that landed mid-publish").isPositive();
        assertThat(quiet).as("operators that published no delta within %s", DELTA_WITHIN).isEmpty();
        assertThat(lostPublished)
            .as("acknowledged keys missing from the published filter")
            .isEmpty();
        for (int i = 0; i < lostByReader.size(); i++) {
          assertThat(lostByReader.get(i))
              .as("acknowledged keys reader %d does not serve", i)
              .isEmpty();
        }
        assertThat(lastVersion - firstVersion)
            .as("versions published from the stream")
            .isPositive();
        // No full build was due (refreshInterval 1h) and no position was lost: every key came
        // through the stream, and the build record still names the first build.
        assertThat(builtAtSeen)
            .as("build records seen (a full build ran; ChangeStreamFailed: %s)", streamFailures)
            .containsExactly(builtAt);
      }
    }
  }

  private static String filter(StreamUnderTest stream) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 50000
          refreshInterval: 1h
          snapshot: {chunkSizeBytes: 4096, retainPreviousFor: %ds}
        """
            .formatted(FILTER, RETAIN.toSeconds())
        + stream.sourceAndChanges().indent(2);
  }

  /** Waits until a version above the current one is published; false after {@code timeout}. */
  private static boolean awaitNewVersion(
      KubernetesClient client, String namespace, Duration timeout) throws Exception {
    long before = SnapshotFixtures.manifest(client, namespace, FILTER).version();
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      Thread.sleep(100);
      try {
        if (SnapshotFixtures.manifest(client, namespace, FILTER).version() > before) {
          return true;
        }
      } catch (KubernetesClientException e) {
        // read again
      }
    }
    return false;
  }

  private static String streamMessage(KubernetesClient client, String namespace) {
    BloomFilter filter =
        client.resources(BloomFilter.class).inNamespace(namespace).withName(FILTER).get();
    StreamStatus stream = filter.getStatus() == null ? null : filter.getStatus().getStream();
    return stream == null ? "no status.stream" : "status.stream.message=" + stream.getMessage();
  }

  private static List<String> missing(List<String> keys, Predicate<String> served) {
    return keys.stream().filter(served.negate()).toList();
  }

  private static String minMedianMax(List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    return sorted.isEmpty()
        ? "-"
        : sorted.get(0) + "/" + sorted.get(sorted.size() / 2) + "/" + sorted.get(sorted.size() - 1);
  }

  private static String annotation(KubernetesClient client, String namespace, String name) {
    ConfigMap manifest =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName(FILTER))
            .get();
    return manifest == null ? null : manifest.getMetadata().getAnnotations().get(name);
  }

  /** Records the build record's built-at the manifest names now (a new one: a full build ran). */
  private static void sample(KubernetesClient client, String namespace, Set<String> builtAtSeen) {
    try {
      String now = annotation(client, namespace, SnapshotConfigMaps.ANNOTATION_BUILT_AT);
      if (now != null) {
        builtAtSeen.add(now);
      }
    } catch (KubernetesClientException e) {
      // The next sample reads it.
    }
  }

  /** The highest version of which a chunk ConfigMap was created, as a watch reports it. */
  private static final class ChunkWatch implements AutoCloseable {
    private final AtomicLong highest = new AtomicLong();
    private final Watch watch;

    ChunkWatch(KubernetesClient client, String namespace) {
      watch =
          client
              .configMaps()
              .inNamespace(namespace)
              .withLabelSelector(SnapshotNames.chunkSelector(FILTER))
              .watch(
                  new Watcher<>() {
                    @Override
                    public void eventReceived(Action action, ConfigMap chunk) {
                      if (action == Action.ADDED) {
                        String version =
                            chunk.getMetadata().getLabels().get(SnapshotNames.LABEL_VERSION);
                        highest.accumulateAndGet(Long.parseLong(version), Math::max);
                      }
                    }

                    @Override
                    public void onClose(WatcherException cause) {}
                  });
    }

    @Override
    public void close() {
      watch.close();
    }
  }

  /** Readers of the filter, each through its own client, as applications would. */
  private static final class Readers implements AutoCloseable {
    private final List<KubernetesClient> clients = new ArrayList<>();
    private final List<LiveBloomFilter<String>> readers = new ArrayList<>();

    Readers(KubeCluster cluster, String namespace, int count) {
      for (int i = 0; i < count; i++) {
        KubernetesClient client = cluster.newClient();
        clients.add(client);
        readers.add(
            BloomFilterWatcher.builder(client, namespace, FILTER, LiveKeyType.STRING)
                .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(2))
                .start());
      }
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
