package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.hash.Funnels;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.KafkaServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator-wide read heap on a real API server and a real Kafka broker: six streams of three
 * namespaces under a budget of two smallest reads all publish every key produced, while the heap
 * reserved by reads never exceeds the budget (and reads were deferred for it: it did bind).
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(180)
class StreamReadBytesOperatorTest {

  private static final StreamLimits LIMITS;

  static {
    StreamLimits d = StreamLimits.defaults();
    long least = d.minReadBytes();
    LIMITS = d.withReads(d.streamsPerNamespace(), 2 * least, least + least / 2);
  }

  private static final SimpleMeterRegistry METRICS = new SimpleMeterRegistry();

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.builder()
                  .http(
                      HttpSourceSettings.defaults()
                          .withEgress(EgressPolicy.of("127.0.0.1/32", null)))
                  .streams(LIMITS)
                  .build())
          .withRegistry(METRICS);

  private static final KafkaServer KAFKA = KafkaServer.shared();

  private static String filter(String name, String topic) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 50000
          source:
            inline: [sku-a]
          changes:
            publishEvery: 1s
            kafka:
              bootstrapServers: ["%s"]
              topic: %s
        """
        .formatted(name, KAFKA.bootstrap(), topic);
  }

  private static com.google.common.hash.BloomFilter<CharSequence> published(
      KubernetesClient client, String ns, String name) throws Exception {
    Manifest manifest = manifest(client, ns, name);
    return com.google.common.hash.BloomFilter.readFrom(
        new ByteArrayInputStream(payload(client, ns, manifest)),
        Funnels.stringFunnel(StandardCharsets.UTF_8));
  }

  private record Stream(String namespace, String name, String topic, List<String> keys) {}

  @Test
  void streamsOfSeveralNamespacesUnderASmallReadBudgetAllPublishWithinIt(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> namespaces = List.of(ns.name(), ns.name() + "-b", ns.name() + "-c");
    for (String other : namespaces.subList(1, namespaces.size())) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
          .create();
    }
    AtomicLong maxReserved = new AtomicLong();
    Thread sampler =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                Gauge g = METRICS.find("bloomoperator.stream.read").gauge();
                if (g != null) {
                  maxReserved.accumulateAndGet((long) g.value(), Math::max);
                }
                try {
                  Thread.sleep(2);
                } catch (InterruptedException e) {
                  return;
                }
              }
            });
    sampler.setDaemon(true);
    try {
      List<Stream> streams = new ArrayList<>();
      for (String namespace : namespaces) {
        for (String name : List.of("first", "second")) {
          String topic = "keys-" + UUID.randomUUID();
          KAFKA.createTopic(topic, 2, Map.of());
          apply(client, namespace, filter(name, topic));
          // 40,000 keys of 40 characters: 5.1 MB as the read heap counts them, more than
          // 30 reads of the budget's smallest.
          List<String> keys =
              IntStream.range(0, 40_000)
                  .mapToObj(i -> namespace + "/" + name + "/" + "%020d".formatted(i))
                  .map(k -> k.length() > 40 ? k.substring(k.length() - 40) : k)
                  .toList();
          streams.add(new Stream(namespace, name, topic, keys));
        }
      }
      for (Stream s : streams) {
        awaitStatus(client, s.namespace(), s.name(), f -> ready(f, "True", "Published"));
      }
      sampler.start();
      long start = System.nanoTime();
      for (Stream s : streams) {
        KAFKA.produce(s.topic(), s.keys());
      }
      List<String> took = new ArrayList<>();
      for (Stream s : streams) {
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () -> {
                  var filter = published(client, s.namespace(), s.name());
                  return s.keys().stream().allMatch(filter::mightContain);
                });
        took.add(
            s.namespace().substring(ns.name().length())
                + "/"
                + s.name()
                + " "
                + (System.nanoTime() - start) / 1_000_000
                + " ms");
      }
      Counter bytes =
          METRICS.find("bloomoperator.stream.reads.deferred").tag("reason", "bytes").counter();
      System.out.printf(
          "read budget %d bytes (namespace share %d): all 6 streams published 40,000 keys each"
              + " (%s); most reserved at once %d bytes; reads deferred for bytes: %.0f%n",
          LIMITS.readBytes(),
          LIMITS.namespaceReadBytes(),
          String.join(", ", took),
          maxReserved.get(),
          bytes.count());
      assertThat(maxReserved.get()).isPositive().isLessThanOrEqualTo(LIMITS.readBytes());
      assertThat(bytes.count()).as("the budget bound reads").isPositive();
    } finally {
      sampler.interrupt();
      for (String other : namespaces.subList(1, namespaces.size())) {
        client.namespaces().withName(other).delete();
      }
    }
  }
}
