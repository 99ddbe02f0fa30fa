package io.bloomoperator.deploy;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The operator image that {@code mvn verify} builds (docs/image.md), read the way a cluster reads
 * it: pushed to a registry and pulled back with crane, its layers flattened and unpacked, and the
 * operator started from that filesystem alone (its Java runtime, its C libraries, its jars) as the
 * image's non-root user against the real API server. Runs after package (tag "image", the
 * image-tests execution of operator/pom.xml); never skipped except by an explicit -DskipImage.
 */
@Tag("image")
@RealKubernetes(crdDirs = "crds")
class OperatorImageTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /**
   * What jdeps finds in the jar but the runtime leaves out on purpose (operator/pom.xml,
   * image.jdkModules): code paths the operator never takes.
   */
  private static final Set<String> LEFT_OUT = Set.of("java.desktop", "java.compiler");

  private static Path work;
  private static OperatorImage image;
  private static JsonNode config;
  private static Path rootfs;

  @BeforeAll
  static void pullAndUnpack() throws Exception {
    work = RealKubernetesExtension.repoRoot().resolve("operator/target/image-test");
    Files.createDirectories(work);
    image = OperatorImage.push(work);
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
  void imageIsANonRootScratchImageOfTheOperator() throws Exception {
    JsonNode manifest = image.manifest();
    assertThat(manifest.path("mediaType").asText())
        .isEqualTo("application/vnd.oci.image.manifest.v1+json");
    // The runtime layer, the dependencies and the operator's own classes at least; no base image.
    assertThat(manifest.path("layers").size()).isGreaterThanOrEqualTo(3);
    assertThat(config.path("os").asText()).isEqualTo("linux");
    assertThat(config.path("architecture").asText()).isEqualTo("amd64");
    // Reproducible: no build time anywhere in the image.
    assertThat(config.path("created").asText()).isEqualTo("1970-01-01T00:00:00Z");

    JsonNode c = config.path("config");
    String[] user = c.path("User").asText().split(":");
    assertThat(user).hasSize(2);
    // Numeric, so the kubelet can check runAsNonRoot without the image's /etc/passwd.
    assertThat(Integer.parseInt(user[0])).isPositive();
    assertThat(Integer.parseInt(user[1])).isPositive();
    List<String> entrypoint = strings(c.path("Entrypoint"));
    assertThat(entrypoint.get(0)).isEqualTo("/opt/java/bin/java");
    assertThat(entrypoint).endsWith("io.bloomoperator.OperatorMain");
    assertThat(c.path("Cmd").isMissingNode() || c.path("Cmd").isNull()).isTrue();
    assertThat(c.path("ExposedPorts").has("8080/tcp")).isTrue();
    JsonNode labels = c.path("Labels");
    assertThat(labels.path("org.opencontainers.image.title").asText()).isEqualTo("bloom-operator");
    assertThat(labels.path("org.opencontainers.image.licenses").asText()).isEqualTo("Apache-2.0");
    assertThat(image.reference())
        .endsWith(":" + labels.path("org.opencontainers.image.version").asText());

    // Nothing but what the operator needs: no shell, no package manager.
    assertThat(rootfs.resolve("bin/sh")).doesNotExist();
    assertThat(rootfs.resolve("usr/bin")).doesNotExist();
    assertThat(rootfs.resolve("opt/java/lib/security/cacerts")).isRegularFile();
    assertThat(Files.readString(rootfs.resolve("etc/passwd")))
        .contains(":" + user[0] + ":" + user[1] + ":");
  }

  /** Default installs run what this build produces: both installs name the image's reference. */
  @Test
  void chartAndManifestsDefaultToTheBuiltImage() throws Exception {
    String rendered =
        HelmCli.find()
            .templateYaml(
                "bloom-operator", "bloom-operator", "--show-only", "templates/deployment.yaml");
    JsonNode chartDeployment = YAML.readTree(rendered);
    JsonNode baseDeployment =
        YAML.readTree(
            RealKubernetesExtension.repoRoot()
                .resolve("deploy/base/operator-deployment.yaml")
                .toFile());
    assertThat(operatorImage(chartDeployment)).isEqualTo(image.reference());
    assertThat(operatorImage(baseDeployment)).isEqualTo(image.reference());
  }

  /** A module the code needs and the runtime lacks fails at run time only: jdeps finds it here. */
  @Test
  void runtimeHoldsEveryModuleTheJarNeeds() throws Exception {
    Path jdeps = Path.of(System.getProperty("java.home"), "bin", "jdeps");
    String needed =
        OperatorImage.run(
            List.of(
                jdeps.toString(),
                "--print-module-deps",
                "--ignore-missing-deps",
                "--multi-release",
                "17",
                OperatorProcess.shadedJar().toString()));
    Set<String> wanted =
        Arrays.stream(needed.trim().split(","))
            .map(String::trim)
            .filter(m -> !LEFT_OUT.contains(m))
            .collect(Collectors.toCollection(TreeSet::new));
    String listed =
        OperatorImage.run(
            OperatorImage.inSandbox(
                rootfs, config, List.of("/opt/java/bin/java", "--list-modules")));
    Set<String> present =
        listed
            .lines()
            .map(l -> l.replaceFirst("@.*", "").trim())
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(present).containsAll(wanted).contains("jdk.crypto.ec");
  }

  @Test
  void operatorStartedFromTheUnpackedImageReconcilesToReady(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    // Inside the image only the image's files exist: the credentials go in the kubeconfig.
    YAML.writeValue(
        rootfs.resolve("tmp/kubeconfig").toFile(),
        OperatorImage.selfContainedKubeconfig(cluster.kubeconfig()));
    List<String> entrypoint = strings(config.path("config").path("Entrypoint"));
    Map<String, String> env = new HashMap<>();
    for (JsonNode e : config.path("config").path("Env")) {
      String[] kv = e.asText().split("=", 2);
      env.put(kv[0], kv[1]);
    }
    env.put("BLOOM_WATCH_NAMESPACES", ns.name());
    Path log = work.resolve("operator.log");
    Files.deleteIfExists(log);
    try (OperatorProcess operator =
        OperatorProcess.ofCommand(
            OperatorImage.inSandbox(rootfs, config, entrypoint),
            Path.of("/tmp/kubeconfig"),
            env,
            log)) {
      operator.start();
      operator.awaitStarted(Duration.ofSeconds(120));

      List<String> ids = IntStream.range(0, 5000).mapToObj(i -> "sku-" + i).toList();
      sourceConfigMap(client, ns.name(), "ids", "ids.txt", ids);
      apply(
          client,
          ns.name(),
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: from-image}
          spec:
            falsePositiveRate: 0.01
            source:
              configMap: {name: ids, key: ids.txt}
          """);
      var filter =
          awaitStatus(client, ns.name(), "from-image", f -> ready(f, "True", Reasons.PUBLISHED));
      assertThat(filter.getStatus().getKeys()).isEqualTo(5000L);
      assertThat(operator.isAlive()).isTrue();
    }
    // The JVM resolved the image's user through the image's /etc/passwd.
    assertThat(rootfs.resolve("tmp/hsperfdata_nonroot")).isDirectory();
  }

  private static String operatorImage(JsonNode deployment) {
    return deployment
        .path("spec")
        .path("template")
        .path("spec")
        .path("containers")
        .get(0)
        .path("image")
        .asText();
  }

  private static List<String> strings(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }
}
