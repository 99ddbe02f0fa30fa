package io.bloomoperator.runtime;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.metrics.Metric;
import io.bloomoperator.metrics.MetricCatalogue;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.testing.servers.KafkaServer;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The operator as deployed (its own registry behind {@link HealthServer}) builds, publishes and
 * fails on a real API server; a scrape of /metrics over HTTP shows every metric of {@link
 * MetricCatalogue}, with the values and tags those reconciles must have left, no source content,
 * and no series of a deleted filter.
 */
@RealKubernetes(crdDirs = "crds")
class OperatorMetricsScrapeTest {

  private static final HttpClient HTTP = HttpClient.newHttpClient();

  /** In the source only: must never appear in a scrape. */
  private static final String SOURCE_MARKER = "sourcecontent-7f3a";

  @Test
  void everyCataloguedMetricIsScrapedWithBoundedTags(KubernetesClient client, TestNamespace ns)
      throws Exception {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    Operator operator =
        OperatorMain.start(
            client,
            // The egress policy admits 127.0.0.1 for the test's Kafka broker (change streams).
            OperatorSettings.builder()
                .http(
                    HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32", null)))
                .build(),
            registry,
            new RuntimeOptions(0, false, null, "metrics-test", false, Set.of(ns.name())));
    try (HealthServer health = HealthServer.start(0, operator, registry, () -> false)) {
      // Published: a ConfigMap source, so it has a refresh interval.
      sourceConfigMap(
          client, ns.name(), "ids", "ids.txt", List.of(SOURCE_MARKER + "-1", SOURCE_MARKER + "-2"));
      filter(client, ns, "good", "configMap: {name: ids, key: ids.txt}");
      // A source read error: the ConfigMap does not exist.
      filter(client, ns, "missing", "configMap: {name: nowhere, key: ids.txt}");
      // A publish failure: its manifest's name is taken by someone else's ConfigMap.
      client
          .configMaps()
          .inNamespace(ns.name())
          .resource(
              new ConfigMapBuilder()
                  .withNewMetadata()
                  .withName(SnapshotNames.manifestName("taken"))
                  .endMetadata()
                  .withData(Map.of("k", SOURCE_MARKER))
                  .build())
          .create();
      filter(client, ns, "taken", "inline: [" + SOURCE_MARKER + "-3]");
      // A change stream that publishes, and one the operator refuses (a topic of huge batches).
      KafkaServer kafka = KafkaServer.shared();
      String topic = "ids-" + ns.name();
      kafka.createTopic(topic, 1, Map.of());
      kafka.produce(topic, List.of(SOURCE_MARKER + "-streamed"));
      streamed(client, ns, "streamed", kafka, topic);
      String huge = "huge-" + ns.name();
      kafka.createTopic(huge, 1, Map.of("max.message.bytes", Integer.toString(64 << 20)));
      streamed(client, ns, "refused", kafka, huge);

      awaitStatus(client, ns.name(), "good", f -> ready(f, "True", Reasons.PUBLISHED));
      awaitStatus(client, ns.name(), "missing", f -> ready(f, "False", Reasons.SOURCE_NOT_FOUND));
      awaitStatus(client, ns.name(), "taken", f -> ready(f, "False", Reasons.NAME_CONFLICT));
      awaitStatus(
          client,
          ns.name(),
          "streamed",
          f ->
              f.getStatus() != null
                  && f.getStatus().getStream() != null
                  && f.getStatus().getStream().getLastDeltaAt() != null);
      awaitStatus(
          client,
          ns.name(),
          "refused",
          f ->
              f.getStatus() != null
                  && f.getStatus().getStream() != null
                  && f.getStatus().getStream().getMessage() != null);

      // One reader reports serving the published version of "good" (docs/reader-protocol.md).
      long goodVersion =
          client
              .resources(BloomFilter.class)
              .inNamespace(ns.name())
              .withName("good")
              .get()
              .getStatus()
              .getVersion();
      var pod = ReaderPods.pod(client, ns.name(), "app");
      ReaderPods.create(
          client,
          ReaderPods.report(ns.name(), "app", pod.getMetadata().getUid(), "good", goodVersion));

      String good = filterTags(ns, "good");
      String scrape =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () -> scrape(health),
                  s ->
                      s.contains(
                              "bloomoperator_filter_ready{" + filterTags(ns, "missing") + "} 0.0")
                          && s.contains("bloomoperator_filter_readers_current{" + good + "} 1.0"));

      long streamedVersion =
          client
              .resources(BloomFilter.class)
              .inNamespace(ns.name())
              .withName("streamed")
              .get()
              .getStatus()
              .getVersion();
      for (Metric metric : MetricCatalogue.all()) {
        for (String series : metric.seriesNames()) {
          assertThat(scrape)
              .as("series %s of %s", series, metric.name())
              .containsPattern("(?m)^" + series + "[{ ]");
        }
      }
      assertThat(scrape)
          .contains("bloomoperator_filter_stream_lag{" + filterTags(ns, "streamed") + "} 0.0")
          .containsPattern("(?m)^bloomoperator_stream_events_total\\{kind=\"add\"} [1-9]")
          .containsPattern("(?m)^bloomoperator_stream_failures_total\\{kind=\"refused\"} [1-9]")
          .containsPattern("(?m)^bloomoperator_stream_publish_delay_seconds_count [1-9]")
          .contains("bloomoperator_filter_ready{" + good + "} 1.0")
          .contains("bloomoperator_filter_ready{" + filterTags(ns, "taken") + "} 0.0")
          .contains("bloomoperator_filter_snapshot_version{" + good + "} 1.0")
          .contains("bloomoperator_filter_readers{" + good + "} 1.0")
          .contains("bloomoperator_filter_readers_stale{" + good + "} 0.0")
          .contains("bloomoperator_filter_refresh_interval_seconds{" + good + "} 60.0")
          .contains("bloomoperator_source_errors_total{reason=\"SourceNotFound\"}")
          .contains("bloomoperator_publish_failures_total{reason=\"NameConflict\"}")
          .contains("bloomoperator_failures_total{reason=\"NameConflict\"}")
          .containsPattern("(?m)^bloomoperator_build_keys_sum [1-9]")
          .containsPattern("(?m)^bloomoperator_snapshot_bytes_sum [1-9]")
          // good, refused (a full build each) and every version of streamed (its build and the
          // delta of the one event): the others never published.
          .containsPattern("(?m)^bloomoperator_published_total " + (2 + streamedVersion) + "\\.0$")
          .doesNotContain(SOURCE_MARKER);
      assertThat(scrape)
          .as("inline keys have no refresh interval")
          .doesNotContain(
              "bloomoperator_filter_refresh_interval_seconds{" + filterTags(ns, "taken"));
      assertThat(value(scrape, "bloomoperator_filter_verified_timestamp_seconds{" + good + "}"))
          .isCloseTo(
              System.currentTimeMillis() / 1000.0, org.assertj.core.data.Offset.offset(60.0));
      assertThat(value(scrape, "bloomoperator_filter_snapshot_timestamp_seconds{" + good + "}"))
          .isCloseTo(
              System.currentTimeMillis() / 1000.0, org.assertj.core.data.Offset.offset(60.0));

      // Deleting a filter removes its series: their number follows the number of filters.
      client.resources(BloomFilter.class).inNamespace(ns.name()).withName("good").delete();
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(scrape(health)).doesNotContain(good));
      assertThat(scrape(health)).contains(filterTags(ns, "missing"));
    } finally {
      operator.stop();
    }
  }

  private static String filterTags(TestNamespace ns, String name) {
    // Prometheus text lists labels by name.
    return "filter=\"" + name + "\",namespace=\"" + ns.name() + "\"";
  }

  private static void streamed(
      KubernetesClient client, TestNamespace ns, String name, KafkaServer kafka, String topic) {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source: {inline: [a]}
          changes:
            publishEvery: 1s
            kafka: {bootstrapServers: ["%s"], topic: %s}
        """
            .formatted(name, kafka.bootstrap(), topic));
  }

  private static void filter(
      KubernetesClient client, TestNamespace ns, String name, String source) {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source: {%s}
        """
            .formatted(name, source));
  }

  private static double value(String scrape, String series) {
    return scrape
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElseThrow(() -> new AssertionError(series + " not in the scrape"));
  }

  private static String scrape(HealthServer health) throws Exception {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + health.port() + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }
}
