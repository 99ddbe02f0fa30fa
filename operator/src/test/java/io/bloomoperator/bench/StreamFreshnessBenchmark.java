package io.bloomoperator.bench;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.servers.KafkaServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Freshness of a change stream (issue 29): the time from a key's produce (acknowledged by the
 * broker) to the moment every one of {@code readers} sidecar-lib readers answers "maybe present"
 * for it. One BloomFilter sized for {@code expected} keys with {@code spec.changes.kafka} and
 * {@code publishEvery}, ConfigMap transport; the operator in this JVM, a real API server and a real
 * Kafka broker (each in its own process); readers share {@link #CLIENTS} API clients. Keys are
 * produced one by one at {@code rate} per second for {@code seconds}; a checker looks at every
 * reader every 10 ms, so figures are at most that much late.
 *
 * <pre>
 * java ... io.bloomoperator.bench.StreamFreshnessBenchmark [readers=50] [rate=10] [seconds=60]
 *     [expected=1000000] [publishEvery=1s]
 * </pre>
 */
public final class StreamFreshnessBenchmark {

  private static final String NS = "fresh";
  private static final String FILTER = "ids";
  private static final int CLIENTS = 8;

  private StreamFreshnessBenchmark() {}

  public static void main(String[] args) throws Exception {
    int readers = args.length > 0 ? Integer.parseInt(args[0]) : 50;
    int rate = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 60;
    long expected = args.length > 3 ? Long.parseLong(args[3]) : 1_000_000;
    String publishEvery = args.length > 4 ? args[4] : "1s";

    KafkaServer kafka = KafkaServer.shared();
    String topic = "fresh-ids";
    kafka.createTopic(topic, 3, Map.of());
    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(RealKubernetesExtension.repoRoot().resolve("crds"));
    KubernetesClient admin = cluster.newClient();
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();
    Operator operator =
        OperatorMain.start(
            cluster.newClient(),
            OperatorSettings.fromEnvironment(
                Map.of("BLOOM_HTTP_ALLOW", "127.0.0.1/32", "BLOOM_MIN_PUBLISH_INTERVAL", "0s")),
            StoreSettings.fromEnvironment(Map.of()),
            null,
            new RuntimeOptions(0, false, null, "embedded", false),
            ReaderSettings.defaults());
    admin
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: bloomoperator.io/v1alpha1
                kind: BloomFilter
                metadata: {name: %s, namespace: %s}
                spec:
                  falsePositiveRate: 0.01
                  expectedInsertions: %d
                  source: {inline: [seed]}
                  changes:
                    publishEvery: %s
                    kafka: {bootstrapServers: ["%s"], topic: %s}
                """
                    .formatted(FILTER, NS, expected, publishEvery, kafka.bootstrap(), topic),
                BloomFilter.class))
        .create();
    List<KubernetesClient> clients = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      clients.add(cluster.newClient());
    }
    List<LiveBloomFilter<String>> live = new ArrayList<>();
    for (int i = 0; i < readers; i++) {
      live.add(BloomFilterWatcher.watch(clients.get(i % CLIENTS), NS, FILTER, LiveKeyType.STRING));
    }
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (!live.stream().allMatch(r -> r.mightContain("seed"))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the readers did not load the first version");
      }
      Thread.sleep(50);
    }
    // Wait for the stream to be running: one key through it first (not measured).
    kafka.produce(topic, List.of("warm-up"));
    while (!live.stream().allMatch(r -> r.mightContain("warm-up"))) {
      Thread.sleep(20);
    }
    System.out.printf(
        Locale.ROOT,
        "%d readers, %d keys/s for %d s, filter of %,d expected keys (%s), publishEvery %s%n",
        readers,
        rate,
        seconds,
        expected,
        "ConfigMaps",
        publishEvery);

    Map<String, Long> pending = new ConcurrentHashMap<>();
    List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
    Thread checker =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                long now = System.nanoTime();
                pending.forEach(
                    (key, at) -> {
                      if (live.stream().allMatch(r -> r.mightContain(key))) {
                        latencies.add(now - at);
                        pending.remove(key);
                      }
                    });
                try {
                  Thread.sleep(10);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "checker");
    checker.start();
    long periodNanos = 1_000_000_000L / rate;
    long start = System.nanoTime();
    int produced = 0;
    while (System.nanoTime() - start < Duration.ofSeconds(seconds).toNanos()) {
      String key = "key-" + produced;
      kafka.produce(topic, produced % 3, null, key);
      pending.put(key, System.nanoTime());
      produced++;
      long next = start + produced * periodNanos;
      long sleep = next - System.nanoTime();
      if (sleep > 0) {
        Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
      }
    }
    long drain = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!pending.isEmpty() && System.nanoTime() < drain) {
      Thread.sleep(50);
    }
    checker.interrupt();
    List<Long> sorted = new ArrayList<>(latencies);
    Collections.sort(sorted);
    System.out.printf(
        Locale.ROOT,
        "produced %d keys, served by all %d readers: %d, never: %d%n",
        produced,
        readers,
        sorted.size(),
        pending.size());
    System.out.printf(
        Locale.ROOT,
        "produce (acked) -> served by all readers: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f"
            + " ms%n",
        ms(sorted, 0.50),
        ms(sorted, 0.90),
        ms(sorted, 0.99),
        ms(sorted, 1.0));
    BloomFilter after = admin.resources(BloomFilter.class).inNamespace(NS).withName(FILTER).get();
    System.out.printf(
        Locale.ROOT,
        "versions published: %d; status.stream: %s%n",
        after.getStatus().getVersion(),
        Serialization.asJson(after.getStatus().getStream()));
    live.forEach(LiveBloomFilter::close);
    operator.stop();
    System.exit(0);
  }

  private static double ms(List<Long> sorted, double q) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int i = (int) Math.min(sorted.size() - 1, Math.ceil(q * sorted.size()) - 1);
    return sorted.get(Math.max(0, i)) / 1e6;
  }
}
