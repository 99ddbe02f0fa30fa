package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The chart on its own, with the real helm: it lints in every variant, its schema refuses values
 * that would break or widen the install, its extension points render what they promise, its README
 * documents every value, and its copies of the CRD and the alert rules are exactly the committed
 * originals.
 */
class HelmChartTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final String ALERTS = "bloom-alerts.yaml";
  private static final String DEPLOYMENT = "templates/deployment.yaml";

  /** A row of README.md's values table: key and default, each in backticks. */
  private static final Pattern VALUE_ROW =
      Pattern.compile("^\\| `([^`|]+)` \\| `([^|]*)` \\| [^|]*\\|$");

  private final HelmCli helm = HelmCli.find();

  @Test
  void lintsInEveryVariant() {
    String chart = HelmCli.chart().toString();
    List<List<String>> variants =
        List.of(
            List.of(),
            List.of("--set", "watchNamespaces={shop,payments}"),
            List.of(
                "--set",
                "metrics.serviceMonitor.enabled=true",
                "--set",
                "metrics.prometheusRule.enabled=true",
                "--set",
                "metrics.readerPodMonitor.enabled=true",
                "--set",
                "metrics.readerPodMonitor.selector.app=product-service",
                "--set",
                "metrics.dashboard.enabled=true",
                "--set",
                "operator.signingKeySecret.enabled=true",
                "--set-json",
                "readers=[{\"namespace\":\"shop\",\"serviceAccount\":\"product-service\"}]"),
            List.of("-f", HelmCli.nonDefaultValues().toString()),
            List.of("--set", "replicas=1", "--set", "rbac.aggregateToDefaultRoles=false"));
    for (List<String> values : variants) {
      String[] args =
          Stream.concat(Stream.of("lint", "--strict", chart), values.stream())
              .toArray(String[]::new);
      assertThat(helm.run(args)).as("helm lint %s", values).contains("0 chart(s) failed");
    }
  }

  /**
   * Values reach RBAC objects and the operator's environment. A misspelt key must not silently fall
   * back to the cluster-wide install, a namespace list must not smuggle in a second name, and no
   * value may carry a line break into the rendered YAML.
   */
  @Test
  void schemaRefusesHostileValues() {
    // The control: the same command with valid values renders.
    assertThat(
            helm.tryRun(
                    "template",
                    "x",
                    HelmCli.chart().toString(),
                    "--set-json",
                    "watchNamespaces=[\"shop\",\"payments\"]",
                    "--set",
                    "operator.http.deny=10.96.0.0/12")
                .exitCode())
        .isZero();
    Map<String, List<String>> hostile = new TreeMap<>();
    hostile.put("misspelt key", List.of("--set", "watchNamespace={shop}"));
    hostile.put(
        "two names in one", List.of("--set-json", "watchNamespaces=[\"shop,kube-system\"]"));
    hostile.put("not a namespace", List.of("--set-json", "watchNamespaces=[\"../kube-system\"]"));
    hostile.put("line break", List.of("--set-json", "watchNamespaces=[\"shop\\nx: y\"]"));
    hostile.put("duplicate", List.of("--set-json", "watchNamespaces=[\"shop\",\"shop\"]"));
    hostile.put("secret access", List.of("--set", "operator.secretAccess=everything"));
    hostile.put(
        "env injection",
        List.of("--set-json", "operator.http.deny=\"10.0.0.0/8\\n- name: BLOOM_HTTP_ALLOW\""));
    hostile.put("zero limit", List.of("--set", "operator.maxSnapshotBytes=0"));
    hostile.put("limit as text", List.of("--set-string", "operator.maxSnapshotBytes=64Mi"));
    hostile.put("negative replicas", List.of("--set", "replicas=-1"));
    hostile.put("duration", List.of("--set", "operator.minPublishInterval=soon"));
    hostile.put("log format", List.of("--set", "logFormat=XML"));
    hostile.put("image tag", List.of("--set-json", "image.tag=\"1.0\\nx\""));
    hostile.put("signing secret", List.of("--set", "operator.signingKeySecret.name=../x"));
    hostile.put(
        "reader account",
        List.of("--set-json", "readers=[{\"namespace\":\"shop\",\"serviceAccount\":\"a b\"}]"));
    hostile.put("name override", List.of("--set", "fullnameOverride=Bad_Name"));
    hostile.put(
        "runbook base with a line break",
        List.of("--set-json", "metrics.prometheusRule.runbookBaseUrl=\"https://x\\nfoo: bar\""));
    hostile.put(
        "runbook base not a URL",
        List.of("--set", "metrics.prometheusRule.runbookBaseUrl=javascript:alert(1)"));
    hostile.put("digest", List.of("--set", "image.digest=latest"));
    hostile.put(
        "pod label taking the selector",
        List.of("--set-json", "podLabels={\"app.kubernetes.io/instance\":\"other\"}"));
    hostile.put(
        "volume replacing /tmp", List.of("--set-json", "extraVolumes=[{\"name\":\"tmp\"}]"));
    hostile.put(
        "mount over /tmp",
        List.of("--set-json", "extraVolumeMounts=[{\"name\":\"x\",\"mountPath\":\"/tmp\"}]"));
    hostile.put("env name", List.of("--set-json", "extraEnv=[{\"name\":\"A=B\",\"value\":\"x\"}]"));
    hostile.put("env without name", List.of("--set-json", "extraEnv=[{\"value\":\"x\"}]"));
    hostile.put("budget", List.of("--set", "podDisruptionBudget.maxUnavailable=150%"));
    hostile.put("priority class", List.of("--set", "priorityClassName=Not/A/Name"));
    hostile.put("service account key", List.of("--set", "serviceAccount.annotation.x=y"));
    hostile.put("aggregation switch", List.of("--set-string", "rbac.aggregateToDefaultRoles=yes"));
    hostile.put(
        "spread without key", List.of("--set-json", "topologySpreadConstraints=[{\"maxSkew\":1}]"));
    hostile.forEach(
        (what, values) -> {
          String[] args =
              Stream.concat(Stream.of("template", "x", HelmCli.chart().toString()), values.stream())
                  .toArray(String[]::new);
          HelmCli.Result result = helm.tryRun(args);
          assertThat(result.exitCode()).as(what).isNotZero();
          assertThat(result.stderr()).as(what).contains("values don't meet the specifications");
        });
  }

  /**
   * The ServiceMonitor finds the operator: it selects the Service, which selects the operator's
   * pods and forwards to their metrics port; and it keeps the filters' own namespace label, which
   * the alert rules group by.
   */
  @Test
  void serviceMonitorScrapesTheOperatorPods() throws IOException {
    String rendered =
        helm.templateYaml(
            "bloom-operator",
            "monitoring",
            "--set",
            "metrics.serviceMonitor.enabled=true",
            "--show-only",
            "templates/servicemonitor.yaml",
            "--show-only",
            "templates/deployment.yaml");
    Map<String, JsonNode> byKind = new TreeMap<>();
    try (var docs = YAML.readerFor(JsonNode.class).<JsonNode>readValues(rendered)) {
      while (docs.hasNext()) {
        JsonNode doc = docs.next();
        if (!doc.isNull() && !doc.isEmpty()) {
          byKind.put(doc.path("kind").asText(), doc);
        }
      }
    }
    assertThat(byKind).containsOnlyKeys("Deployment", "Service", "ServiceMonitor");
    JsonNode pod = byKind.get("Deployment").path("spec").path("template");
    JsonNode service = byKind.get("Service");
    JsonNode monitor = byKind.get("ServiceMonitor");

    Map<String, String> serviceSelector = fields(service.path("spec").path("selector"));
    assertThat(serviceSelector).isNotEmpty();
    assertThat(fields(pod.path("metadata").path("labels"))).containsAllEntriesOf(serviceSelector);
    JsonNode port = service.path("spec").path("ports").get(0);
    JsonNode containerPort = pod.path("spec").path("containers").get(0).path("ports").get(0);
    assertThat(port.path("targetPort").asText()).isEqualTo(containerPort.path("name").asText());
    assertThat(pod.path("metadata").path("annotations").path("prometheus.io/port").asText())
        .isEqualTo(containerPort.path("containerPort").asText());

    Map<String, String> monitorSelector =
        fields(monitor.path("spec").path("selector").path("matchLabels"));
    assertThat(monitorSelector).isNotEmpty();
    assertThat(fields(service.path("metadata").path("labels")))
        .containsAllEntriesOf(monitorSelector);
    assertThat(monitor.path("spec").path("namespaceSelector").path("matchNames").get(0).asText())
        .isEqualTo(service.path("metadata").path("namespace").asText())
        .isEqualTo("monitoring");
    JsonNode endpoint = monitor.path("spec").path("endpoints").get(0);
    assertThat(endpoint.path("port").asText()).isEqualTo(port.path("name").asText());
    assertThat(endpoint.path("path").asText()).isEqualTo("/metrics");
    assertThat(endpoint.path("honorLabels").asBoolean()).isTrue();
  }

  /**
   * No fixed UID, GID or fsGroup (OpenShift's restricted SCC assigns them from the namespace's
   * range), the restricted profile's settings by default, and each overridable key by key.
   */
  @Test
  void securityContextsFixNoIdentityAndAreOverridable() throws IOException {
    JsonNode pod = podSpec(helm.templateYaml("x", "ns", "--show-only", DEPLOYMENT));
    JsonNode podContext = pod.path("securityContext");
    JsonNode container = pod.path("containers").get(0).path("securityContext");
    for (String identity : List.of("runAsUser", "runAsGroup", "fsGroup")) {
      assertThat(podContext.has(identity)).as("pod %s", identity).isFalse();
      assertThat(container.has(identity)).as("container %s", identity).isFalse();
    }
    assertThat(podContext.path("runAsNonRoot").asBoolean()).isTrue();
    assertThat(podContext.path("seccompProfile").path("type").asText()).isEqualTo("RuntimeDefault");
    assertThat(container.path("allowPrivilegeEscalation").isBoolean()).isTrue();
    assertThat(container.path("allowPrivilegeEscalation").asBoolean()).isFalse();
    assertThat(container.path("readOnlyRootFilesystem").asBoolean()).isTrue();
    assertThat(container.path("capabilities").path("drop").toString()).isEqualTo("[\"ALL\"]");

    JsonNode changed =
        podSpec(
            helm.templateYaml(
                "x",
                "ns",
                "--show-only",
                DEPLOYMENT,
                "--set",
                "podSecurityContext.fsGroup=1000",
                "--set",
                "securityContext.readOnlyRootFilesystem=false"));
    assertThat(changed.path("securityContext").path("fsGroup").asInt()).isEqualTo(1000);
    assertThat(changed.path("securityContext").path("runAsNonRoot").asBoolean()).isTrue();
    JsonNode changedContainer = changed.path("containers").get(0).path("securityContext");
    assertThat(changedContainer.path("readOnlyRootFilesystem").asBoolean()).isFalse();
    assertThat(changedContainer.path("capabilities").path("drop").toString())
        .isEqualTo("[\"ALL\"]");
  }

  /**
   * The chart refuses clusters older than its CRD needs (validation rules, GA in 1.29) and admits
   * the pre-release suffixes managed clusters report.
   */
  @Test
  void kubeVersionIsEnforced() {
    String chart = HelmCli.chart().toString();
    HelmCli.Result old = helm.tryRun("template", "x", chart, "--kube-version", "v1.28.15");
    assertThat(old.exitCode()).isNotZero();
    assertThat(old.stderr()).contains("chart requires kubeVersion");
    for (String version : List.of("v1.29.0", "v1.29.4-eks-1234", "v1.35.4")) {
      assertThat(helm.tryRun("template", "x", chart, "--kube-version", version).exitCode())
          .as(version)
          .isZero();
    }
  }

  /** A digest pins the image whatever the tag says. */
  @Test
  void imageDigestWinsOverTag() throws IOException {
    String digest = "sha256:" + "ab".repeat(32);
    assertThat(image("--set", "image.repository=r.example/bloom", "--set", "image.tag=1.2.3"))
        .isEqualTo("r.example/bloom:1.2.3");
    assertThat(
            image(
                "--set",
                "image.repository=r.example/bloom",
                "--set",
                "image.tag=1.2.3",
                "--set",
                "image.digest=" + digest))
        .isEqualTo("r.example/bloom@" + digest);
  }

  /**
   * A budget only where it cannot block a drain for good: with more than one replica, selecting
   * exactly the release's operator pods.
   */
  @Test
  void podDisruptionBudgetOnlyWithSeveralReplicas() throws IOException {
    Map<String, JsonNode> two = byKind(helm.templateYaml("x", "ns", "--set", "replicas=2"));
    JsonNode budget = two.get("PodDisruptionBudget");
    assertThat(budget).isNotNull();
    assertThat(budget.path("spec").path("maxUnavailable").asInt()).isEqualTo(1);
    assertThat(budget.path("spec").path("selector"))
        .isEqualTo(two.get("Deployment").path("spec").path("selector"));

    assertThat(byKind(helm.templateYaml("x", "ns", "--set", "replicas=1")))
        .doesNotContainKey("PodDisruptionBudget");
    assertThat(byKind(helm.templateYaml("x", "ns", "--set", "replicas=0")))
        .doesNotContainKey("PodDisruptionBudget");
    assertThat(
            byKind(
                helm.templateYaml(
                    "x",
                    "ns",
                    "--set",
                    "replicas=3",
                    "--set",
                    "podDisruptionBudget.enabled=false")))
        .doesNotContainKey("PodDisruptionBudget");
  }

  /**
   * Kubernetes lets the last of two variables of one name win: an extraEnv entry could otherwise
   * replace a setting the schema checked (say BLOOM_HTTP_DENY). Every variable the chart sets, in
   * any variant, is refused; any other name is appended.
   */
  @Test
  void extraEnvCannotReplaceAChartSetting() throws IOException {
    JsonNode env =
        podSpec(
                helm.templateYaml(
                    "x",
                    "ns",
                    "--show-only",
                    DEPLOYMENT,
                    "--set",
                    "watchNamespaces={shop}",
                    "--set",
                    "operator.signingKeySecret.enabled=true"))
            .path("containers")
            .get(0)
            .path("env");
    List<String> names = new ArrayList<>();
    env.forEach(e -> names.add(e.path("name").asText()));
    assertThat(names).contains("BLOOM_HTTP_DENY", "JAVA_TOOL_OPTIONS", "BLOOM_WATCH_NAMESPACES");
    for (String name : names) {
      HelmCli.Result result =
          helm.tryRun(
              "template",
              "x",
              HelmCli.chart().toString(),
              "--set-json",
              "extraEnv=[{\"name\":\"" + name + "\",\"value\":\"x\"}]");
      assertThat(result.exitCode()).as(name).isNotZero();
      assertThat(result.stderr()).as(name).contains("extraEnv: " + name + " is set by the chart");
    }
    JsonNode extended =
        podSpec(
                helm.templateYaml(
                    "x",
                    "ns",
                    "--show-only",
                    DEPLOYMENT,
                    "--set-json",
                    "extraEnv=[{\"name\":\"LOG_LEVEL\",\"value\":\"DEBUG\"}]"))
            .path("containers")
            .get(0)
            .path("env");
    JsonNode last = extended.get(extended.size() - 1);
    assertThat(last.path("name").asText()).isEqualTo("LOG_LEVEL");
    assertThat(last.path("value").asText()).isEqualTo("DEBUG");
  }

  /**
   * The stream directory is its own emptyDir, sized from the budgets of what the operator keeps
   * there (held payloads and counting shadows, plus 64 Mi), overridable, and the static manifests
   * size theirs the same way.
   */
  @Test
  void streamVolumeIsSizedFromTheStreamBudgets() throws IOException {
    JsonNode pod = podSpec(helm.templateYaml("x", "ns", "--show-only", DEPLOYMENT));
    assertThat(streamSizeLimit(pod)).isEqualTo("1088Mi"); // 512 + 512 + 64
    assertThat(env(pod, "BLOOM_STREAM_DIR")).isEqualTo("/stream");
    assertThat(env(pod, "BLOOM_STREAM_COUNTING_BYTES")).isEqualTo("536870912");
    JsonNode mount = null;
    for (JsonNode m : pod.path("containers").get(0).path("volumeMounts")) {
      if (m.path("name").asText().equals("stream")) {
        mount = m;
      }
    }
    assertThat(mount).isNotNull();
    assertThat(mount.path("mountPath").asText()).isEqualTo("/stream");

    JsonNode larger =
        deploymentPod(
            "operator.stream.countingBytes=2147483648", "operator.stream.heldBytes=1000000");
    assertThat(env(larger, "BLOOM_STREAM_COUNTING_BYTES")).isEqualTo("2147483648");
    assertThat(env(larger, "BLOOM_STREAM_HELD_BYTES")).isEqualTo("1000000");
    // 2048 Mi + 0.95 Mi + 64 Mi, rounded up.
    assertThat(streamSizeLimit(larger)).isEqualTo("2113Mi");

    JsonNode set =
        podSpec(
            helm.templateYaml(
                "x", "ns", "--show-only", DEPLOYMENT, "--set", "operator.stream.dirSizeLimit=5Gi"));
    assertThat(streamSizeLimit(set)).isEqualTo("5Gi");
    assertThat(
            helm.tryRun(
                    "template",
                    "x",
                    HelmCli.chart().toString(),
                    "--set",
                    "operator.stream.dirSizeLimit=lots")
                .exitCode())
        .isNotZero();

    JsonNode base = basePodSpec();
    assertThat(streamSizeLimit(base)).isEqualTo(streamSizeLimit(pod));
    for (String name :
        List.of(
            "BLOOM_STREAM_DIR",
            "BLOOM_STREAM_HELD_BYTES",
            "BLOOM_STREAM_NAMESPACE_HELD_BYTES",
            "BLOOM_STREAM_COUNTING_BYTES",
            "BLOOM_STREAM_NAMESPACE_COUNTING_BYTES")) {
      assertThat(env(base, name)).as(name).isEqualTo(env(pod, name));
    }
  }

  /**
   * The partition connection shares of URL lists and partitioned jdbc reads: the chart's defaults
   * are the operator's own and the static manifests', a value set reaches the operator, and a
   * negative one is refused by the schema.
   */
  @Test
  void partitionConnectionSharesAreTheOperatorsDefaultsAndSettable() throws IOException {
    JsonNode pod = deploymentPod();
    assertThat(env(pod, "BLOOM_HTTP_PARTITION_CONNECTIONS"))
        .isEqualTo(Integer.toString(HttpSourceSettings.DEFAULT_PARTITION_CONNECTIONS));
    assertThat(env(pod, "BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE"))
        .isEqualTo(
            Integer.toString(HttpSourceSettings.DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE));
    assertThat(env(pod, "BLOOM_JDBC_PARTITION_CONNECTIONS"))
        .isEqualTo(Integer.toString(JdbcSourceSettings.DEFAULT_PARTITION_CONNECTIONS));
    assertThat(env(pod, "BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE"))
        .isEqualTo(
            Integer.toString(JdbcSourceSettings.DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE));
    JsonNode base = basePodSpec();
    List<String> names =
        List.of(
            "BLOOM_HTTP_PARTITION_CONNECTIONS",
            "BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE",
            "BLOOM_JDBC_PARTITION_CONNECTIONS",
            "BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE");
    for (String name : names) {
      assertThat(env(base, name)).as(name).isEqualTo(env(pod, name));
    }

    JsonNode set =
        deploymentPod(
            "operator.http.partitionConnections=0",
            "operator.jdbc.partitionConnectionsPerNamespace=2");
    assertThat(env(set, "BLOOM_HTTP_PARTITION_CONNECTIONS")).isEqualTo("0");
    assertThat(env(set, "BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE")).isEqualTo("2");
    for (String key :
        List.of(
            "operator.http.partitionConnections",
            "operator.http.partitionConnectionsPerNamespace",
            "operator.jdbc.partitionConnections",
            "operator.jdbc.partitionConnectionsPerNamespace")) {
      assertThat(
              helm.tryRun("template", "x", HelmCli.chart().toString(), "--set", key + "=-1")
                  .exitCode())
          .as(key)
          .isNotZero();
    }
  }

  /** The pod spec of the chart's operator Deployment, rendered with {@code sets} (key=value). */
  private JsonNode deploymentPod(String... sets) throws IOException {
    List<String> args = new ArrayList<>(List.of("--show-only", DEPLOYMENT));
    for (String set : sets) {
      args.add("--set");
      args.add(set);
    }
    return podSpec(helm.templateYaml("x", "ns", args.toArray(String[]::new)));
  }

  /** The pod spec of the static manifests' operator Deployment. */
  private static JsonNode basePodSpec() throws IOException {
    return YAML.readTree(
            RealKubernetesExtension.repoRoot()
                .resolve("deploy/base/operator-deployment.yaml")
                .toFile())
        .path("spec")
        .path("template")
        .path("spec");
  }

  private static String streamSizeLimit(JsonNode pod) {
    for (JsonNode v : pod.path("volumes")) {
      if (v.path("name").asText().equals("stream")) {
        return v.path("emptyDir").path("sizeLimit").asText();
      }
    }
    return null;
  }

  private static String env(JsonNode pod, String name) {
    for (JsonNode e : pod.path("containers").get(0).path("env")) {
      if (e.path("name").asText().equals(name)) {
        return e.path("value").asText();
      }
    }
    return null;
  }

  /** A spread constraint without a selector spreads this release's operator pods. */
  @Test
  void topologySpreadSelectsTheReleasePods() throws IOException {
    JsonNode pod =
        podSpec(
            helm.templateYaml(
                "x",
                "ns",
                "--show-only",
                DEPLOYMENT,
                "--set-json",
                "topologySpreadConstraints=[{\"maxSkew\":1,\"topologyKey\":\"zone\","
                    + "\"whenUnsatisfiable\":\"ScheduleAnyway\"},{\"maxSkew\":2,"
                    + "\"topologyKey\":\"host\",\"whenUnsatisfiable\":\"DoNotSchedule\","
                    + "\"labelSelector\":{\"matchLabels\":{\"a\":\"b\"}}}]"));
    JsonNode constraints = pod.path("topologySpreadConstraints");
    assertThat(constraints).hasSize(2);
    assertThat(fields(constraints.get(0).path("labelSelector").path("matchLabels")))
        .isEqualTo(
            Map.of("app.kubernetes.io/name", "bloom-operator", "app.kubernetes.io/instance", "x"));
    assertThat(constraints.get(0).path("topologyKey").asText()).isEqualTo("zone");
    assertThat(fields(constraints.get(1).path("labelSelector").path("matchLabels")))
        .isEqualTo(Map.of("a", "b"));
  }

  /** Two releases granting readers in one namespace create two Roles, not one overwritten. */
  @Test
  void readerRolesAreNamedPerRelease() throws IOException {
    String readers = "readers=[{\"namespace\":\"shop\",\"serviceAccount\":\"app\"}]";
    Map<String, JsonNode> first =
        byKind(
            helm.templateYaml(
                "first", "ops", "--set-json", readers, "--show-only", "templates/readers.yaml"));
    Map<String, JsonNode> second =
        byKind(
            helm.templateYaml(
                "second", "ops", "--set-json", readers, "--show-only", "templates/readers.yaml"));
    String firstRole = first.get("Role").path("metadata").path("name").asText();
    String secondRole = second.get("Role").path("metadata").path("name").asText();
    assertThat(firstRole).isNotEqualTo(secondRole);
    assertThat(first.get("RoleBinding").path("roleRef").path("name").asText()).isEqualTo(firstRole);
    assertThat(second.get("RoleBinding").path("roleRef").path("name").asText())
        .isEqualTo(secondRole);
  }

  /**
   * README.md's values table and values.yaml agree: every value has a row (or its enclosing object
   * has), every row names a value, and each row's default is that value as compact JSON.
   */
  @Test
  void readmeDocumentsEveryValue() throws IOException {
    JsonNode values = YAML.readTree(HelmCli.chart().resolve("values.yaml").toFile());
    Map<String, String> rows = new TreeMap<>();
    for (String line : Files.readAllLines(HelmCli.chart().resolve("README.md"))) {
      Matcher row = VALUE_ROW.matcher(line);
      if (row.matches()) {
        assertThat(rows.put(row.group(1), row.group(2))).as("row %s twice", row.group(1)).isNull();
      }
    }
    assertThat(rows).isNotEmpty();
    ObjectMapper json = new ObjectMapper();
    rows.forEach(
        (key, documented) -> {
          JsonNode value = values.at("/" + key.replace(".", "/"));
          assertThat(value.isMissingNode())
              .as("README.md documents %s, which values.yaml does not have", key)
              .isFalse();
          try {
            assertThat(documented)
                .as("README.md default of %s", key)
                .isEqualTo(json.writeValueAsString(value));
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
    List<String> undocumented = new ArrayList<>();
    collectUndocumented(values, "", rows.keySet(), undocumented);
    assertThat(undocumented).as("values without a row in README.md's table").isEmpty();
  }

  /** The chart's crds/ is generated from crds/: same files, same bytes. */
  @Test
  void chartCrdsAreTheCommittedCrds() throws IOException {
    Path committed = RealKubernetesExtension.repoRoot().resolve("crds");
    Path chartCrds = HelmCli.chart().resolve("crds");
    Map<String, String> expected = crdFiles(committed);
    assertThat(expected).isNotEmpty();
    assertThat(crdFiles(chartCrds))
        .as(
            "deploy/helm/bloom-operator/crds/ is out of date with crds/: run `bash"
                + " hack/update-crds.sh` (or `cp crds/*.yml deploy/helm/bloom-operator/crds/`)"
                + " and commit the result")
        .isEqualTo(expected);
  }

  /**
   * The PrometheusRule carries the chart's copy of the rule groups unchanged; Helm must not have
   * treated the rules' own {{ $labels.x }} templates as its own.
   */
  @Test
  void prometheusRuleCarriesTheAlertRules() throws IOException {
    JsonNode groups = YAML.readTree(HelmCli.chart().resolve("files").resolve(ALERTS).toFile());
    assertThat(groups.path("groups").isArray()).isTrue();
    assertThat(groups.path("groups")).isNotEmpty();
    String rendered =
        helm.templateYaml(
            "bloom-operator",
            "bloom-operator",
            "--set",
            "metrics.prometheusRule.enabled=true",
            "--show-only",
            "templates/prometheusrule.yaml");
    JsonNode rule = YAML.readTree(rendered);
    assertThat(rule.path("kind").asText()).isEqualTo("PrometheusRule");
    assertThat(rule.path("spec").path("groups")).isEqualTo(groups.path("groups"));
    assertThat(rendered).contains("{{ $labels.filter }}");
  }

  /**
   * The operator-down alerts find the operator by the series it exports, not by a job name: a
   * release of any name, a {@code nameOverride} or a scrape job of the user's own keeps them true.
   */
  @Test
  void operatorDownAlertsDependOnNoJobName() throws IOException {
    String alerts = Files.readString(HelmCli.chart().resolve("files").resolve(ALERTS));
    assertThat(alerts).contains("absent(bloomoperator_build_info)").doesNotContain("job=");
  }

  /**
   * {@code metrics.prometheusRule.runbookBaseUrl} makes every rule's relative runbook link absolute
   * and changes nothing else.
   */
  @Test
  void runbookBaseUrlPrefixesEveryRunbookLink() throws IOException {
    JsonNode groups = YAML.readTree(HelmCli.chart().resolve("files").resolve(ALERTS).toFile());
    JsonNode rule =
        YAML.readTree(
            helm.templateYaml(
                "bloom-operator",
                "bloom-operator",
                "--set",
                "metrics.prometheusRule.enabled=true",
                "--set",
                "metrics.prometheusRule.runbookBaseUrl=https://docs.example.com/bloom/",
                "--show-only",
                "templates/prometheusrule.yaml"));
    JsonNode rendered = rule.path("spec").path("groups");
    assertThat(rendered.size()).isEqualTo(groups.path("groups").size());
    int links = 0;
    for (int g = 0; g < rendered.size(); g++) {
      JsonNode want = groups.path("groups").get(g).path("rules");
      JsonNode got = rendered.get(g).path("rules");
      for (int r = 0; r < got.size(); r++) {
        String relative = want.get(r).path("annotations").path("runbook_url").asText();
        assertThat(relative).startsWith("docs/runbooks.md#");
        assertThat(got.get(r).path("annotations").path("runbook_url").asText())
            .isEqualTo("https://docs.example.com/bloom/" + relative);
        ((ObjectNode) got.get(r).path("annotations")).put("runbook_url", relative);
        links++;
      }
    }
    assertThat(links).isPositive();
    assertThat(rendered).as("all but the links as in %s", ALERTS).isEqualTo(groups.path("groups"));
  }

  /**
   * The reader PodMonitor scrapes the pods the user names, in the namespaces named (any without),
   * keeping the readers' own namespace and filter labels; enabled without a selector it refuses to
   * render rather than scrape every pod.
   */
  @Test
  void readerPodMonitorSelectsTheNamedReaderPods() throws IOException {
    JsonNode monitor =
        YAML.readTree(
            helm.templateYaml(
                "bloom-operator",
                "monitoring",
                "--set",
                "metrics.readerPodMonitor.enabled=true",
                "--set",
                "metrics.readerPodMonitor.selector.app=product-service",
                "--set",
                "metrics.readerPodMonitor.namespaces={shop}",
                "--show-only",
                "templates/podmonitor.yaml"));
    assertThat(monitor.path("kind").asText()).isEqualTo("PodMonitor");
    assertThat(fields(monitor.path("spec").path("selector").path("matchLabels")))
        .containsExactlyEntriesOf(Map.of("app", "product-service"));
    assertThat(monitor.path("spec").path("namespaceSelector").path("matchNames").get(0).asText())
        .isEqualTo("shop");
    JsonNode endpoint = monitor.path("spec").path("podMetricsEndpoints").get(0);
    assertThat(endpoint.path("path").asText()).isEqualTo("/actuator/prometheus");
    assertThat(endpoint.path("port").asText()).isEqualTo("http");
    assertThat(endpoint.path("honorLabels").asBoolean()).isTrue();
    JsonNode anyNamespace =
        YAML.readTree(
            helm.templateYaml(
                "x",
                "monitoring",
                "--set",
                "metrics.readerPodMonitor.enabled=true",
                "--set",
                "metrics.readerPodMonitor.selector.app=a",
                "--show-only",
                "templates/podmonitor.yaml"));
    assertThat(anyNamespace.path("spec").path("namespaceSelector").path("any").asBoolean())
        .isTrue();
    assertThatThrownBy(
            () ->
                helm.templateYaml(
                    "x", "monitoring", "--set", "metrics.readerPodMonitor.enabled=true"))
        .hasMessageContaining("metrics.readerPodMonitor.selector");
  }

  /** The dashboard ConfigMap carries the canonical dashboard, labelled for Grafana's sidecar. */
  @Test
  void dashboardConfigMapCarriesTheDashboard() throws IOException {
    JsonNode configMap =
        YAML.readTree(
            helm.templateYaml(
                "x",
                "monitoring",
                "--set",
                "metrics.dashboard.enabled=true",
                "--show-only",
                "templates/dashboard.yaml"));
    assertThat(configMap.path("metadata").path("labels").path("grafana_dashboard").asText())
        .isEqualTo("1");
    Path canonical =
        RealKubernetesExtension.repoRoot().resolve("deploy/monitoring/bloom-dashboard.json");
    assertThat(
            new ObjectMapper()
                .readTree(configMap.path("data").path("bloom-dashboard.json").asText()))
        .isEqualTo(new ObjectMapper().readTree(canonical.toFile()));
    assertThat(Files.readString(HelmCli.chart().resolve("files").resolve("bloom-dashboard.json")))
        .as("files/bloom-dashboard.json differs from deploy/monitoring/: copy it over")
        .isEqualTo(Files.readString(canonical));
  }

  /**
   * The chart's rule file is a copy of deploy/monitoring/bloom-alerts.yaml, the one promtool
   * checks; skipped (visibly) only while that file does not exist.
   */
  @Test
  void alertRulesAreACopyOfTheCanonicalFile() throws IOException {
    Path canonical =
        RealKubernetesExtension.repoRoot().resolve("deploy/monitoring").resolve(ALERTS);
    assumeTrue(Files.exists(canonical), canonical + " does not exist");
    assertThat(Files.readString(HelmCli.chart().resolve("files").resolve(ALERTS)))
        .as(
            "deploy/helm/bloom-operator/files/%s differs from deploy/monitoring/%s: copy it over",
            ALERTS, ALERTS)
        .isEqualTo(Files.readString(canonical));
  }

  private static void collectUndocumented(
      JsonNode node, String path, Set<String> documented, List<String> undocumented) {
    node.fields()
        .forEachRemaining(
            field -> {
              String key = path.isEmpty() ? field.getKey() : path + "." + field.getKey();
              if (documented.contains(key)) {
                return;
              }
              if (field.getValue().isObject() && !field.getValue().isEmpty()) {
                collectUndocumented(field.getValue(), key, documented, undocumented);
              } else {
                undocumented.add(key);
              }
            });
  }

  private String image(String... values) throws IOException {
    List<String> args = new ArrayList<>(List.of("--show-only", DEPLOYMENT));
    args.addAll(List.of(values));
    return podSpec(helm.templateYaml("x", "ns", args.toArray(String[]::new)))
        .path("containers")
        .get(0)
        .path("image")
        .asText();
  }

  private static JsonNode podSpec(String deploymentYaml) throws IOException {
    JsonNode deployment = byKind(deploymentYaml).get("Deployment");
    assertThat(deployment).isNotNull();
    return deployment.path("spec").path("template").path("spec");
  }

  /** The rendered objects by kind (the last of each kind). */
  private static Map<String, JsonNode> byKind(String rendered) throws IOException {
    Map<String, JsonNode> byKind = new TreeMap<>();
    try (var docs = YAML.readerFor(JsonNode.class).<JsonNode>readValues(rendered)) {
      while (docs.hasNext()) {
        JsonNode doc = docs.next();
        if (!doc.isNull() && !doc.isEmpty()) {
          byKind.put(doc.path("kind").asText(), doc);
        }
      }
    }
    return byKind;
  }

  private static Map<String, String> fields(JsonNode object) {
    Map<String, String> fields = new TreeMap<>();
    object.fields().forEachRemaining(e -> fields.put(e.getKey(), e.getValue().asText()));
    return fields;
  }

  private static Map<String, String> crdFiles(Path dir) throws IOException {
    Map<String, String> files = new TreeMap<>();
    try (Stream<Path> list = Files.list(dir)) {
      for (Path file : list.toList()) {
        String name = file.getFileName().toString();
        // crds/kustomization.yaml is for kustomize, not a CRD.
        if ((name.endsWith(".yml") || name.endsWith(".yaml"))
            && !name.startsWith("kustomization")) {
          files.put(name, Files.readString(file));
        }
      }
    }
    return files;
  }
}
