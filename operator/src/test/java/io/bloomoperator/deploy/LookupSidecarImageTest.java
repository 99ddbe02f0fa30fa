package io.bloomoperator.deploy;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.changeKeys;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The lookup sidecar's image ({@code sidecar-lib/lookup-sidecar}, built at its package phase), read
 * as a cluster reads it (pushed to a registry, pulled back, layers unpacked) and started from that
 * filesystem alone as the image's non-root user, next to a filter the operator publishes on the
 * real API server: it answers over HTTP from the image's own runtime and follows a new version. Tag
 * "image": the image-tests execution of operator/pom.xml.
 */
@Tag("image")
@RealKubernetes(crdDirs = "crds")
class LookupSidecarImageTest {

  static final String TARBALL = "sidecar-lib/lookup-sidecar/target/bloom-lookup-sidecar-image.tar";

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static Path work;
  private static OperatorImage image;
  private static JsonNode config;
  private static Path rootfs;

  @BeforeAll
  static void pullAndUnpack() throws Exception {
    work = RealKubernetesExtension.repoRoot().resolve("operator/target/lookup-image-test");
    Files.createDirectories(work);
    image =
        OperatorImage.push(
            work,
            TARBALL,
            "bloom-lookup-sidecar",
            "`mvn package` of sidecar-lib/lookup-sidecar builds it");
    image.validate();
    config = image.config();
    rootfs = image.unpack(work.resolve("rootfs"));
  }

  @AfterAll
  static void stopRegistry() {
    if (image != null) {
      image.close();
    }
  }

  @Test
  void imageIsANonRootScratchImageOfTheSidecar() throws Exception {
    assertThat(config.path("os").asText()).isEqualTo("linux");
    assertThat(config.path("architecture").asText()).isEqualTo("amd64");
    assertThat(config.path("created").asText()).isEqualTo("1970-01-01T00:00:00Z");
    JsonNode c = config.path("config");
    // Numeric, so the kubelet can check runAsNonRoot without the image's /etc/passwd.
    assertThat(c.path("User").asText()).isEqualTo("65532:65532");
    List<String> entrypoint = OperatorImage.entrypoint(config);
    assertThat(entrypoint.get(0)).isEqualTo("/opt/java/bin/java");
    assertThat(entrypoint).endsWith("io.bloomoperator.lookup.LookupSidecarMain");
    assertThat(c.path("ExposedPorts").has("8471/tcp")).isTrue();
    assertThat(c.path("ExposedPorts").has("8472/tcp")).isTrue();
    // No shell, no package manager: only the runtime, its C libraries and the jars.
    assertThat(rootfs.resolve("bin/sh")).doesNotExist();
    assertThat(rootfs.resolve("opt/java/bin/java")).isExecutable();
  }

  @Test
  void sidecarStartedFromTheUnpackedImageServesWhatTheOperatorPublishes(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    List<String> ids = IntStream.range(0, 5000).mapToObj(i -> "sku-" + i).toList();
    sourceConfigMap(client, ns.name(), "product-ids", "product-ids", ids);
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: product-ids}
        spec:
          falsePositiveRate: 0.01
          source:
            configMap: {name: product-ids, key: product-ids}
        """);
    awaitStatus(client, ns.name(), "product-ids", f -> ready(f, "True", Reasons.PUBLISHED));

    YAML.writeValue(
        rootfs.resolve("tmp/kubeconfig").toFile(),
        OperatorImage.selfContainedKubeconfig(cluster.kubeconfig()));
    int port = freePort();
    int healthPort = freePort();
    List<String> command = new ArrayList<>(OperatorImage.entrypoint(config));
    command.addAll(
        List.of(
            "--filter",
            ns.name() + "/product-ids:String",
            "--port",
            Integer.toString(port),
            "--health-port",
            Integer.toString(healthPort)));
    Path log = work.resolve("sidecar.log");
    ProcessBuilder pb =
        new ProcessBuilder(OperatorImage.inSandbox(rootfs, config, command))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    // The image's environment (JAVA_HOME) and what a pod would give: where the API server is,
    // and the downward API's identity.
    pb.environment().clear();
    pb.environment().putAll(OperatorImage.environment(config));
    pb.environment().put("KUBECONFIG", "/tmp/kubeconfig");
    pb.environment().put("POD_NAME", "image-test-pod");
    pb.environment().put("POD_NAMESPACE", ns.name());
    Process sidecar = pb.start();
    try {
      await()
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(250))
          .untilAsserted(
              () -> {
                assertThat(sidecar.isAlive()).as(Files.readString(log)).isTrue();
                assertThat(status(healthPort, "/readyz")).isEqualTo(200);
              });

      for (String id : List.of("sku-0", "sku-2500", "sku-4999")) {
        assertThat(contains(port, ns.name(), id).path("present").asBoolean()).as(id).isTrue();
      }
      int falsePositives = 0;
      for (int i = 0; i < 500; i++) {
        if (contains(port, ns.name(), "absent-" + i).path("present").asBoolean()) {
          falsePositives++;
        }
      }
      // 1 % asked for: 5 expected of 500; 25 would mean the sidecar is not using the filter.
      assertThat(falsePositives).isLessThan(25);
      long first = contains(port, ns.name(), "sku-0").path("version").asLong();

      // A new key in the source reaches the sidecar without a restart.
      List<String> more = new ArrayList<>(ids);
      more.add("sku-new-after-start");
      changeKeys(client, ns.name(), "product-ids", more);
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(250))
          .untilAsserted(
              () -> {
                JsonNode answer = contains(port, ns.name(), "sku-new-after-start");
                assertThat(answer.path("present").asBoolean()).isTrue();
                assertThat(answer.path("version").asLong()).isGreaterThan(first);
              });
      // The answers port is loopback only: the health port serves no answers.
      assertThat(status(healthPort, "/v1/filters/product-ids/contains?key=sku-0")).isEqualTo(404);
    } finally {
      sidecar.destroy();
      if (!sidecar.waitFor(20, TimeUnit.SECONDS)) {
        sidecar.destroyForcibly();
      }
    }
  }

  private static JsonNode contains(int port, String namespace, String key)
      throws IOException, InterruptedException {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:"
                            + port
                            + "/v1/filters/product-ids/contains?key="
                            + URLEncoder.encode(key, StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  private static int status(int port, String path) throws IOException, InterruptedException {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                  .timeout(Duration.ofSeconds(5))
                  .build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (java.net.ConnectException e) {
      return -1;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
