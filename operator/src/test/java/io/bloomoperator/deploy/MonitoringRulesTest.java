package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.metrics.Metric;
import io.bloomoperator.metrics.MetricCatalogue;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.watch.metrics.ReaderMetricNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * deploy/monitoring/: the Grafana dashboard parses, its panels and the alert rules name only
 * metrics that exist (the operator's catalogue and sidecar-lib's reader metrics) and show all of
 * them; with promtool built (hack/build-promtool.sh), Prometheus' own parser checks the rules and
 * their unit tests (bloom-alerts.test.yaml) prove each alert fires for the broken case only.
 */
class MonitoringRulesTest {

  /** sidecar-lib's reader metrics, as Prometheus names, from its metric catalogue. */
  private static final List<String> READER_METRICS =
      List.copyOf(ReaderMetricNames.PROMETHEUS_NAMES.values());

  private static final Set<String> ALERTS =
      Set.of(
          "BloomOperatorNotScraped",
          "BloomOperatorDown",
          "BloomFilterNotReady",
          "BloomFilterSnapshotStale",
          "BloomReaderSnapshotBehind",
          "BloomReaderLoadFailures",
          "BloomFilterFalsePositiveRateHigh");

  /** Every metric of the project starts with this; PromQL functions and labels do not. */
  private static final Pattern METRIC =
      Pattern.compile("\\b(?:bloomoperator|bloomreader)_[a-z0-9_]+\\b");

  private static final Path DIR = RealKubernetesExtension.repoRoot().resolve("deploy/monitoring");

  @Test
  void dashboardParsesAndShowsExactlyTheCataloguedMetrics() throws IOException {
    JsonNode dashboard = new ObjectMapper().readTree(DIR.resolve("bloom-dashboard.json").toFile());
    assertThat(dashboard.path("uid").asText()).isEqualTo("bloom-operator");
    List<String> expressions = new ArrayList<>();
    for (JsonNode panel : dashboard.path("panels")) {
      if (panel.path("type").asText().equals("row")) {
        continue;
      }
      assertThat(panel.path("targets").size())
          .as("targets of %s", panel.path("title"))
          .isPositive();
      panel.path("targets").forEach(t -> expressions.add(t.path("expr").asText()));
    }
    dashboard
        .path("templating")
        .path("list")
        .forEach(v -> expressions.add(v.path("query").path("query").asText()));

    Set<String> used = metricNames(expressions);
    assertThat(used).isSubsetOf(knownSeries());
    // Every metric is on the dashboard (a timer or summary through any of its series).
    for (Metric metric : MetricCatalogue.all()) {
      assertThat(metric.seriesNames()).as(metric.prometheusName()).containsAnyElementsOf(used);
    }
    assertThat(used).containsAll(READER_METRICS);
  }

  /**
   * A panel query that reads a per-filter series (tag {@code filter}) selects it by the dashboard's
   * {@code $namespace} and {@code $filter}: picking a filter must narrow every per-filter panel.
   */
  @Test
  void everyPerFilterQueryFollowsTheNamespaceAndFilterVariables() throws IOException {
    Set<String> perFilter =
        Stream.concat(
                MetricCatalogue.all().stream()
                    .filter(m -> m.tags().contains(MetricCatalogue.TAG_FILTER))
                    .flatMap(m -> m.seriesNames().stream()),
                READER_METRICS.stream())
            .collect(Collectors.toSet());
    JsonNode dashboard = new ObjectMapper().readTree(DIR.resolve("bloom-dashboard.json").toFile());
    Pattern selector =
        Pattern.compile("\\b((?:bloomoperator|bloomreader)_[a-z0-9_]+)\\b(\\{[^}]*})?");
    int checked = 0;
    for (JsonNode panel : dashboard.path("panels")) {
      for (JsonNode target : panel.path("targets")) {
        String expr = target.path("expr").asText();
        Matcher m = selector.matcher(expr);
        while (m.find()) {
          if (!perFilter.contains(m.group(1))) {
            continue;
          }
          assertThat(m.group(2))
              .as("selector of %s in panel %s: %s", m.group(1), panel.path("title"), expr)
              .isNotNull()
              .contains("namespace=~\"$namespace\"")
              .contains("filter=~\"$filter\"");
          checked++;
        }
      }
    }
    assertThat(checked).isPositive();
  }

  @Test
  void alertRulesNameOnlyExistingMetricsAndCarryWhatAReceiverNeeds() throws IOException {
    JsonNode rules =
        new ObjectMapper(new YAMLFactory()).readTree(DIR.resolve("bloom-alerts.yaml").toFile());
    Set<String> alerts = new TreeSet<>();
    List<String> expressions = new ArrayList<>();
    for (JsonNode group : rules.path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        alerts.add(rule.path("alert").asText());
        expressions.add(rule.path("expr").asText());
        assertThat(rule.path("for").asText()).as("for of %s", rule.path("alert")).isNotEmpty();
        assertThat(rule.path("labels").path("severity").asText()).isNotEmpty();
        assertThat(rule.path("annotations").path("summary").asText()).isNotEmpty();
        assertThat(rule.path("annotations").path("description").asText()).isNotEmpty();
      }
    }
    assertThat(expressions)
        .as("the operator-down alerts, found by the series the operator exports, any job name")
        .contains(
            "absent(bloomoperator_build_info)",
            "up == 0 and on(job, instance) max_over_time(bloomoperator_build_info[1h])")
        .noneMatch(expression -> expression.contains("job="));
    assertThat(alerts).containsExactlyInAnyOrderElementsOf(ALERTS);
    assertThat(metricNames(expressions))
        .isSubsetOf(knownSeries())
        .contains(
            "bloomoperator_filter_ready",
            "bloomoperator_filter_verified_timestamp_seconds",
            "bloomoperator_filter_refresh_interval_seconds",
            "bloomreader_load_failures_total",
            "bloomreader_fpp_observed",
            "bloomreader_fpp_expected");
  }

  /**
   * Every rule links its section of docs/runbooks.md, and the section exists (a GitHub heading
   * anchor: the heading in lower case, spaces as hyphens, punctuation dropped).
   */
  @Test
  void everyRuleHasARunbookSectionThatExists() throws IOException {
    Path runbooks = RealKubernetesExtension.repoRoot().resolve("docs/runbooks.md");
    Set<String> anchors =
        Files.readAllLines(runbooks).stream()
            .filter(line -> line.startsWith("#"))
            .map(line -> line.replaceFirst("^#+\\s*", ""))
            .map(
                heading ->
                    heading
                        .toLowerCase(Locale.ROOT)
                        .replaceAll("[^a-z0-9 _-]", "")
                        .replace(' ', '-'))
            .collect(Collectors.toSet());
    JsonNode rules =
        new ObjectMapper(new YAMLFactory()).readTree(DIR.resolve("bloom-alerts.yaml").toFile());
    int checked = 0;
    for (JsonNode group : rules.path("groups")) {
      for (JsonNode rule : group.path("rules")) {
        String alert = rule.path("alert").asText();
        String url = rule.path("annotations").path("runbook_url").asText();
        assertThat(url).as("runbook_url of %s", alert).startsWith("docs/runbooks.md#");
        String anchor = url.substring(url.indexOf('#') + 1);
        assertThat(anchors)
            .as("section %s of docs/runbooks.md (for %s)", anchor, alert)
            .contains(anchor);
        assertThat(anchor)
            .as("%s links its own section", alert)
            .isEqualTo(alert.toLowerCase(Locale.ROOT));
        checked++;
      }
    }
    assertThat(checked).isEqualTo(ALERTS.size());
  }

  @Test
  void promtoolAcceptsTheRulesAndTheirUnitTestsPass() throws Exception {
    Path promtool = promtool();
    // Never skipped: `mvn verify` builds promtool in its validate phase, so a missing binary
    // means that build failed (no Go) and the rules would go unchecked.
    assertThat(Files.isExecutable(promtool))
        .as(
            "promtool not found at %s: run `bash hack/build-promtool.sh` (needs Go; `mvn verify`"
                + " runs it unless -DskipKubeBinaries)",
            promtool)
        .isTrue();
    assertThat(run(promtool, "check", "rules", "bloom-alerts.yaml"))
        .contains("SUCCESS: " + ALERTS.size() + " rules found");
    assertThat(run(promtool, "test", "rules", "bloom-alerts.test.yaml")).contains("SUCCESS");
  }

  private static Set<String> metricNames(List<String> expressions) {
    Set<String> names = new TreeSet<>();
    for (String expr : expressions) {
      Matcher m = METRIC.matcher(expr);
      while (m.find()) {
        names.add(m.group());
      }
    }
    return names;
  }

  private static Set<String> knownSeries() {
    return Stream.concat(
            MetricCatalogue.all().stream().flatMap(m -> m.seriesNames().stream()),
            READER_METRICS.stream())
        .collect(Collectors.toSet());
  }

  /** Where hack/build-promtool.sh keeps the binary (the script owns the version). */
  private static Path promtool() throws Exception {
    Process p =
        new ProcessBuilder(
                "bash",
                RealKubernetesExtension.repoRoot().resolve("hack/build-promtool.sh").toString(),
                "--path")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    return Path.of(out);
  }

  private static String run(Path promtool, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(promtool.toString()));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(DIR.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("promtool %s:%n%s", String.join(" ", args), out).isZero();
    return out;
  }
}
