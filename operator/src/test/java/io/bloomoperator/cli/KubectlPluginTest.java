package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubectl plugin as a user gets it: deploy/kubectl-plugin/install.sh puts kubectl-bloom and the
 * jar in a directory on PATH, and the real kubectl, with KUBECONFIG pointing at the real API
 * server, finds and runs it on a filter the operator published. Also the kubectl habits the README
 * shows: {@code kubectl wait --for=condition=Ready}, {@code kubectl get bf -o wide} and {@code
 * kubectl explain bloomfilter.spec}.
 *
 * <p>The jar here has the shaded jar's Main-Class and the test classpath as its Class-Path (the
 * shaded jar is made after the tests), so {@code java -jar} starts the same main class the same
 * way.
 */
@RealKubernetes(crdDirs = "crds")
class KubectlPluginTest {

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  private static final Path PLUGIN_DIR =
      RealKubernetesExtension.repoRoot().resolve("deploy/kubectl-plugin");

  private record Result(int exit, String output) {}

  @Test
  void kubectlRunsThePluginOnAPublishedFilter(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    Path bin = tmp.resolve("bin");
    Result install =
        run(
            tmp,
            cluster,
            Map.of("BINDIR", bin.toString(), "BLOOM_OPERATOR_JAR", jar(tmp).toString()),
            "bash",
            PLUGIN_DIR.resolve("install.sh").toString());
    assertThat(install.exit()).as(install.output()).isZero();
    assertThat(bin.resolve("kubectl-bloom")).isExecutable();
    assertThat(kubectl(tmp, cluster, "plugin", "list").output())
        .contains(bin.resolve("kubectl-bloom").toString());

    SnapshotFixtures.apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: product-ids}
        spec:
          falsePositiveRate: 0.000001
          source: {inline: [sku-1, sku-2, sku-3]}
          refreshInterval: 10m
        """);
    Result waited =
        kubectl(
            tmp,
            cluster,
            "wait",
            "--for=condition=Ready",
            "bf/product-ids",
            "-n",
            ns.name(),
            "--timeout=60s");
    assertThat(waited.exit()).as(waited.output()).isZero();
    assertThat(waited.output()).contains("product-ids condition met");

    String wide = kubectl(tmp, cluster, "get", "bf", "-n", ns.name(), "-o", "wide").output();
    assertThat(columns(wide))
        .as("the -o wide header shown in the README")
        .isEqualTo(readmeWideHeader());
    assertThat(wide)
        .containsPattern(
            "product-ids\\s+\\S+\\s+10m\\s+Published\\s+True\\s+0\\s+\\S+\\s+3\\s+\\S+\\s+Idle\\s+");
    assertThat(kubectl(tmp, cluster, "get", "bf", "-n", ns.name()).output())
        .doesNotContain("REASON");
    assertThat(kubectl(tmp, cluster, "explain", "bloomfilter.spec").output())
        .contains("The desired filter: where its keys come from");

    Result inspect =
        kubectl(tmp, cluster, "bloom", "inspect", "-n", ns.name(), "--name", "product-ids");
    assertThat(inspect.exit()).as(inspect.output()).isZero();
    assertThat(inspect.output())
        .contains("filter:           product-ids")
        .contains("version:          1")
        .contains("keyCount:         3")
        .contains("verified");
    Result query =
        kubectl(
            tmp,
            cluster,
            "bloom",
            "query",
            "-n",
            ns.name(),
            "--name",
            "product-ids",
            "sku-2",
            "no-such-sku");
    assertThat(query.exit()).as(query.output()).isZero();
    assertThat(query.output()).contains("sku-2\tmaybe-present").contains("no-such-sku\tabsent");
    Path exported = tmp.resolve("ids.bin");
    Result export =
        kubectl(
            tmp,
            cluster,
            "bloom",
            "export",
            "-n",
            ns.name(),
            "--name",
            "product-ids",
            "-o",
            exported.toString());
    assertThat(export.exit()).as(export.output()).isZero();
    try (var in = Files.newInputStream(exported)) {
      var guava = BloomFilter.readFrom(in, Funnels.stringFunnel(StandardCharsets.UTF_8));
      assertThat(guava.mightContain("sku-2")).isTrue();
      assertThat(guava.mightContain("no-such-sku")).isFalse();
    }

    // build offline, apply with kubectl, read back through the plugin.
    Path keys = Files.write(tmp.resolve("keys.txt"), List.of("order-1", "order-2"));
    Path out = tmp.resolve("snapshot");
    Result build =
        kubectl(
            tmp,
            cluster,
            "bloom",
            "build",
            "--name",
            "order-ids",
            "--input",
            keys.toString(),
            "--fpp",
            "0.000001",
            "--output",
            out.toString());
    assertThat(build.exit()).as(build.output()).isZero();
    Result apply =
        kubectl(tmp, cluster, "apply", "--server-side", "-n", ns.name(), "-f", out.toString());
    assertThat(apply.exit()).as(apply.output()).isZero();
    Result applied =
        kubectl(
            tmp,
            cluster,
            "bloom",
            "query",
            "-n",
            ns.name(),
            "--name",
            "order-ids",
            "order-2",
            "order-3");
    assertThat(applied.output()).contains("order-2\tmaybe-present").contains("order-3\tabsent");

    Result help = kubectl(tmp, cluster, "bloom");
    assertThat(help.exit()).as(help.output()).isZero();
    assertThat(help.output()).contains("Usage: kubectl bloom");
    Result refused = kubectl(tmp, cluster, "bloom", "run-the-operator");
    assertThat(refused.exit()).isEqualTo(2);
    assertThat(refused.output()).contains("unknown command 'run-the-operator'");
  }

  /** The column names of a kubectl table (separated by two spaces or more). */
  private static List<String> columns(String table) {
    return List.of(table.lines().findFirst().orElseThrow().trim().split("\\s{2,}"));
  }

  /** The header of the README's {@code kubectl get bf -n shop -o wide} example. */
  private static List<String> readmeWideHeader() throws IOException {
    List<String> readme =
        Files.readAllLines(RealKubernetesExtension.repoRoot().resolve("README.md"));
    int command = readme.indexOf("$ kubectl get bf -n shop -o wide");
    assertThat(command).as("the -o wide example in README.md").isPositive();
    return columns(readme.get(command + 1));
  }

  /** A jar whose manifest starts the operator's main class on the test classpath. */
  private static Path jar(Path tmp) throws IOException {
    String classPath =
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .map(Path::of)
            .filter(Files::exists)
            .map(p -> p.toUri().toString())
            .collect(Collectors.joining(" "));
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, "io.bloomoperator.OperatorMain");
    manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, classPath);
    Path jar = tmp.resolve("bloom-operator.jar");
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file, manifest)) {
      // the manifest is all it holds
    }
    return jar;
  }

  private static Result kubectl(Path tmp, KubeCluster cluster, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(cluster.kubectl()));
    command.addAll(List.of(args));
    return run(tmp, cluster, Map.of(), command.toArray(String[]::new));
  }

  /** Runs with KUBECONFIG at the test cluster, the plugin directory first on PATH, this JVM. */
  private static Result run(
      Path tmp, KubeCluster cluster, Map<String, String> env, String... command) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("KUBECONFIG", cluster.kubeconfig().toString());
    builder
        .environment()
        .put("PATH", tmp.resolve("bin") + File.pathSeparator + System.getenv("PATH"));
    builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
    builder.environment().remove("BLOOM_OPERATOR_JAR");
    builder.environment().putAll(env);
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("%s timed out", command[0]).isTrue();
    return new Result(process.exitValue(), output);
  }
}
