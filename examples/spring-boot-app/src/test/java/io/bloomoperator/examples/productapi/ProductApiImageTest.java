package io.bloomoperator.examples.productapi;

import static io.bloomoperator.examples.productapi.ExampleManifests.applyFilter;
import static io.bloomoperator.examples.productapi.ExampleManifests.load;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.deploy.OperatorImage;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The product API's image (built at package, README.md), read as a cluster reads it (pushed to a
 * registry, pulled back, layers unpacked) and started from that filesystem alone as the image's
 * non-root user, configured as deployment.yaml configures the pod (its ConfigMap's application.yaml
 * at /etc/product-api, SPRING_CONFIG_ADDITIONAL_LOCATION, the snapshot cache directory): it becomes
 * ready once the operator publishes bloomfilter.yaml's filter, answers absent IDs from the filter
 * and present ones from the store. Tag "image": the image-tests execution of this module's pom,
 * after package.
 */
@Tag("image")
@RealKubernetes(crdDirs = "crds")
class ProductApiImageTest {

  private static final String TARBALL =
      "examples/spring-boot-app/target/product-api-example-image.tar";
  private static final int CATALOGUE = 1_000;
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Test
  void theServiceStartedFromItsImageServesWhatTheOperatorPublishes(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    Path work = Files.createDirectories(ExampleManifests.EXAMPLE.resolve("target/image-test"));
    try (OperatorImage image =
        OperatorImage.push(
            work,
            TARBALL,
            "product-api-example",
            "`mvn package` of examples/spring-boot-app builds it")) {
      image.validate();
      JsonNode config = image.config();
      JsonNode container = config.path("config");
      assertThat(container.path("User").asText()).isEqualTo("65532:65532");
      List<String> entrypoint = OperatorImage.entrypoint(config);
      assertThat(entrypoint.get(0)).isEqualTo("/opt/java/bin/java");
      assertThat(entrypoint).endsWith(ProductApiApplication.class.getName());
      Path rootfs = image.unpack(work.resolve("rootfs"));
      // No shell, no package manager: the runtime, its C libraries and the service's jars.
      assertThat(rootfs.resolve("bin/sh")).doesNotExist();

      // What the pod gets from deployment.yaml: the ConfigMap's application.yaml at
      // /etc/product-api, an emptyDir at /var/cache/bloom; and a kubeconfig for its namespace.
      List<HasMetadata> manifests = load(admin, "deployment.yaml");
      ConfigMap podConfig =
          manifests.stream()
              .filter(ConfigMap.class::isInstance)
              .map(ConfigMap.class::cast)
              .findFirst()
              .orElseThrow();
      Path etc = Files.createDirectories(rootfs.resolve("etc/product-api"));
      Files.writeString(
          etc.resolve("application.yaml"), podConfig.getData().get("application.yaml"));
      Path cache = Files.createDirectories(rootfs.resolve("var/cache/bloom"));
      ObjectNode kubeconfig =
          (ObjectNode) OperatorImage.selfContainedKubeconfig(cluster.kubeconfig());
      for (JsonNode context : kubeconfig.path("contexts")) {
        ((ObjectNode) context.path("context")).put("namespace", ns.name());
      }
      YAML.writeValue(rootfs.resolve("tmp/kubeconfig").toFile(), kubeconfig);

      int port = freePort();
      Path log = work.resolve("product-api.log");
      ProcessBuilder pb =
          new ProcessBuilder(OperatorImage.inSandbox(rootfs, config, entrypoint))
              .redirectErrorStream(true)
              .redirectOutput(log.toFile());
      pb.environment().clear();
      pb.environment().putAll(OperatorImage.environment(config));
      pb.environment().put("SPRING_CONFIG_ADDITIONAL_LOCATION", "optional:file:/etc/product-api/");
      pb.environment().put("SERVER_PORT", Integer.toString(port));
      pb.environment().put("KUBECONFIG", "/tmp/kubeconfig");
      pb.environment().put("POD_NAME", "image-test-pod");
      Process service = pb.start();
      try {
        // Live, but not ready before a filter is published (fail-closed).
        await()
            .atMost(Duration.ofSeconds(120))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () -> {
                  assertThat(service.isAlive()).as(Files.readString(log)).isTrue();
                  assertThat(status(port, "/actuator/health/liveness")).isEqualTo(200);
                });
        assertThat(status(port, "/actuator/health/readiness")).isEqualTo(503);

        applyFilter(admin, ns.name(), CATALOGUE);
        await()
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(500))
            .untilAsserted(
                () -> {
                  assertThat(service.isAlive()).as(Files.readString(log)).isTrue();
                  assertThat(status(port, "/actuator/health/readiness")).isEqualTo(200);
                });

        HttpResponse<String> present = get(port, "/products/42");
        assertThat(present.statusCode()).isEqualTo(200);
        assertThat(answeredBy(present)).isEqualTo("store");
        int byFilter = 0;
        for (long id = CATALOGUE + 1; id <= CATALOGUE + 200; id++) {
          HttpResponse<String> absent = get(port, "/products/" + id);
          assertThat(absent.statusCode()).isEqualTo(404);
          if (answeredBy(absent).equals("filter")) {
            byFilter++;
          }
        }
        // 1 % asked for: about 2 of 200 reach the store; far more would mean no filter answered.
        assertThat(byFilter).isGreaterThanOrEqualTo(190);
        // The emptyDir got the verified snapshot, written as the image's user.
        await().atMost(Duration.ofSeconds(10)).until(() -> hasFiles(cache));
      } finally {
        service.destroy();
        if (!service.waitFor(20, TimeUnit.SECONDS)) {
          service.destroyForcibly();
        }
      }
    }
  }

  private static boolean hasFiles(Path directory) throws IOException {
    try (var files = Files.walk(directory)) {
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

  private int status(int port, String path) throws IOException, InterruptedException {
    try {
      return get(port, path).statusCode();
    } catch (ConnectException e) {
      return -1;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
