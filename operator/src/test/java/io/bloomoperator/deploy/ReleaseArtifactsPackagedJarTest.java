package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@code hack/release.sh} puts into a release directory, unpacked and used as a user would:
 * SHA256SUMS names and verifies every file, a second packaging of the same commit gives the same
 * bytes, the CRD bundle applies and both CRDs become Established, the chart installs from its
 * {@code .tgz} on the real API server and creates every object it renders, the kubectl plugin
 * archive installs with its own install.sh and through krew with its krew manifest, and runs, and
 * the SBOM names every artifact of THIRD-PARTY.txt. The image tarball and the Maven jars are not
 * re-made here (they are what {@code mvn verify} builds and OperatorImageTest checks); the release
 * runs with {@code --no-build --only chart,crds,plugin,sbom} on what {@code package} left in
 * target/, hence a packaged-jar test.
 */
@RealKubernetes
@Tag("packaged-jar")
class ReleaseArtifactsPackagedJarTest {

  private static final String PARTS = "chart,crds,plugin,sbom";

  /** Where the test says the release is published (BLOOM_RELEASE_URL): the krew manifest's base. */
  private static final String RELEASE_URL = "https://downloads.example/bloom-operator/v-test";

  private static final Duration ESTABLISHED = Duration.ofSeconds(30);

  /** A JAVA_HOME with no Java in it: a plugin that runs with it brought its own. */
  private static final String NO_JAVA = "/nonexistent-java-home";

  private static final HelmCli HELM = HelmCli.find();
  private static Path release;

  @BeforeAll
  static void packageRelease(@TempDir Path work) throws Exception {
    release = work.resolve("release");
    runRelease(release);
  }

  @Test
  void sha256sumsNamesAndVerifiesEveryArtifact() throws Exception {
    Map<String, String> listed = new TreeMap<>();
    for (String line : Files.readAllLines(release.resolve("SHA256SUMS"))) {
      // sha256sum's text format: the digest, two spaces, the path.
      assertThat(line).matches("[0-9a-f]{64}  \\S.*");
      listed.put(line.substring(66), line.substring(0, 64));
    }
    assertThat(listed.keySet())
        .as("every file of the release, nothing else")
        .isEqualTo(artifacts(release))
        .containsExactlyInAnyOrder(
            "bloom-operator-" + chartVersion() + ".tgz",
            "bloom-operator-crds-" + version() + ".yaml",
            "kubectl-bloom-" + version() + ".tar.gz",
            "kubectl-bloom-" + version() + "-linux-amd64.tar.gz",
            "kubectl-bloom-" + version() + ".krew.yaml",
            "bloom-operator-" + version() + ".cdx.json");
    for (Map.Entry<String, String> entry : listed.entrySet()) {
      assertThat(sha256(release.resolve(entry.getKey())))
          .as(entry.getKey())
          .isEqualTo(entry.getValue());
    }
    // And as the docs tell users to check it.
    assertThat(run(release, Map.of(), "sha256sum", "-c", "SHA256SUMS")).doesNotContain("FAILED");
  }

  @Test
  void aSecondPackagingOfTheSameCommitIsByteIdentical(@TempDir Path work) throws Exception {
    Path again = work.resolve("again");
    runRelease(again);
    assertThat(Files.readString(again.resolve("SHA256SUMS")))
        .isEqualTo(Files.readString(release.resolve("SHA256SUMS")));
  }

  @Test
  void theChartInstallsFromItsPackageAndTheCrdBundleEstablishesBothCrds(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws Exception {
    Path packaged = release.resolve("bloom-operator-" + chartVersion() + ".tgz");
    Path unpacked = work.resolve("chart");
    Files.createDirectories(unpacked);
    run(work, Map.of(), "tar", "-xzf", packaged.toString(), "-C", unpacked.toString());
    Path chart = unpacked.resolve("bloom-operator");
    // The package holds the chart of this checkout: every file, byte for byte, except Chart.yaml,
    // which helm re-writes from its fields (comments dropped), so that is compared field by field.
    assertThat(files(chart)).isEqualTo(files(HelmCli.chart()));
    for (String file : files(chart)) {
      if (!file.equals("Chart.yaml")) {
        assertThat(chart.resolve(file))
            .as(file)
            .hasSameBinaryContentAs(HelmCli.chart().resolve(file));
      }
    }
    assertThat(yaml(chart.resolve("Chart.yaml")))
        .isEqualTo(yaml(HelmCli.chart().resolve("Chart.yaml")));

    // The CRD bundle: exactly the chart's two CRDs, applied as docs/release.md says.
    Path bundle = release.resolve("bloom-operator-crds-" + version() + ".yaml");
    List<HasMetadata> crds = load(admin, Files.readString(bundle));
    assertThat(crds)
        .extracting(o -> o.getMetadata().getName())
        .containsExactly("bloomfilters.bloomoperator.io", "bloomstores.bloomoperator.io");
    assertThat(crds)
        .isEqualTo(
            load(
                admin,
                Files.readString(chart.resolve("crds/bloomfilters.bloomoperator.io-v1.yml"))
                    + "\n---\n"
                    + Files.readString(chart.resolve("crds/bloomstores.bloomoperator.io-v1.yml"))));
    cluster.kubectl("apply", "--server-side", "--force-conflicts", "-f", bundle.toString());

    String release = "bloom-operator-rel";
    String namespace = ns.name();
    String kubeconfig = "--kubeconfig=" + cluster.kubeconfig();
    String install = installable(admin, packaged, chart, kubeconfig, namespace);
    try {
      HELM.run("install", release, install, "--namespace", namespace, kubeconfig);
      List<HasMetadata> rendered =
          load(admin, HELM.run("get", "manifest", release, "--namespace", namespace, kubeconfig));
      assertThat(rendered)
          .extracting(HasMetadata::getKind)
          .contains("Deployment", "ServiceAccount", "ClusterRole", "ClusterRoleBinding");
      // kubectl get -f fails on any object of the manifest that the server does not have.
      Path manifest = work.resolve("manifest.yaml");
      Files.writeString(
          manifest, HELM.run("get", "manifest", release, "--namespace", namespace, kubeconfig));
      assertThat(
              cluster
                  .kubectl("get", "--namespace", namespace, "-f", manifest.toString(), "-o", "name")
                  .lines())
          .hasSize(rendered.size());
      for (HasMetadata crd : crds) {
        await()
            .atMost(ESTABLISHED)
            .untilAsserted(
                () -> assertThat(established(admin, crd.getMetadata().getName())).isTrue());
      }
    } finally {
      HELM.tryRun("uninstall", release, "--namespace", namespace, kubeconfig);
    }
  }

  @Test
  void thePluginArchiveInstallsWithItsScriptAndRuns(@TempDir Path work) throws Exception {
    Path unpacked = unpack(release.resolve("kubectl-bloom-" + version() + ".tar.gz"), work);
    assertThat(files(unpacked))
        .containsExactlyInAnyOrder(
            "kubectl-bloom", "install.sh", "bloom-operator.jar", "LICENSE", "THIRD-PARTY.txt");
    assertThat(unpacked.resolve("bloom-operator.jar"))
        .hasSameBinaryContentAs(Path.of("target", "bloom-operator.jar"));

    Path bin = work.resolve("bin");
    String installed = run(unpacked, Map.of("BINDIR", bin.toString()), "bash", "install.sh");
    assertThat(installed).contains("installed " + bin.resolve("kubectl-bloom"));
    assertThat(bin.resolve("kubectl-bloom")).isExecutable();
    String help =
        run(
            work,
            Map.of("JAVA_HOME", System.getProperty("java.home")),
            bin.resolve("kubectl-bloom").toString(),
            "--help");
    assertThat(help).startsWith("Usage: kubectl bloom").contains("size");
    // Without a bundled runtime the JDK is the user's: a JAVA_HOME without java fails.
    Result noJava =
        tryRun(work, Map.of("JAVA_HOME", NO_JAVA), bin.resolve("kubectl-bloom").toString());
    assertThat(noJava.exitCode()).isNotZero();
  }

  /**
   * The linux-amd64 archive brings its own Java runtime: installed with its install.sh, the plugin
   * runs with a JAVA_HOME that holds no Java, so it cannot be the user's JDK that answers.
   */
  @Test
  void theLinuxArchiveRunsOnItsOwnJavaRuntime(@TempDir Path work) throws Exception {
    Path unpacked =
        unpack(release.resolve("kubectl-bloom-" + version() + "-linux-amd64.tar.gz"), work);
    assertThat(files(unpacked))
        .contains("kubectl-bloom", "install.sh", "bloom-operator.jar", "LICENSE", "THIRD-PARTY.txt")
        .contains("java/bin/java", "java/lib/modules", "java/legal/java.base/LICENSE");
    assertThat(unpacked.resolve("bloom-operator.jar"))
        .hasSameBinaryContentAs(Path.of("target", "bloom-operator.jar"));

    Path bin = work.resolve("local").resolve("bin");
    String installed = run(unpacked, Map.of("BINDIR", bin.toString()), "bash", "install.sh");
    assertThat(installed).contains("installed its Java runtime");
    assertThat(work.resolve("local/lib/kubectl-bloom/java/bin/java")).isExecutable();
    String help =
        run(work, Map.of("JAVA_HOME", NO_JAVA), bin.resolve("kubectl-bloom").toString(), "--help");
    assertThat(help).startsWith("Usage: kubectl bloom").contains("size");
  }

  @Test
  void theSbomListsEveryArtifactOfTheThirdPartyNotice() throws Exception {
    JsonNode bom =
        new ObjectMapper()
            .readTree(release.resolve("bloom-operator-" + version() + ".cdx.json").toFile());
    assertThat(bom.path("bomFormat").asText()).isEqualTo("CycloneDX");
    assertThat(bom.path("metadata").path("component").path("purl").asText())
        .isEqualTo("pkg:maven/io.bloomoperator/bloom-operator@" + version() + "?type=jar");
    // No build time in it: the same commit gives the same SBOM.
    assertThat(bom.path("metadata").has("timestamp")).isFalse();
    Set<String> components = new TreeSet<>();
    for (JsonNode component : bom.path("components")) {
      String coordinates =
          component.path("group").asText()
              + ":"
              + component.path("name").asText()
              + ":"
              + component.path("version").asText();
      components.add(coordinates);
      assertThat(component.path("hashes").findValuesAsText("alg"))
          .as("hashes of %s", coordinates)
          .contains("SHA-256");
    }
    Set<String> notice = ThirdPartyNoticePackagedJarTest.notice().keySet();
    assertThat(components).containsAll(notice);
    Set<String> beyond =
        components.stream()
            .filter(c -> !notice.contains(c) && !c.startsWith("io.bloomoperator:"))
            .collect(Collectors.toCollection(TreeSet::new));
    // The SBOM is of Maven's runtime class path, which is what the jar and the image bundle.
    assertThat(beyond).isEmpty();
  }

  /**
   * What helm installs: the package itself, unless the API server is one of the test binaries built
   * without a version stamp (v0.0.0-master), which the chart's kubeVersion refuses. Then helm's
   * refusal of the package is checked, and the unpacked package without that one line is installed
   * instead (as HelmCli.installable does for the chart directory).
   */
  private static String installable(
      KubernetesClient admin, Path packaged, Path chart, String kubeconfig, String namespace)
      throws IOException {
    if (!admin.getKubernetesVersion().getGitVersion().startsWith("v0.0.0")) {
      return packaged.toString();
    }
    HelmCli.Result refused =
        HELM.tryRun(
            "install", "refused", packaged.toString(), "--namespace", namespace, kubeconfig);
    assertThat(refused.exitCode()).isNotZero();
    assertThat(refused.stderr()).contains("kubeVersion").contains("incompatible");
    Path metadata = chart.resolve("Chart.yaml");
    Files.writeString(
        metadata,
        Files.readString(metadata)
            .lines()
            .filter(line -> !line.startsWith("kubeVersion:"))
            .collect(Collectors.joining("\n", "", "\n")));
    return chart.toString();
  }

  private static boolean established(KubernetesClient admin, String name) {
    CustomResourceDefinition crd =
        admin.apiextensions().v1().customResourceDefinitions().withName(name).get();
    return crd != null
        && crd.getStatus() != null
        && crd.getStatus().getConditions().stream()
            .anyMatch(c -> c.getType().equals("Established") && c.getStatus().equals("True"));
  }

  /**
   * What krew runs with: its own root, krew's bin directory and the kubectl-krew shim first on
   * PATH, no upgrade check, this JVM as the plugin's Java, and every proxy a closed port, so a
   * download attempt fails instead of reaching the network.
   */
  private static Map<String, String> krewEnvironment(Path root, Path shims) {
    String closed = "http://127.0.0.1:9";
    Map<String, String> env = new TreeMap<>();
    env.put("KREW_ROOT", root.toString());
    env.put("KREW_NO_UPGRADE_CHECK", "1");
    env.put("PATH", shims + ":" + root.resolve("bin") + ":" + System.getenv("PATH"));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    for (String proxy : List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")) {
      env.put(proxy, closed);
    }
    env.put("NO_PROXY", "");
    env.put("no_proxy", "");
    return env;
  }

  /** krew as hack/build-krew.sh builds it (the script owns the version); never skipped. */
  private static Path krew() throws Exception {
    String out =
        run(RealKubernetesExtension.repoRoot(), Map.of(), "bash", "hack/build-krew.sh", "--path")
            .trim();
    Path krew = Path.of(out);
    assertThat(Files.isExecutable(krew))
        .as(
            "krew not found at %s: run `bash hack/build-krew.sh` (needs Go; `mvn verify` runs it"
                + " unless -DskipKubeBinaries)",
            krew)
        .isTrue();
    return krew;
  }

  private static void runRelease(Path out) throws Exception {
    Path root = RealKubernetesExtension.repoRoot();
    run(
        root,
        Map.of("BLOOM_HELM", HELM.binary().toString(), "BLOOM_RELEASE_URL", RELEASE_URL),
        "bash",
        "hack/release.sh",
        "--no-build",
        "--only",
        PARTS,
        out.toString());
  }

  /** Runs a command in a directory; returns its output, or fails with it when it exits non-zero. */
  private static String run(Path dir, Map<String, String> env, String... command) throws Exception {
    Result result = tryRun(dir, env, command);
    assertThat(result.exitCode())
        .as("%s exit code; output:%n%s", List.of(command), result.output())
        .isZero();
    return result.output();
  }

  private record Result(int exitCode, String output) {}

  /** Runs a command in a directory; returns its exit code and output (stderr included). */
  private static Result tryRun(Path dir, Map<String, String> env, String... command)
      throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile());
    builder.redirectErrorStream(true);
    builder.environment().putAll(env);
    Process process = builder.start();
    process.getOutputStream().close();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(300, TimeUnit.SECONDS)).as("%s finished", List.of(command)).isTrue();
    return new Result(process.exitValue(), out);
  }

  private static List<HasMetadata> load(KubernetesClient client, String yaml) {
    return client.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
  }

  private static Object yaml(Path file) throws IOException {
    return Serialization.unmarshal(Files.readString(file), Map.class);
  }

  /** The archive's files in a new directory under work. */
  private static Path unpack(Path archive, Path work) throws Exception {
    Path unpacked = Files.createDirectories(work.resolve("plugin"));
    run(work, Map.of(), "tar", "-xzf", archive.toString(), "-C", unpacked.toString());
    return unpacked;
  }

  /** Regular files under dir, as relative paths. */
  private static Set<String> files(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      return paths
          .filter(Files::isRegularFile)
          .map(p -> dir.relativize(p).toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  private static Set<String> artifacts(Path dir) throws IOException {
    Set<String> all = new TreeSet<>(files(dir));
    all.remove("SHA256SUMS");
    // release.sh's mark that it may empty this directory on the next run; not an artifact.
    all.remove(".bloom-release");
    return all;
  }

  private static String sha256(Path file) throws IOException, NoSuchAlgorithmException {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    try (InputStream in = Files.newInputStream(file)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  /** The project version, from the parent POM (as release.sh reads it). */
  private static String version() throws IOException {
    List<String> found = new ArrayList<>();
    for (String line : Files.readAllLines(RealKubernetesExtension.repoRoot().resolve("pom.xml"))) {
      if (line.contains("<packaging>")) {
        break;
      }
      if (line.startsWith("  <version>")) {
        found.add(line.replaceAll(".*<version>(.*)</version>.*", "$1"));
      }
    }
    assertThat(found).hasSize(1);
    return found.get(0);
  }

  private static String chartVersion() throws IOException {
    return String.valueOf(((Map<?, ?>) yaml(HelmCli.chart().resolve("Chart.yaml"))).get("version"));
  }
}
