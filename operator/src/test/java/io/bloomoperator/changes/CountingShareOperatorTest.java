package io.bloomoperator.changes;

import static io.bloomoperator.changes.CountingDeletionsOperatorTest.builtAt;
import static io.bloomoperator.changes.CountingDeletionsOperatorTest.delete;
import static io.bloomoperator.changes.CountingDeletionsOperatorTest.published;
import static io.bloomoperator.changes.CountingDeletionsOperatorTest.stream;
import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.KafkaServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fair share of BLOOM_STREAM_COUNTING_BYTES on a real API server and a real broker: two
 * namespaces whose shadows fill the total, a third refused for room; at the next full build of the
 * first, it gives its room back (Rebuild until its next one, said in the status and an event, no
 * key text) and the third counts from its own next full build. Meanwhile deletes wait for full
 * builds and no namespace's published filter loses a live key.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(180)
class CountingShareOperatorTest {

  private static final long BIG_KEYS = 20_000;
  private static final long SMALL_KEYS = 300;

  /** A shadow of each filter size, as the operator sizes them (Guava layout, 1 %). */
  private static final long BIG = shadowBytes(BIG_KEYS);

  private static final long SMALL = shadowBytes(SMALL_KEYS);

  /** Two big shadows fill it, with less room left than a small one needs. */
  private static final long TOTAL = 2 * BIG + SMALL / 2;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.builder()
              .http(HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32", null)))
              .streams(
                  StreamLimits.defaults().toBuilder()
                      .maxCountingBytes(TOTAL)
                      .maxCountingNamespaceBytes(BIG + SMALL / 4)
                      .build())
              .build());

  private static final KafkaServer KAFKA = KafkaServer.shared();

  private static final List<String> KEYS =
      IntStream.range(0, 300).mapToObj(i -> "sku-" + i).toList();

  private static long shadowBytes(long keys) {
    return CountingShadow.bytesFor(BloomFilterSizing.forKeys(keys, 0.01).numBits(), keys);
  }

  private static String filter(String topic, long expected, List<String> keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: products}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: %d
          source:
            inline: [%s]
          changes:
            publishEvery: 1s
            overlap: 0s
            deletions: Counting
            kafka:
              bootstrapServers: ["%s"]
              topic: %s
              value: Json
              keyField: id
              operationField: op
        """
        .formatted(expected, String.join(", ", keys), KAFKA.bootstrap(), topic);
  }

  private static String deletions(KubernetesClient client, String ns) {
    StreamStatus s = stream(client, ns);
    return s == null || s.getDeletions() == null ? "" : s.getDeletions();
  }

  private static void awaitDeletions(KubernetesClient client, String ns, String says) {
    awaitStatus(
        client,
        ns,
        "products",
        f ->
            ready(f, "True", "Published")
                && f.getStatus().getStream() != null
                && f.getStatus().getStream().getDeletions() != null
                && f.getStatus().getStream().getDeletions().contains(says));
  }

  /** A full build of {@code ns}'s filter (its source gains a key), awaited. */
  private static void fullBuild(KubernetesClient client, String ns, List<String> source) {
    String before = builtAt(client, ns);
    source.add("sku-extra-" + source.size());
    client
        .resources(BloomFilter.class)
        .inNamespace(ns)
        .withName("products")
        .edit(
            f -> {
              f.getSpec().getSource().setInline(List.copyOf(source));
              return f;
            });
    await().atMost(Duration.ofSeconds(60)).until(() -> !before.equals(builtAt(client, ns)));
  }

  /** A delete of {@code ns}'s filter waits for the next full build. */
  private static void awaitPending(KubernetesClient client, String ns) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                stream(client, ns).getDeletionsPending() != null
                    && stream(client, ns).getDeletionsPending() >= 1);
  }

  private static void assertAllPresent(KubernetesClient client, String ns, List<String> keys)
      throws Exception {
    com.google.common.hash.BloomFilter<CharSequence> filter = published(client, ns);
    assertThat(keys.stream().filter(k -> !filter.mightContain(k))).as("keys lost").isEmpty();
  }

  @Test
  void aThirdNamespaceGetsItsShareAfterTheNextFullBuildsAndNobodyLosesAKey(
      KubernetesClient client, TestNamespace ns) throws Exception {
    assertThat(SMALL).isLessThan(TOTAL / 3);
    String a = ns.name();
    String b = ns.name() + "-b";
    String c = ns.name() + "-c";
    for (String other : List.of(b, c)) {
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
          .create();
    }
    try {
      String topicA = "share-" + UUID.randomUUID();
      String topicB = "share-" + UUID.randomUUID();
      String topicC = "share-" + UUID.randomUUID();
      for (String topic : List.of(topicA, topicB, topicC)) {
        KAFKA.createTopic(topic, 1, Map.of());
      }
      List<String> sourceA = new ArrayList<>(KEYS);
      List<String> sourceC = new ArrayList<>(KEYS);
      apply(client, a, filter(topicA, BIG_KEYS, KEYS));
      awaitDeletions(client, a, "Counting");
      apply(client, b, filter(topicB, BIG_KEYS, KEYS));
      awaitDeletions(client, b, "Counting");

      // The total is full: the third namespace is refused for room and waits.
      apply(client, c, filter(topicC, SMALL_KEYS, KEYS));
      awaitDeletions(client, c, "BLOOM_STREAM_COUNTING_BYTES=" + TOTAL);
      KAFKA.produceKeyed(topicC, "sku-8", delete("sku-8"));
      awaitPending(client, c);
      assertAllPresent(client, c, KEYS); // Rebuild semantics: the delete waits

      // The first namespace's next full build gives its room back, and says why.
      fullBuild(client, a, sourceA);
      awaitDeletions(client, a, "fair share");
      String why = deletions(client, a);
      assertThat(why).startsWith("Rebuild until the next full build: ").doesNotContain(c, "sku-");
      assertThat(
              client.v1().events().inNamespace(a).list().getItems().stream()
                  .filter(e -> "CountingDeletionsOff".equals(e.getReason()))
                  .anyMatch(e -> e.getMessage().contains("fair share")))
          .isTrue();
      KAFKA.produceKeyed(topicA, "sku-7", delete("sku-7"));
      awaitPending(client, a);
      assertAllPresent(client, a, sourceA);
      assertThat(deletions(client, b)).as("b untouched").isEqualTo("Counting");

      // The third namespace's next full build gets its share, and deletes are deltas there.
      fullBuild(client, c, sourceC);
      awaitDeletions(client, c, "Counting");
      assertThat(deletions(client, c)).isEqualTo("Counting");
      KAFKA.produceKeyed(topicC, "sku-9", delete("sku-9"));
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> !published(client, c).mightContain("sku-9"));
      assertAllPresent(client, c, sourceC.stream().filter(k -> !k.equals("sku-9")).toList());
      assertAllPresent(client, a, sourceA);
      assertAllPresent(client, b, KEYS);
    } finally {
      for (String other : List.of(b, c)) {
        client.namespaces().withName(other).delete();
      }
    }
  }
}
