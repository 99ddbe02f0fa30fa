package io.bloomoperator.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.bloomoperator.watch.metrics.ReaderMetricNames;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A whole Spring Boot web application with the starter, Actuator and the Prometheus registry, on a
 * random port, against the real API server; everything is checked over HTTP as a kubelet's
 * readiness probe and a Prometheus server would see it.
 */
@RealKubernetes
class ActuatorOverHttpTest {

  private static final Duration READY = Duration.ofSeconds(20);
  private static final String SECRET = "SOURCE-CONTENT-MUST-NOT-LEAK";

  /** The application: nothing but auto-configuration. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {}

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void readinessFollowsTheFilterAndPrometheusScrapesItsMetrics(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "product-ids");
    try (KubernetesClient applicationClient = cluster.newClient();
        ConfigurableApplicationContext context =
            new SpringApplicationBuilder(App.class)
                .initializers(
                    ctx ->
                        ctx.getBeanFactory()
                            .registerSingleton("kubernetesClient", applicationClient))
                .properties(
                    "server.port=0",
                    "server.address=127.0.0.1",
                    "management.endpoints.web.exposure.include=health,prometheus,configprops",
                    "management.endpoint.health.show-details=always",
                    "management.endpoint.health.probes.enabled=true",
                    "management.endpoint.health.group.readiness.include=readinessState,bloomFilters",
                    "management.endpoint.health.group.readiness.show-details=always",
                    "bloom.filters.productIds.name=product-ids",
                    "bloom.filters.productIds.namespace=" + ns.name(),
                    "bloom.filters.productIds.fail-mode=fail-closed")
                .run()) {
      String base =
          "http://127.0.0.1:"
              + ((WebServerApplicationContext) context).getWebServer().getPort()
              + "/actuator";

      // The settings are a @ConfigurationProperties bean: listed (values masked by default).
      String configprops = get(base + "/configprops").body();
      assertThat(configprops)
          .contains("\"prefix\":\"bloom\"")
          .contains("\"productIds\"")
          .contains("\"enabled\"");

      // Fail-closed and nothing published yet: not ready, so no traffic.
      HttpResponse<String> notReady = get(base + "/health/readiness");
      assertThat(notReady.statusCode()).isEqualTo(503);
      assertThat(notReady.body()).contains("\"bloomFilters\"").contains("\"DOWN\"");

      Manifest v1 =
          publisher.publish(TestKeys.stringFilter(100, List.of("a", "b")), 2, 1).manifest();
      await().atMost(READY).until(() -> get(base + "/health/readiness").statusCode() == 200);
      HttpResponse<String> filterHealth = get(base + "/health/bloomFilters/productIds");
      assertThat(filterHealth.statusCode()).isEqualTo(200);
      assertThat(filterHealth.body())
          .contains("\"status\":\"UP\"")
          .contains("\"version\":1")
          .contains("\"keyCount\":2");

      String scrape = get(base + "/prometheus").body();
      for (String name : ReaderMetricNames.PROMETHEUS_NAMES.values()) {
        assertThat(scrape).as(name).containsPattern("(?m)^" + name + "\\{");
      }
      String tags = "filter=\"product-ids\",namespace=\"" + ns.name() + "\"";
      assertThat(scrape).contains("bloomreader_snapshot_version{" + tags + "} 1.0");
      assertThat(scrape).contains("bloomreader_fpp_expected{" + tags + "} " + v1.expectedFpp());

      // A hostile manifest (another filter's, with text in its name) is refused: the health
      // shows the reason, never the content; the filter keeps serving v1.
      publisher.writeManifestJson(v1.toJson().replace("\"product-ids\"", "\"" + SECRET + "\""));
      await()
          .atMost(READY)
          .until(
              () -> get(base + "/health/bloomFilters/productIds").body().contains("wrong_filter"));
      assertThat(get(base + "/health/bloomFilters/productIds").body())
          .doesNotContain(SECRET)
          .contains("\"status\":\"UP\"");
      assertThat(get(base + "/health").body()).doesNotContain(SECRET);
      assertThat(get(base + "/prometheus").body())
          .doesNotContain(SECRET)
          .contains("bloomreader_load_failures_total{" + tags + ",reason=\"wrong_filter\"} 1.0");

      publisher.publish(TestKeys.stringFilter(100, List.of("a", "b", "c")), 3, 2);
      await()
          .atMost(READY)
          .until(
              () ->
                  get(base + "/prometheus")
                      .body()
                      .contains("bloomreader_snapshot_version{" + tags + "} 2.0"));
      assertThat(get(base + "/prometheus").body())
          .contains("bloomreader_swaps_total{" + tags + "} 2.0");
    }
  }

  private HttpResponse<String> get(String url) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
