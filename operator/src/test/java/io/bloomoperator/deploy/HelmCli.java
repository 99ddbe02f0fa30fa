package io.bloomoperator.deploy;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The real {@code helm} CLI, as built by {@code hack/build-helm.sh}, run on the chart in
 * deploy/helm/bloom-operator. Found like the Kubernetes test binaries: {@code BLOOM_HELM} names a
 * binary, else {@code $BLOOM_HELM_DIR/<version>/helm} (default {@code
 * ~/.cache/bloom-operator/helm}) with the version from {@code HELM_VERSION} or {@code
 * hack/helm-version.env}.
 */
final class HelmCli {

  private static final String BUILD_SCRIPT = "hack/build-helm.sh";
  private static final String VERSION_FILE = "hack/helm-version.env";

  private final Path binary;
  private final Path home;

  private HelmCli(Path binary, Path home) {
    this.binary = binary;
    this.home = home;
  }

  /** The helm binary; fails naming the build script when it is missing (never skips). */
  static HelmCli find() {
    String explicit = System.getenv("BLOOM_HELM");
    Path binary;
    if (explicit != null && !explicit.isBlank()) {
      binary = Path.of(explicit);
    } else {
      String dir = System.getenv("BLOOM_HELM_DIR");
      Path base =
          dir != null && !dir.isBlank()
              ? Path.of(dir)
              : Path.of(System.getProperty("user.home"), ".cache", "bloom-operator", "helm");
      binary = base.resolve(version()).resolve("helm");
    }
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "helm not found at "
              + binary
              + ". Build it with `bash "
              + BUILD_SCRIPT
              + "` (needs Go and the Go module proxy), or set BLOOM_HELM to a helm binary.");
    }
    try {
      // Helm's own cache, config and data (repositories, plugins) apart from the user's.
      Path home = Path.of("target", "helm-home").toAbsolutePath();
      Files.createDirectories(home);
      return new HelmCli(binary, home);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The helm executable, for scripts that run helm themselves (as {@code BLOOM_HELM}). */
  Path binary() {
    return binary;
  }

  /** The chart under test. */
  static Path chart() {
    return RealKubernetesExtension.repoRoot().resolve("deploy/helm/bloom-operator");
  }

  /**
   * The chart as {@code helm install} and {@code upgrade} can use it on this cluster. The test
   * binaries are built from Go modules without version stamps, so the API server reports {@code
   * v0.0.0-master}, which the chart's {@code kubeVersion} refuses; against such a server this is a
   * copy of the chart without that constraint (HelmChartTest checks the constraint itself).
   */
  static Path installable(KubeCluster cluster) {
    String version;
    try (KubernetesClient client = cluster.newClient()) {
      version = client.getKubernetesVersion().getGitVersion();
    }
    if (!version.startsWith("v0.0.0")) {
      return chart();
    }
    try {
      Path copy = Path.of("target", "helm-chart-unversioned").toAbsolutePath();
      if (Files.exists(copy)) {
        try (Stream<Path> old = Files.walk(copy)) {
          for (Path path : old.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(path);
          }
        }
      }
      try (Stream<Path> files = Files.walk(chart())) {
        for (Path file : files.toList()) {
          Path target = copy.resolve(chart().relativize(file).toString());
          if (Files.isDirectory(file)) {
            Files.createDirectories(target);
          } else {
            Files.copy(file, target);
          }
        }
      }
      Path metadata = copy.resolve("Chart.yaml");
      String unconstrained =
          Files.readString(metadata)
              .lines()
              .filter(line -> !line.startsWith("kubeVersion:"))
              .collect(Collectors.joining("\n", "", "\n"));
      Files.writeString(metadata, unconstrained);
      return copy;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A values file setting every extension point of the chart to something not its default. */
  static Path nonDefaultValues() {
    return RealKubernetesExtension.repoRoot()
        .resolve("operator/src/test/resources/helm/non-default-values.yaml");
  }

  /** Runs helm; returns stdout, or throws with its stderr when it exits non-zero. */
  String run(String... args) {
    Result result = tryRun(args);
    if (result.exitCode() != 0) {
      throw new IllegalStateException(
          "helm " + String.join(" ", args) + " failed: " + result.stderr());
    }
    return result.stdout();
  }

  /** Runs helm and returns what it printed and its exit code, whatever that is. */
  Result tryRun(String... args) {
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.addAll(List.of(args));
    try {
      Path errors = Files.createTempFile("helm", ".err");
      try {
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(errors.toFile());
        Map<String, String> env = builder.environment();
        env.put("HELM_CACHE_HOME", home.resolve("cache").toString());
        env.put("HELM_CONFIG_HOME", home.resolve("config").toString());
        env.put("HELM_DATA_HOME", home.resolve("data").toString());
        Process process = builder.start();
        process.getOutputStream().close();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          throw new IllegalStateException("helm " + String.join(" ", args) + " timed out");
        }
        return new Result(process.exitValue(), out, Files.readString(errors));
      } finally {
        Files.deleteIfExists(errors);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * {@code helm template} of the chart as release {@code release} in {@code namespace}, with
   * further arguments such as {@code --set watchNamespaces={shop}}, parsed into objects.
   */
  List<HasMetadata> template(
      KubernetesClient client, String release, String namespace, String... more) {
    String yaml = templateYaml(release, namespace, more);
    return client.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
  }

  /** {@code helm template} output as text. */
  String templateYaml(String release, String namespace, String... more) {
    return run(
        Stream.concat(
                Stream.of("template", release, chart().toString(), "--namespace", namespace),
                Stream.of(more))
            .toArray(String[]::new));
  }

  /** What one helm run printed, and how it ended. */
  record Result(int exitCode, String stdout, String stderr) {}

  private static String version() {
    String override = System.getenv("HELM_VERSION");
    if (override != null && !override.isBlank()) {
      return override.trim();
    }
    Path file = RealKubernetesExtension.repoRoot().resolve(VERSION_FILE);
    try (Stream<String> lines = Files.lines(file)) {
      return lines
          .filter(line -> line.startsWith("HELM_VERSION="))
          .map(line -> line.substring("HELM_VERSION=".length()).trim())
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no HELM_VERSION= line in " + file));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the pinned Helm version", e);
    }
  }
}
