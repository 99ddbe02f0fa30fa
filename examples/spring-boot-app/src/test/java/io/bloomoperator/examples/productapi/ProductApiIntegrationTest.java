package io.bloomoperator.examples.productapi;

import static io.bloomoperator.examples.productapi.ExampleManifests.applyFilter;
import static io.bloomoperator.examples.productapi.ExampleManifests.load;
import static io.bloomoperator.examples.productapi.ExampleManifests.only;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.LiveBloomFilter;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The product API end to end, deployed as deployment.yaml says: a real API server with the operator
 * in-process building the filter of bloomfilter.yaml, the service running as the manifest's
 * ServiceAccount with only the manifest's Role, configured by the manifest's ConfigMap (snapshot
 * cache directory included), probed over HTTP as the kubelet would and scraped as the chart's
 * reader PodMonitor would; then restarted with the API server unreachable, served from the snapshot
 * cache alone.
 */
@RealKubernetes(crdDirs = "crds")
class ProductApiIntegrationTest {

  private static final int CATALOGUE = 1_000;
  private static final int ABSENT_LOOKUPS = 300;
  private static final Duration READY = Duration.ofSeconds(60);
  private static final String PROMETHEUS_PATH = "/actuator/prometheus";

  /** Builds and publishes the filter the service follows. */
  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  @TempDir Path dir;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void answersAbsentFromTheFilterAsDeployedAndRestartsFromTheSnapshotCache(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    List<HasMetadata> manifests = load(admin, "deployment.yaml");
    // Everything the manifest holds is valid for the API server; the Deployment and Service can
    // only be dry-run (no kubelet here), the rest is really created.
    for (HasMetadata item : manifests) {
      boolean runnable = item instanceof Deployment || item.getKind().equals("Service");
      var resource = admin.resource(item).inNamespace(ns.name());
      HasMetadata created = runnable ? resource.dryRun().create() : resource.create();
      assertThat(created.getMetadata().getName()).isEqualTo(item.getMetadata().getName());
    }
    Deployment deployment = only(manifests, Deployment.class);
    var pod = deployment.getSpec().getTemplate().getSpec();
    var container = pod.getContainers().get(0);
    assertThat(container.getReadinessProbe().getHttpGet().getPath())
        .isEqualTo("/actuator/health/readiness");
    assertThat(pod.getVolumes()).anySatisfy(volume -> assertThat(volume.getEmptyDir()).isNotNull());
    String serviceAccount = only(manifests, ServiceAccount.class).getMetadata().getName();
    assertThat(pod.getServiceAccountName()).isEqualTo(serviceAccount);
    // Least privilege: read ConfigMaps, and the optional rule for reader reports (Leases).
    assertThat(only(manifests, Role.class).getRules())
        .extracting(rule -> rule.getApiGroups() + " " + rule.getResources() + " " + rule.getVerbs())
        .containsExactly(
            "[] [configmaps] [get, list, watch]",
            "[coordination.k8s.io] [leases] [get, create, update]");
    assertThat(only(manifests, RoleBinding.class).getSubjects().get(0).getName())
        .isEqualTo(serviceAccount);

    // The manifest's application.yaml, with the pod's paths mapped into this test's directory.
    Path cache = Files.createDirectory(dir.resolve("bloom-cache"));
    String podConfig =
        only(manifests, ConfigMap.class)
            .getData()
            .get("application.yaml")
            .replace("/var/cache/bloom", cache.toString());
    Path configDir = Files.createDirectory(dir.resolve("config"));
    Files.writeString(configDir.resolve("application.yaml"), podConfig);

    // As the pod would: the service account's identity, the pod's namespace.
    Config asPod = cluster.clientConfig();
    asPod.setImpersonateUsername("system:serviceaccount:" + ns.name() + ":" + serviceAccount);
    asPod.setNamespace(ns.name());
    try (KubernetesClient podClient = new KubernetesClientBuilder().withConfig(asPod).build()) {
      // The Role is all it has (otherwise running as it would prove nothing).
      assertThatThrownBy(() -> podClient.secrets().inNamespace(ns.name()).list())
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));

      try (ConfigurableApplicationContext app = start(podClient, configDir)) {
        int port = port(app);
        // Fail-closed and nothing published yet: not ready, no traffic.
        HttpResponse<String> notReady = get(port, "/actuator/health/readiness");
        assertThat(notReady.statusCode()).isEqualTo(503);
        assertThat(notReady.body()).contains("\"bloomFilters\"");
        assertThat(get(port, "/actuator/health/liveness").statusCode()).isEqualTo(200);

        applyFilter(admin, ns.name(), CATALOGUE);
        await()
            .atMost(READY)
            .until(() -> get(port, "/actuator/health/readiness").statusCode() == 200);

        CatalogueProductStore store = app.getBean(CatalogueProductStore.class);
        @SuppressWarnings("unchecked")
        LiveBloomFilter<Long> filter = app.getBean("productIds", LiveBloomFilter.class);
        assertThat(filter.currentManifest().orElseThrow().keyCount()).isEqualTo(CATALOGUE);

        // IDs never published: the filter answers; only its false positives reach the store.
        long storeBefore = store.lookups();
        List<Long> absent =
            LongStream.rangeClosed(CATALOGUE + 1, CATALOGUE + ABSENT_LOOKUPS).boxed().toList();
        long falsePositives = absent.stream().filter(filter::mightContain).count();
        String tags = "filter=\"product-ids\",namespace=\"" + ns.name() + "\"";
        double lookupsBefore = metric(port, "bloomreader_lookups_total{" + tags + "}");
        Map<String, Long> answeredBy = new TreeMap<>();
        for (long id : absent) {
          HttpResponse<String> response = get(port, "/products/" + id);
          assertThat(response.statusCode()).as("GET /products/%d", id).isEqualTo(404);
          answeredBy.merge(answeredBy(response), 1L, Long::sum);
        }
        assertThat(falsePositives).as("at fpp 0.01").isLessThanOrEqualTo(15);
        assertThat(answeredBy.get("filter")).isEqualTo(ABSENT_LOOKUPS - falsePositives);
        assertThat(answeredBy.getOrDefault("store", 0L)).isEqualTo(falsePositives);
        assertThat(store.lookups() - storeBefore).isEqualTo(falsePositives);

        // Published IDs: the store answers.
        HttpResponse<String> present = get(port, "/products/42");
        assertThat(present.statusCode()).isEqualTo(200);
        assertThat(answeredBy(present)).isEqualTo("store");
        assertThat(present.body()).contains("\"name\":\"Product 42\"");

        // What the chart's reader PodMonitor scrapes (its default port name and path, which the
        // Deployment's container and application.yaml serve): the reader metrics of exactly these
        // requests, the observed false-positive rate's inputs included.
        Map<?, ?> podMonitor = readerPodMonitorDefaults();
        assertThat(container.getPorts())
            .extracting(p -> p.getName())
            .contains((String) podMonitor.get("port"));
        assertThat(podMonitor.get("path")).isEqualTo(PROMETHEUS_PATH);
        assertThat(metric(port, "bloomreader_lookups_total{" + tags + "}") - lookupsBefore)
            .isEqualTo(ABSENT_LOOKUPS + 1);
        assertThat(
                metric(port, "bloomreader_outcomes_total{" + tags + ",result=\"false_positive\"}"))
            .isEqualTo(falsePositives);
        assertThat(
                metric(port, "bloomreader_outcomes_total{" + tags + ",result=\"true_positive\"}"))
            .isEqualTo(1);
        assertThat(metric(port, "bloomreader_fpp_expected{" + tags + "}")).isBetween(0.0, 0.02);
        assertThat(get(port, PROMETHEUS_PATH).body())
            .containsPattern("(?m)^bloomreader_fpp_observed\\{" + Pattern.quote(tags) + "\\} ");

        // The emptyDir got the verified snapshot.
        await().atMost(Duration.ofSeconds(10)).until(() -> hasFiles(cache));
      }
    }

    // A restarted container while the API server is unreachable: ready at once, from the cache.
    KubernetesClient unreachable =
        new KubernetesClientBuilder()
            .withConfig(
                new ConfigBuilder()
                    .withMasterUrl("https://127.0.0.1:1")
                    .withNamespace(ns.name())
                    .withRequestTimeout(1_000)
                    .build())
            .build();
    try (unreachable;
        ConfigurableApplicationContext app = start(unreachable, configDir)) {
      int port = port(app);
      assertThat(get(port, "/actuator/health/readiness").statusCode()).isEqualTo(200);
      assertThat(answeredBy(get(port, "/products/" + (CATALOGUE + 1))))
          .isIn("filter", "store"); // the filter's own answer, whichever it is
      HttpResponse<String> present = get(port, "/products/7");
      assertThat(present.statusCode()).isEqualTo(200);
    }
  }

  /** One sample of the scrape, by its exact name and labels as Prometheus' text format has them. */
  private double metric(int port, String series) throws IOException, InterruptedException {
    HttpResponse<String> scrape = get(port, PROMETHEUS_PATH);
    assertThat(scrape.statusCode()).isEqualTo(200);
    Matcher sample =
        Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape.body());
    assertThat(sample.find()).as("%s in the scrape", series).isTrue();
    return Double.parseDouble(sample.group(1));
  }

  /** metrics.readerPodMonitor of the chart's values.yaml: where it scrapes reader pods. */
  private static Map<?, ?> readerPodMonitorDefaults() throws IOException {
    Map<?, ?> values =
        Serialization.unmarshal(
            Files.readString(
                RealKubernetesExtension.repoRoot()
                    .resolve("deploy/helm/bloom-operator/values.yaml")),
            Map.class);
    return (Map<?, ?>) ((Map<?, ?>) values.get("metrics")).get("readerPodMonitor");
  }

  private static ConfigurableApplicationContext start(KubernetesClient client, Path configDir) {
    return new SpringApplicationBuilder(ProductApiApplication.class)
        .initializers(ctx -> ctx.getBeanFactory().registerSingleton("kubernetesClient", client))
        .run(
            "--server.port=0",
            "--server.address=127.0.0.1",
            "--spring.config.additional-location=file:" + configDir + "/");
  }

  private static int port(ConfigurableApplicationContext app) {
    return ((WebServerApplicationContext) app).getWebServer().getPort();
  }

  private static boolean hasFiles(Path directory) throws IOException {
    try (Stream<Path> files = Files.walk(directory)) {
      return files.anyMatch(Files::isRegularFile);
    }
  }

  private static String answeredBy(HttpResponse<String> response) {
    return response.headers().firstValue(ProductController.ANSWERED_BY).orElse("?");
  }

  private HttpResponse<String> get(int port, String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
