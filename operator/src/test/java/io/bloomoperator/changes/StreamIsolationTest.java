package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.hash.Funnels;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.ConnectionCounter;
import io.bloomoperator.testing.servers.KafkaServer;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One tenant's dead broker against another tenant's freshness, on a real API server, the operator
 * in-process and a real Kafka broker: the dead one is a listener that accepts connections and never
 * answers (a black-holed address), the worst case for the threads reads hold. Its filters are read
 * again only after a growing backoff, say so once per filter, and the other namespace's keys are
 * published as fast as without them.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(300)
class StreamIsolationTest {

  private static final SimpleMeterRegistry METRICS = new SimpleMeterRegistry();

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.builder()
                  .http(
                      HttpSourceSettings.defaults()
                          .withEgress(EgressPolicy.of("127.0.0.1/32", null)))
                  .build())
          .withRegistry(METRICS);

  private static final KafkaServer KAFKA = KafkaServer.shared();
  private static final Pattern IN_A_ROW = Pattern.compile("\\((\\d+) failures? in a row\\)");
  private static final int DEAD_FILTERS = 4;

  private static String filter(String name, String bootstrap, String topic) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.001
          expectedInsertions: 20000
          source:
            inline: [sku-a]
          changes:
            publishEvery: 1s
            kafka:
              bootstrapServers: ["%s"]
              topic: %s
        """
        .formatted(name, bootstrap, topic);
  }

  private static boolean published(KubernetesClient client, String ns, String key)
      throws Exception {
    Manifest manifest = manifest(client, ns, "products");
    return com.google.common.hash.BloomFilter.readFrom(
            new ByteArrayInputStream(payload(client, ns, manifest)),
            Funnels.stringFunnel(StandardCharsets.UTF_8))
        .mightContain(key);
  }

  /** Produces a new key {@code rounds} times; each time, how long until it was published. */
  private static List<Long> latencies(KubernetesClient client, String ns, String topic, int rounds)
      throws Exception {
    List<Long> millis = new ArrayList<>();
    for (int i = 0; i < rounds; i++) {
      String key = "sku-" + UUID.randomUUID();
      long produced = System.nanoTime();
      KAFKA.produce(topic, List.of(key));
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> published(client, ns, key));
      millis.add((System.nanoTime() - produced) / 1_000_000);
    }
    return millis;
  }

  private static long median(List<Long> values) {
    List<Long> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }

  private static double unavailable() {
    Counter c = METRICS.find("bloom.stream.failures").tag("kind", "unavailable").counter();
    return c == null ? 0 : c.count();
  }

  private static int inARow(KubernetesClient client, String ns, String name) {
    BloomFilter f = client.resources(BloomFilter.class).inNamespace(ns).withName(name).get();
    if (f == null || f.getStatus() == null || f.getStatus().getStream() == null) {
      return 0;
    }
    String message = f.getStatus().getStream().getMessage();
    Matcher m = IN_A_ROW.matcher(message == null ? "" : message);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  @Test
  void aBrokerThatNeverAnswersIsBackedOffAndDoesNotDelayAnotherNamespace(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String topic = "products-" + UUID.randomUUID();
    KAFKA.createTopic(topic, 1, Map.of());
    apply(client, ns.name(), filter("products", KAFKA.bootstrap(), topic));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    List<Long> alone = latencies(client, ns.name(), topic, 6);

    String dead = ns.name() + "-dead";
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(dead).endMetadata().build())
        .create();
    try (ConnectionCounter hanging = ConnectionCounter.silent("127.0.0.1")) {
      for (int i = 0; i < DEAD_FILTERS; i++) {
        apply(client, dead, filter("dead-" + i, hanging.address(), "nowhere"));
      }
      List<Long> beside = latencies(client, ns.name(), topic, 6);

      // Once every dead filter has failed 4 times in a row, it waits 4-8 s, then 8-16 s, then
      // 16-32 s: at most 2 more attempts each in the next 20 s. Read at every reconcile (1 s) it
      // would be asked about 7 times each (a read fails after 2 s).
      await()
          .atMost(Duration.ofSeconds(120))
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                for (int i = 0; i < DEAD_FILTERS; i++) {
                  if (inARow(client, dead, "dead-" + i) < 4) {
                    return false;
                  }
                }
                return true;
              });
      double failuresBefore = unavailable();
      int connectionsBefore = hanging.count();
      Thread.sleep(20_000);
      double attempts = unavailable() - failuresBefore;
      int connections = hanging.count() - connectionsBefore;
      List<Long> later = latencies(client, ns.name(), topic, 3);

      System.out.printf(
          "isolation: healthy adds->published ms alone %s (median %d), beside %d hanging filters"
              + " %s (median %d), later %s; hanging filters: %.0f attempts and %d connections in"
              + " 20 s after 4 failures in a row (%s)%n",
          alone,
          median(alone),
          DEAD_FILTERS,
          beside,
          median(beside),
          later,
          attempts,
          connections,
          java.util.stream.IntStream.range(0, DEAD_FILTERS)
              .mapToObj(i -> "dead-" + i + ": " + inARow(client, dead, "dead-" + i) + " in a row")
              .collect(Collectors.joining(", ")));

      assertThat(attempts)
          .as("attempts of 4 backed-off filters in 20 s")
          .isLessThanOrEqualTo(2.0 * DEAD_FILTERS);
      assertThat(connections).isLessThanOrEqualTo(3 * 2 * DEAD_FILTERS);
      // Freshness beside them: within a second of the latency alone (the publish interval).
      assertThat(median(beside)).isLessThanOrEqualTo(median(alone) + 1000);
      assertThat(median(later)).isLessThanOrEqualTo(median(alone) + 1000);

      // Said once per dead filter, not at every attempt; the status says when it is tried again.
      List<Event> events = client.v1().events().inNamespace(dead).list().getItems();
      Map<String, Long> failedEvents =
          events.stream()
              .filter(e -> "ChangeStreamFailed".equals(e.getReason()))
              .collect(
                  Collectors.groupingBy(
                      e -> e.getInvolvedObject().getName(),
                      Collectors.summingLong(e -> e.getCount() == null ? 1 : e.getCount())));
      for (int i = 0; i < DEAD_FILTERS; i++) {
        assertThat(failedEvents.get("dead-" + i)).as("events of dead-%d", i).isEqualTo(1L);
        BloomFilter f =
            client.resources(BloomFilter.class).inNamespace(dead).withName("dead-" + i).get();
        assertThat(ready(f, "True", null)).as("serves its full build").isTrue();
        assertThat(f.getStatus().getStream().getMessage()).contains("read again after");
      }
    } finally {
      client.namespaces().withName(dead).delete();
    }
  }
}
