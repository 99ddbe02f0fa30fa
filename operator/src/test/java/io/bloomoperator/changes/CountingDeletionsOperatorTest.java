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
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.KafkaServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * spec.changes.deletions: Counting end to end: a real API server, the operator in-process, a real
 * Kafka broker and a real reader (sidecar-lib). A delete event clears the key's bits in a delta,
 * without a full build, and every other key stays present; deletes of IDs never counted whose bits
 * are all set (the reviewer's attack, and a tombstone of an ID the source had already dropped) and
 * a delete on the wrong partition change nothing; an add on the wrong partition stops counting; a
 * restarted operator has no shadow and leaves deletes to the next full build (pending, said in the
 * status) without losing a key; the full build counts a new shadow and deletes are published by
 * deltas again.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(150)
class CountingDeletionsOperatorTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.builder()
              .http(HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32", null)))
              .build());

  private static final KafkaServer KAFKA = KafkaServer.shared();

  /** Few bits per key, so deleted keys share bits with live ones. */
  private static final List<String> KEYS =
      IntStream.range(0, 300).mapToObj(i -> "sku-" + i).toList();

  private static String filter(String topic, List<String> keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: products}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 300
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
        .formatted(String.join(", ", keys), KAFKA.bootstrap(), topic);
  }

  static String delete(String key) {
    return "{\"id\":\"" + key + "\",\"op\":\"delete\"}";
  }

  static com.google.common.hash.BloomFilter<CharSequence> published(
      KubernetesClient client, String ns) throws Exception {
    Manifest manifest = manifest(client, ns, "products");
    return com.google.common.hash.BloomFilter.readFrom(
        new ByteArrayInputStream(payload(client, ns, manifest)),
        Funnels.stringFunnel(StandardCharsets.UTF_8));
  }

  static String builtAt(KubernetesClient client, String ns) {
    return client
        .configMaps()
        .inNamespace(ns)
        .withName(SnapshotNames.manifestName("products"))
        .get()
        .getMetadata()
        .getAnnotations()
        .get(SnapshotConfigMaps.ANNOTATION_BUILT_AT);
  }

  static StreamStatus stream(KubernetesClient client, String ns) {
    BloomFilter f = client.resources(BloomFilter.class).inNamespace(ns).withName("products").get();
    return f.getStatus() == null ? null : f.getStatus().getStream();
  }

  private static void awaitCounting(KubernetesClient client, String ns) {
    awaitStatus(
        client,
        ns,
        "products",
        f ->
            ready(f, "True", "Published")
                && f.getStatus().getStream() != null
                && "Counting".equals(f.getStatus().getStream().getDeletions()));
  }

  /**
   * A new topic of {@code partitions} partitions and the filter of {@link #KEYS} over it, once its
   * first full build counts deletes; returns the topic.
   */
  private static String countingFilter(KubernetesClient client, String ns, int partitions) {
    String topic = "counting-" + UUID.randomUUID();
    KAFKA.createTopic(topic, partitions, Map.of());
    apply(client, ns, filter(topic, KEYS));
    awaitCounting(client, ns);
    return topic;
  }

  @Test
  void aDeleteIsServedAbsentWithoutAFullBuildAndEveryOtherKeyStaysPresent(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String topic = countingFilter(client, ns.name(), 2);
    String builtAt = builtAt(client, ns.name());
    List<String> deleted = List.of("sku-7", "sku-150", "sku-299");
    List<String> live = KEYS.stream().filter(k -> !deleted.contains(k)).toList();

    try (LiveBloomFilter<String> reader =
        BloomFilterWatcher.watch(client, ns.name(), "products", LiveKeyType.STRING)) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> KEYS.stream().allMatch(reader::mightContain));
      long produced = System.nanoTime();
      deleted.forEach(key -> KAFKA.produceKeyed(topic, key, delete(key)));
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> deleted.stream().noneMatch(reader::mightContain));
      System.out.printf(
          "counting: 3 deletes produced -> absent in the reader in %d ms%n",
          (System.nanoTime() - produced) / 1_000_000);
      assertThat(live.stream().filter(k -> !reader.mightContain(k)))
          .as("live keys the reader lost")
          .isEmpty();
    }
    com.google.common.hash.BloomFilter<CharSequence> filter = published(client, ns.name());
    assertThat(live.stream().filter(k -> !filter.mightContain(k))).isEmpty();
    assertThat(deleted.stream().filter(filter::mightContain)).isEmpty();
    assertThat(builtAt(client, ns.name())).as("no full build").isEqualTo(builtAt);
    assertThat(manifest(client, ns.name(), "products").chained()).as("a delta").isTrue();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> Long.valueOf(3).equals(stream(client, ns.name()).getDeletionsApplied()));
    assertThat(stream(client, ns.name()).getDeletionsPending()).isIn(null, 0L);
  }

  @Test
  void deletesOfIdsNeverCountedAndDeletesOnTheWrongPartitionKeepEveryLiveKey(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String topic = countingFilter(client, ns.name(), 2);
    String builtAt = builtAt(client, ns.name());
    com.google.common.hash.BloomFilter<CharSequence> before = published(client, ns.name());
    // The attack: IDs never in the source that the published filter answers present (every bit
    // set, so every counter above 0), searched for as anyone who reads the filter can.
    List<String> forged =
        IntStream.range(0, 1_000_000)
            .mapToObj(i -> "forged-" + i)
            .filter(before::mightContain)
            .limit(40)
            .toList();
    assertThat(forged).hasSize(40);
    String dropped =
        IntStream.range(0, 1_000_000)
            .mapToObj(i -> "sku-dropped-" + i)
            .filter(before::mightContain)
            .findFirst()
            .orElseThrow(); // an ID the source no longer has (a compacted topic's tombstone, a lag)

    try (LiveBloomFilter<String> reader =
        BloomFilterWatcher.watch(client, ns.name(), "products", LiveKeyType.STRING)) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> KEYS.stream().allMatch(reader::mightContain));
      forged.forEach(id -> KAFKA.produceKeyed(topic, id, delete(id)));
      KAFKA.produceKeyed(topic, dropped, delete(dropped));
      // A delete of a live ID on the partition the default partitioner does not choose for it.
      int home =
          org.apache.kafka.common.utils.Utils.toPositive(
                  org.apache.kafka.common.utils.Utils.murmur2(
                      "sku-3".getBytes(StandardCharsets.UTF_8)))
              % 2;
      KAFKA.produce(topic, 1 - home, "sku-3", delete("sku-3"));
      // And one real delete, so the deltas are seen to apply deletes at all.
      KAFKA.produceKeyed(topic, "sku-7", delete("sku-7"));
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> !reader.mightContain("sku-7"));
      List<String> live = KEYS.stream().filter(k -> !k.equals("sku-7")).toList();
      assertThat(live.stream().filter(k -> !reader.mightContain(k)))
          .as("live keys the reader lost")
          .isEmpty();
    }
    // Every delete read: the real one applied, the 40 forged, the dropped ID's and the one on the
    // wrong partition waiting for the next full build.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                Long.valueOf(1).equals(stream(client, ns.name()).getDeletionsApplied())
                    && Long.valueOf(forged.size() + 2L)
                        .equals(stream(client, ns.name()).getDeletionsPending()));
    assertThat(stream(client, ns.name()).getDeletions()).isEqualTo("Counting");
    com.google.common.hash.BloomFilter<CharSequence> after = published(client, ns.name());
    assertThat(KEYS.stream().filter(k -> !k.equals("sku-7")).filter(k -> !after.mightContain(k)))
        .isEmpty();
    assertThat(builtAt(client, ns.name())).as("no full build").isEqualTo(builtAt);

    // An add on the wrong partition: this key's deletes could no longer be ordered after it.
    KAFKA.produce(topic, List.of("{\"id\":\"sku-unkeyed\"}"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              String deletions = stream(client, ns.name()).getDeletions();
              return deletions != null && deletions.contains("not keyed by their ID");
            });
    assertThat(published(client, ns.name()).mightContain("sku-unkeyed")).isTrue();
  }

  @Test
  void afterARestartDeletesWaitForTheNextFullBuildWhichCountsAgain(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String topic = countingFilter(client, ns.name(), 1);
    String builtAt = builtAt(client, ns.name());

    // The shadow lived in the stopped process: the new one cannot show a delete is applied once.
    OPERATOR.stop();
    OPERATOR.start();
    KAFKA.produceKeyed(topic, "sku-7", delete("sku-7"));
    KAFKA.produceKeyed(topic, "sku-new", "{\"id\":\"sku-new\"}");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              StreamStatus s = stream(client, ns.name());
              return s != null
                  && s.getDeletionsPending() != null
                  && s.getDeletionsPending() >= 1
                  && s.getDeletions() != null
                  && s.getDeletions().startsWith("Rebuild");
            });
    com.google.common.hash.BloomFilter<CharSequence> waiting = published(client, ns.name());
    assertThat(KEYS.stream().filter(k -> !waiting.mightContain(k))).as("keys lost").isEmpty();
    assertThat(waiting.mightContain("sku-new")).isTrue();
    assertThat(builtAt(client, ns.name())).isEqualTo(builtAt);

    // The source drops sku-7 too; the full build that follows counts a new shadow.
    List<String> source =
        KEYS.stream().filter(k -> !k.equals("sku-7")).collect(Collectors.toList());
    source.add("sku-new");
    client
        .resources(BloomFilter.class)
        .inNamespace(ns.name())
        .withName("products")
        .edit(
            f -> {
              f.getSpec().getSource().setInline(source);
              return f;
            });
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                !builtAt.equals(builtAt(client, ns.name()))
                    && "Counting".equals(stream(client, ns.name()).getDeletions()));
    KAFKA.produceKeyed(topic, "sku-150", delete("sku-150"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !published(client, ns.name()).mightContain("sku-150"));
    com.google.common.hash.BloomFilter<CharSequence> after = published(client, ns.name());
    assertThat(
            source.stream().filter(k -> !k.equals("sku-150")).filter(k -> !after.mightContain(k)))
        .as("keys lost")
        .isEmpty();
  }
}
