package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
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
    install(tmp, cluster);

    Result waited = publishProductIds(client, ns, cluster, tmp);
    assertThat(waited.output()).contains("product-ids condition met");

    String wide = kubectl(tmp, cluster, "get", "bf", "-n", ns.name(), "-o", "wide").output();
    assertThat(columns(wide))
        .as("the -o wide header shown in the README")
        .isEqualTo(readmeWideHeader());
    assertThat(wide)
        .containsPattern(
            // READY VERSION KEYS FPP SIZE (e.g. "22 B") ... DELTAS REASON PHASE REFRESH
            "product-ids\\s+True\\s+1\\s+3\\s+\\S+\\s+\\d+ B\\s+0\\s+Published\\s+Idle\\s+10m\\s+");
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

  /**
   * {@code status} lists the pods whose reader reports (docs/reader-protocol.md) say they are not
   * on the published version, each with the version it serves and why, and not the pods that are.
   */
  @Test
  void statusListsThePodsNotOnThePublishedVersionWithTheirReason(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    install(tmp, cluster);
    publishProductIds(client, ns, cluster, tmp);
    java.time.Instant now = java.time.Instant.now();
    report(client, ns, "app-current", 1, 0, null, now);
    report(client, ns, "app-failing", ReaderReport.NONE, 1, LoadFailureReason.CHUNK, now);
    report(client, ns, "app-stale", 1, 0, null, now.minus(java.time.Duration.ofHours(2)));
    SnapshotFixtures.awaitStatus(
        client,
        ns.name(),
        "product-ids",
        f -> f.getStatus().getReaders() != null && f.getStatus().getReaders().getTotal() == 3);

    Result status = kubectl(tmp, cluster, "bloom", "status", "product-ids", "-n", ns.name());
    assertThat(status.exit()).as(status.output()).isZero();
    assertThat(status.output())
        .contains("Readers:        1/3 on v1 (1 stale, 1 failing)")
        .contains("Not current:    app-failing  serves nothing yet, failing v1: CHUNK")
        .containsPattern("app-stale  serves v1, stale \\(last heartbeat \\S+\\)")
        .doesNotContain("app-current");
  }

  private static void report(
      KubernetesClient client,
      TestNamespace ns,
      String pod,
      long served,
      long failing,
      LoadFailureReason reason,
      java.time.Instant renewed) {
    var created = ReaderPods.pod(client, ns.name(), pod);
    ReaderPods.create(
        client,
        ReaderReports.toLease(
            new ReaderReport(
                ns.name(),
                pod,
                created.getMetadata().getUid(),
                "product-ids",
                served,
                failing,
                reason,
                renewed,
                renewed,
                java.time.Duration.ofHours(1))));
  }

  /**
   * Every {@code kubectl bloom ...} line of the README's code blocks runs, as written (its {@code
   * -n shop} pointed at the test namespace), against a filter the operator published: a README
   * change is tested without editing this test. Then {@code status} works for an identity that may
   * only get BloomFilters, and {@code rebuild} is refused to it (it needs patch).
   */
  @Test
  void everyPluginCommandTheReadmeShowsRuns(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    install(tmp, cluster);
    publishProductIds(client, ns, cluster, tmp);

    List<List<String>> commands = readmePluginCommands();
    assertThat(commands.stream().map(c -> c.get(2)))
        .as("plugin commands the README shows")
        .contains("--help", "status", "rebuild", "inspect", "query", "export");
    for (List<String> readmeLine : commands) {
      List<String> args = new ArrayList<>(readmeLine.subList(1, readmeLine.size()));
      for (int i = 0; i + 1 < args.size(); i++) {
        if (args.get(i).equals("-n")) {
          args.set(i + 1, ns.name());
        }
      }
      Result result = kubectl(tmp, cluster, args.toArray(String[]::new));
      assertThat(result.exit()).as("%s:%n%s", readmeLine, result.output()).isZero();
      String output = result.output();
      switch (args.get(1)) {
        case "--help" ->
            assertThat(output)
                .contains("Usage: kubectl bloom")
                .contains("status")
                .contains("rebuild");
        case "status" ->
            assertThat(output)
                .contains("BloomFilter:    " + ns.name() + "/product-ids")
                .containsPattern("Condition:      Ready=True Published since \\S+: version 1")
                .containsPattern("Version:        1, manifest product-ids-bloom")
                .contains("Keys:           3, expected false-positive rate")
                .containsPattern("Size:           \\S+ .*\\(\\d+ bytes\\) in 1 chunk")
                .containsPattern("Last build:     \\S+, took \\d+ ms")
                .contains("Refresh:        every 10m")
                .containsPattern("Next refresh:   by \\S+ \\(last build \\+ 10m\\)");
        case "rebuild" -> {
          assertThat(output).contains("rebuild requested: " + ns.name() + "/product-ids");
          String requested =
              client
                  .resources(io.bloomoperator.api.BloomFilter.class)
                  .inNamespace(ns.name())
                  .withName("product-ids")
                  .get()
                  .getMetadata()
                  .getAnnotations()
                  .get(RebuildRequest.ANNOTATION);
          assertThat(output).contains(RebuildRequest.ANNOTATION + "=" + requested);
          // The operator acts on it: the request is recorded in the status.
          SnapshotFixtures.awaitStatus(
              client,
              ns.name(),
              "product-ids",
              f -> requested.equals(f.getStatus().getRebuildRequest()));
          assertThat(
                  kubectl(tmp, cluster, "bloom", "status", "product-ids", "-n", ns.name()).output())
              .contains("Rebuild:        last request (" + requested + ") acted on");
        }
        case "inspect" -> assertThat(output).contains("keyCount:         3").contains("verified");
        case "query" ->
            assertThat(output).contains("sku-1\tmaybe-present").contains("sku-2\tmaybe-present");
        case "export" -> assertThat(tmp.resolve(args.get(args.indexOf("-o") + 1))).isNotEmptyFile();
        default -> {}
      }
    }
    for (String command : List.of("status", "rebuild")) {
      Result help = kubectl(tmp, cluster, "bloom", command, "--help");
      assertThat(help.exit()).as(help.output()).isZero();
      assertThat(help.output()).contains("Usage: kubectl bloom " + command).contains("<name>");
    }

    // status needs only get on bloomfilters; rebuild needs patch, which this identity lacks.
    Path viewer = kubeconfigOfViewer(client, ns, cluster, tmp);
    Result status =
        kubectl(
            tmp,
            cluster,
            "bloom",
            "status",
            "product-ids",
            "-n",
            ns.name(),
            "--kubeconfig",
            viewer.toString());
    assertThat(status.exit()).as(status.output()).isZero();
    assertThat(status.output()).contains("Ready=True Published");
    Result refused =
        kubectl(
            tmp,
            cluster,
            "bloom",
            "rebuild",
            "product-ids",
            "-n",
            ns.name(),
            "--kubeconfig",
            viewer.toString());
    assertThat(refused.exit()).as(refused.output()).isEqualTo(1);
    assertThat(refused.output()).contains("Forbidden");
    Result missing = kubectl(tmp, cluster, "bloom", "status", "no-such-filter", "-n", ns.name());
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.output()).contains("BloomFilter " + ns.name() + "/no-such-filter not found");
  }

  /**
   * {@code rollback} pins the newest retained version that differs and {@code --release} removes
   * the pin; {@code approve} releases a build held for its key count, and refuses when nothing is
   * held for approval.
   */
  @Test
  void rollbackAndApproveSteerTheOperatorThroughThePlugin(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    install(tmp, cluster);
    SnapshotFixtures.apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a-1, a-2, a-3, a-4, a-5]
          snapshot: {keepVersions: 2}
          rollout: {maxKeyCountDropPercent: 50}
        """);
    SnapshotFixtures.awaitStatus(
        client, ns.name(), "ids", f -> Long.valueOf(1).equals(f.getStatus().getVersion()));
    Result nothingHeld = kubectl(tmp, cluster, "bloom", "approve", "ids", "-n", ns.name());
    assertThat(nothingHeld.exit()).as(nothingHeld.output()).isEqualTo(1);
    assertThat(nothingHeld.output()).contains("holds no build for approval");

    // 5 keys to 2: a drop of 60 %, held.
    SnapshotFixtures.mergePatch(
        client,
        ns.name(),
        "ids",
        Map.of("spec", Map.of("source", Map.of("inline", List.of("a-1", "a-2")))));
    var held =
        SnapshotFixtures.awaitStatus(
            client, ns.name(), "ids", f -> f.getStatus().getHeld() != null);
    Result approve = kubectl(tmp, cluster, "bloom", "approve", "ids", "-n", ns.name());
    assertThat(approve.exit()).as(approve.output()).isZero();
    assertThat(approve.output())
        .contains("approved: " + ns.name() + "/ids build of 2 keys (was 5)")
        .contains(held.getStatus().getHeld().getSha256());
    SnapshotFixtures.awaitStatus(
        client, ns.name(), "ids", f -> Long.valueOf(2).equals(f.getStatus().getVersion()));

    Result rollback = kubectl(tmp, cluster, "bloom", "rollback", "ids", "-n", ns.name());
    assertThat(rollback.exit()).as(rollback.output()).isZero();
    assertThat(rollback.output())
        .contains("rollback requested: " + ns.name() + "/ids spec.rollout.pinVersion=1");
    var pinned =
        SnapshotFixtures.awaitStatus(
            client, ns.name(), "ids", f -> Long.valueOf(3).equals(f.getStatus().getVersion()));
    assertThat(pinned.getStatus().getKeys()).isEqualTo(5L);
    // The pin and the retained list may land in separate status writes under load: wait for both.
    SnapshotFixtures.awaitStatus(
        client,
        ns.name(),
        "ids",
        f ->
            Long.valueOf(1).equals(f.getStatus().getPinnedVersion())
                && f.getStatus().getRetainedVersions() != null
                && f.getStatus().getRetainedVersions().size() == 2);
    assertThat(kubectl(tmp, cluster, "bloom", "status", "ids", "-n", ns.name()).output())
        .contains("Pinned:         serving the payload of version 1")
        .containsPattern("Retained:       2 \\(2 keys\\), 1 \\(5 keys\\)");
    Result notRetained =
        kubectl(tmp, cluster, "bloom", "rollback", "ids", "-n", ns.name(), "--to", "99");
    assertThat(notRetained.exit()).isEqualTo(1);
    assertThat(notRetained.output()).contains("version 99 is not retained");

    Result release =
        kubectl(tmp, cluster, "bloom", "rollback", "ids", "-n", ns.name(), "--release");
    assertThat(release.exit()).as(release.output()).isZero();
    var released =
        SnapshotFixtures.awaitStatus(
            client, ns.name(), "ids", f -> Long.valueOf(4).equals(f.getStatus().getVersion()));
    assertThat(released.getStatus().getKeys()).isEqualTo(2L);
    assertThat(released.getSpec().getRollout().getPinVersion()).isNull();

    for (String command : List.of("rollback", "approve")) {
      Result help = kubectl(tmp, cluster, "bloom", command, "--help");
      assertThat(help.exit()).as(help.output()).isZero();
      assertThat(help.output()).contains("Usage: kubectl bloom " + command).contains("<name>");
    }
  }

  /**
   * The {@code kubectl bloom ...} lines of README.md's fenced code blocks, split into words,
   * trailing comments dropped.
   */
  private static List<List<String>> readmePluginCommands() throws IOException {
    List<List<String>> commands = new ArrayList<>();
    boolean inCode = false;
    for (String line :
        Files.readAllLines(RealKubernetesExtension.repoRoot().resolve("README.md"))) {
      if (line.startsWith("```")) {
        inCode = !inCode;
        continue;
      }
      String command = line.trim().replaceFirst("^\\$ ", "");
      if (!inCode || !command.startsWith("kubectl bloom")) {
        continue;
      }
      int comment = command.indexOf(" #");
      if (comment >= 0) {
        command = command.substring(0, comment).trim();
      }
      assertThat(command)
          .as("README line without quoting or continuation")
          .doesNotContain("\"", "'", "\\");
      commands.add(List.of(command.split("\\s+")));
    }
    return commands;
  }

  /**
   * A kubeconfig for ServiceAccount {@code viewer} of {@code ns}, which may only get BloomFilters
   * there: the admin kubeconfig's cluster with a token from the TokenRequest API.
   */
  private static Path kubeconfigOfViewer(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, Path tmp) throws IOException {
    client
        .serviceAccounts()
        .inNamespace(ns.name())
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName("viewer").endMetadata().build())
        .create();
    client
        .rbac()
        .roles()
        .inNamespace(ns.name())
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName("bloomfilter-getter")
                .endMetadata()
                .addNewRule()
                .withApiGroups("bloomoperator.io")
                .withResources("bloomfilters")
                .withVerbs("get")
                .endRule()
                .build())
        .create();
    client
        .rbac()
        .roleBindings()
        .inNamespace(ns.name())
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName("viewer-gets-bloomfilters")
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "Role", "bloomfilter-getter")
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName("viewer")
                .withNamespace(ns.name())
                .endSubject()
                .build())
        .create();
    String token =
        client
            .serviceAccounts()
            .inNamespace(ns.name())
            .withName("viewer")
            .tokenRequest(
                new TokenRequestBuilder()
                    .withNewSpec()
                    .withExpirationSeconds(3600L)
                    .endSpec()
                    .build())
            .getStatus()
            .getToken();
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
    ObjectNode kubeconfig = (ObjectNode) yaml.readTree(cluster.kubeconfig().toFile());
    for (JsonNode user : kubeconfig.path("users")) {
      ((ObjectNode) user).set("user", yaml.createObjectNode().put("token", token));
    }
    Path file = tmp.resolve("viewer.kubeconfig");
    yaml.writeValue(file.toFile(), kubeconfig);
    return file;
  }

  /**
   * The README's filter product-ids (three inline keys), applied, and kubectl waiting for Ready.
   */
  private static Result publishProductIds(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, Path tmp) throws Exception {
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
    return waited;
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

  /** Installs the plugin as the README does, into tmp/bin (first on the PATH of every run). */
  private static void install(Path tmp, KubeCluster cluster) throws Exception {
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
    // In tmp, so that relative output paths (the README's "-o ids.bin") land there.
    ProcessBuilder builder =
        new ProcessBuilder(command).directory(tmp.toFile()).redirectErrorStream(true);
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
