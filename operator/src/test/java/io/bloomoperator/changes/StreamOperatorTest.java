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
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * spec.changes.kafka end to end: a real API server, the operator in-process, a real Kafka broker
 * and a real reader (sidecar-lib). A key produced to the topic is published as a delta and served
 * without a full build; a restarted operator resumes from the published position; a position the
 * topic no longer has makes a full build; a topic the operator refuses leaves the filter serving.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(120)
class StreamOperatorTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.builder()
              .http(HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32", null)))
              .build());

  private static final KafkaServer KAFKA = KafkaServer.shared();

  private static String filter(String topic) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: products}
        spec:
          falsePositiveRate: 0.001
          expectedInsertions: 20000
          source:
            inline: [sku-a, sku-b]
          changes:
            publishEvery: 1s
            kafka:
              bootstrapServers: ["%s"]
              topic: %s
        """
        .formatted(KAFKA.bootstrap(), topic);
  }

  private static com.google.common.hash.BloomFilter<CharSequence> published(
      KubernetesClient client, String ns) throws Exception {
    Manifest manifest = manifest(client, ns, "products");
    return com.google.common.hash.BloomFilter.readFrom(
        new ByteArrayInputStream(payload(client, ns, manifest)),
        Funnels.stringFunnel(StandardCharsets.UTF_8));
  }

  private static Map<String, String> annotations(KubernetesClient client, String ns) {
    ConfigMap cm =
        client.configMaps().inNamespace(ns).withName(SnapshotNames.manifestName("products")).get();
    return cm.getMetadata().getAnnotations();
  }

  @Test
  void producedKeysAreServedWithinSecondsWithoutAFullBuildAndAcrossARestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String topic = "products-" + UUID.randomUUID();
    KAFKA.createTopic(topic, 2, Map.of());
    // Produced before the filter exists, within the overlap of its first build's scan.
    KAFKA.produce(topic, List.of("sku-early"));
    apply(client, ns.name(), filter(topic));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    String builtAt = annotations(client, ns.name()).get(SnapshotConfigMaps.ANNOTATION_BUILT_AT);
    assertThat(annotations(client, ns.name()))
        .containsKey(SnapshotConfigMaps.ANNOTATION_STREAM_POSITION);

    try (LiveBloomFilter<String> reader =
        BloomFilterWatcher.watch(client, ns.name(), "products", LiveKeyType.STRING)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> reader.mightContain("sku-a"));
      List<String> fresh = IntStream.range(0, 200).mapToObj(i -> "sku-fresh-" + i).toList();
      long produced = System.nanoTime();
      KAFKA.produce(topic, fresh);
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> fresh.stream().allMatch(reader::mightContain));
      System.out.printf(
          "stream: 200 keys produced -> served by the reader in %d ms%n",
          (System.nanoTime() - produced) / 1_000_000);
      assertThat(reader.mightContain("sku-early")).isTrue();
    }

    com.google.common.hash.BloomFilter<CharSequence> filter = published(client, ns.name());
    assertThat(filter.mightContain("sku-a")).isTrue();
    assertThat(filter.mightContain("sku-fresh-199")).isTrue();
    Map<String, String> after = annotations(client, ns.name());
    // No full build: the build record keeps the full build's time; only the position moved.
    assertThat(after.get(SnapshotConfigMaps.ANNOTATION_BUILT_AT)).isEqualTo(builtAt);
    assertThat(
            StreamPosition.parse(after.get(SnapshotConfigMaps.ANNOTATION_STREAM_POSITION))
                .eventsSince(StreamPosition.start()))
        .isEqualTo(201);
    Manifest manifest = manifest(client, ns.name(), "products");
    assertThat(manifest.version()).isGreaterThan(1);
    assertThat(manifest.chained()).as("published as deltas").isTrue();
    BloomFilter resource =
        client.resources(BloomFilter.class).inNamespace(ns.name()).withName("products").get();
    assertThat(resource.getStatus().getStream().getPosition())
        .isEqualTo(after.get(SnapshotConfigMaps.ANNOTATION_STREAM_POSITION));
    assertThat(resource.getStatus().getStream().getMessage()).isNull();

    // Events produced while no operator runs are published by the next one, from the position
    // the published version records.
    OPERATOR.stop();
    KAFKA.produce(topic, List.of("sku-while-down-1", "sku-while-down-2"));
    OPERATOR.start();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> published(client, ns.name()).mightContain("sku-while-down-2"));
    assertThat(published(client, ns.name()).mightContain("sku-while-down-1")).isTrue();
    assertThat(annotations(client, ns.name()).get(SnapshotConfigMaps.ANNOTATION_BUILT_AT))
        .isEqualTo(builtAt);
  }

  @Test
  void aManifestWhoseStatusWriteTheKillPreventedIsStillOursAfterTheRestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    // Found by StreamKillFaultTest: an operator SIGKILLed after a stream publish's manifest write
    // and before the status write recording it took that manifest for a foreign one when it
    // started again, ran a full build and restarted the stream at that build's position: every
    // streamed key older than the overlap that the source did not have was gone.
    String topic = "products-" + UUID.randomUUID();
    KAFKA.createTopic(topic, 2, Map.of());
    apply(
        client,
        ns.name(),
        filter(topic).replace("publishEvery: 1s", "publishEvery: 1s\n    overlap: 1s"));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    String builtAt = annotations(client, ns.name()).get(SnapshotConfigMaps.ANNOTATION_BUILT_AT);
    List<String> streamed = IntStream.range(0, 50).mapToObj(i -> "sku-streamed-" + i).toList();
    KAFKA.produce(topic, streamed);
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> streamed.stream().allMatch(published(client, ns.name())::mightContain));
    long version = manifest(client, ns.name(), "products").version();

    // The kill's effect: the manifest of the last publish is there, the status still records the
    // version before it (another digest, a lower version).
    OPERATOR.stop();
    client
        .resources(BloomFilter.class)
        .inNamespace(ns.name())
        .withName("products")
        .editStatus(
            f -> {
              f.getStatus().setVersion(version - 1);
              f.getStatus().setManifestDigest("0".repeat(64));
              return f;
            });
    OPERATOR.start();
    KAFKA.produce(topic, List.of("sku-after-restart"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> published(client, ns.name()).mightContain("sku-after-restart"));

    com.google.common.hash.BloomFilter<CharSequence> after = published(client, ns.name());
    assertThat(streamed.stream().filter(k -> !after.mightContain(k)))
        .as("streamed keys lost")
        .isEmpty();
    assertThat(annotations(client, ns.name()).get(SnapshotConfigMaps.ANNOTATION_BUILT_AT))
        .as("no full build: the manifest is the operator's own")
        .isEqualTo(builtAt);
    List<Event> notOurs =
        client.v1().events().inNamespace(ns.name()).list().getItems().stream()
            .filter(e -> "ManifestNotOurs".equals(e.getReason()))
            .toList();
    assertThat(notOurs).isEmpty();
  }

  @Test
  void aPositionTheTopicNoLongerHasMakesAFullBuild(KubernetesClient client, TestNamespace ns)
      throws Exception {
    String topic = "products-" + UUID.randomUUID();
    KAFKA.createTopic(topic, 1, Map.of());
    KAFKA.produce(topic, List.of("sku-1", "sku-2"));
    apply(client, ns.name(), filter(topic));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> published(client, ns.name()).mightContain("sku-2"));
    String builtAt = annotations(client, ns.name()).get(SnapshotConfigMaps.ANNOTATION_BUILT_AT);

    // Retention passes the published position (and the operator does not read in between).
    OPERATOR.stop();
    KAFKA.produce(topic, List.of("sku-3", "sku-4"));
    try (Admin admin = admin()) {
      admin
          .deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(3)))
          .all()
          .get();
    }
    OPERATOR.start();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                !builtAt.equals(
                    annotations(client, ns.name()).get(SnapshotConfigMaps.ANNOTATION_BUILT_AT)));
    List<Event> events = client.v1().events().inNamespace(ns.name()).list().getItems();
    assertThat(events)
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("ChangeStreamFailed");
              assertThat(e.getMessage()).contains("retention");
            });
    // The full build resumed the stream from a position the topic has; sku-4 is still in it.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> published(client, ns.name()).mightContain("sku-4"));
  }

  @Test
  void aTopicTheOperatorRefusesLeavesTheFilterServingAndSaysWhy(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String topic = "huge-" + UUID.randomUUID();
    KAFKA.createTopic(topic, 1, Map.of("max.message.bytes", Integer.toString(64 * 1024 * 1024)));
    apply(client, ns.name(), filter(topic));
    BloomFilter filter =
        awaitStatus(
            client,
            ns.name(),
            "products",
            f ->
                ready(f, "True", "Published")
                    && f.getStatus().getStream() != null
                    && f.getStatus().getStream().getMessage() != null);
    assertThat(filter.getStatus().getStream().getMessage())
        .contains("BLOOM_STREAM_MAX_BATCH_BYTES");
    assertThat(published(client, ns.name()).mightContain("sku-a")).isTrue();
  }

  private static Admin admin() {
    java.util.Properties p = new java.util.Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, KAFKA.bootstrap());
    return Admin.create(p);
  }
}
