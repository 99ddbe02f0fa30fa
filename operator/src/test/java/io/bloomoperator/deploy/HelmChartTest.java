package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The chart on its own, with the real helm: it lints in every variant, its schema refuses values
 * that would break or widen the install, and its copies of the CRD and the alert rules are exactly
 * the committed originals.
 */
class HelmChartTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final String ALERTS = "bloom-alerts.yaml";

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
                "operator.signingKeySecret.enabled=true",
                "--set-json",
                "readers=[{\"namespace\":\"shop\",\"serviceAccount\":\"product-service\"}]"));
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
   * The operator-down alerts match {@code up{job="bloom-operator"}}: whatever the release is
   * called, the ServiceMonitor's job label (prometheus-operator takes it from the Service label
   * {@code jobLabel} names) must be that job, or those alerts would fire forever or, worse, never.
   */
  @Test
  void serviceMonitorProducesTheJobTheOperatorDownAlertsMatch() throws IOException {
    String alerts = Files.readString(HelmCli.chart().resolve("files").resolve(ALERTS));
    Matcher job = Pattern.compile("up\\{job=\"([^\"]+)\"}").matcher(alerts);
    assertThat(job.find()).as("an up{job=...} rule in %s", ALERTS).isTrue();
    for (String release : List.of("bloom-operator", "monitoring-test")) {
      String rendered =
          helm.templateYaml(
              release,
              "ops",
              "--set",
              "metrics.serviceMonitor.enabled=true",
              "--show-only",
              "templates/servicemonitor.yaml");
      JsonNode service = null;
      JsonNode monitor = null;
      for (String doc : rendered.split("(?m)^---\\s*$")) {
        JsonNode node = YAML.readTree(doc);
        if (node == null) {
          continue;
        }
        switch (node.path("kind").asText()) {
          case "Service" -> service = node;
          case "ServiceMonitor" -> monitor = node;
          default -> {}
        }
      }
      assertThat(service).as("Service of release %s", release).isNotNull();
      assertThat(monitor).as("ServiceMonitor of release %s", release).isNotNull();
      String jobLabel = monitor.path("spec").path("jobLabel").asText();
      assertThat(jobLabel).as("ServiceMonitor jobLabel").isNotEmpty();
      assertThat(service.path("metadata").path("labels").path(jobLabel).asText())
          .as("job label of release %s (Service label %s)", release, jobLabel)
          .isEqualTo(job.group(1));
    }
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
