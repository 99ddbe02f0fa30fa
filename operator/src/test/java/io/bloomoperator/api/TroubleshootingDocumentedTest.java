package io.bloomoperator.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/troubleshooting.md and docs/runbooks.md send users to condition reasons, events and status
 * fields; a name that the operator does not use sends them looking for something that never
 * appears. Conventions the docs follow so that this can be checked:
 *
 * <ul>
 *   <li>each condition reason {@code R} has an entry: a line of troubleshooting.md holding both
 *       {@code <a id="r"></a>} (the reason in lower case) and {@code `R`};
 *   <li>an event is named as {@code `X` event(s)}, {@code `X` Warning/Normal event(s)}, or {@code
 *       event(s)/Warning/Normal `X`}; {@code X} must be a reason the operator passes to its event
 *       recorder (found in the main sources) or a condition reason (failures are also events);
 *   <li>a status field is written as a path {@code status.a.b}; it must exist in the status schema
 *       of a CRD under crds/.
 * </ul>
 */
class TroubleshootingDocumentedTest {

  private static final Path ROOT = RealKubernetesExtension.repoRoot();

  private static final List<String> DOCS = List.of("docs/troubleshooting.md", "docs/runbooks.md");

  private static final Pattern EVENT_AFTER =
      Pattern.compile("`([A-Za-z]+)` (?:Warning |Normal )?events?\\b");

  private static final Pattern EVENT_BEFORE =
      Pattern.compile("\\b(?:[Ee]vents?|Warning|Normal) `([A-Za-z]+)`");

  private static final Pattern STATUS_PATH =
      Pattern.compile("(?<![\\w-])status((?:\\.[A-Za-z][A-Za-z0-9]*)+)");

  /** The reason argument of {@code events.normal(about, reason, message)} or {@code warning}. */
  private static final Pattern RECORDER_CALL =
      Pattern.compile("\\.(?:normal|warning)\\(\\s*[^,;]+?,\\s*([^,;]+?)\\s*,");

  private static final Pattern STRING_CONSTANT =
      Pattern.compile("static final String ([A-Z][A-Z0-9_]*) =\\s*\"([^\"]*)\";");

  @Test
  void everyConditionReasonHasATroubleshootingEntry() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("docs/troubleshooting.md"));
    List<String> missing = new ArrayList<>();
    for (String reason : Reasons.all()) {
      String anchor = "<a id=\"" + reason.toLowerCase(Locale.ROOT) + "\"></a>";
      if (lines.stream().noneMatch(l -> l.contains(anchor) && l.contains("`" + reason + "`"))) {
        missing.add(reason);
      }
    }
    assertThat(missing).as("reasons of io.bloomoperator.api.Reasons without an entry").isEmpty();
  }

  @Test
  void theReasonsTableLinksEachReasonToItsEntry() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("docs/configuration.md"));
    int start = lines.indexOf("`Ready=False` reasons:");
    assertThat(start).as("the reasons table of docs/configuration.md").isPositive();
    Pattern linked =
        Pattern.compile("^\\| \\[`([A-Za-z]+)`\\]\\(troubleshooting\\.md#([a-z]+)\\) \\|");
    List<String> unlinked = new ArrayList<>();
    int rows = 0;
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.isBlank() && rows > 0) {
        break;
      }
      if (!line.startsWith("| ") || line.startsWith("| reason |") || line.startsWith("| --- |")) {
        continue;
      }
      rows++;
      Matcher row = linked.matcher(line);
      if (!row.find() || !row.group(2).equals(row.group(1).toLowerCase(Locale.ROOT))) {
        unlinked.add(line.substring(0, Math.min(60, line.length())));
      }
    }
    assertThat(rows).as("rows of the reasons table").isEqualTo(Reasons.all().size() - 1);
    assertThat(unlinked).as("rows not linking to troubleshooting.md#<reason>").isEmpty();
  }

  @Test
  void docsNameOnlyEventsTheOperatorEmits() throws IOException {
    Set<String> emitted = emittedEventReasons();
    // The scan must find the recorder calls at all, or every event would look unknown.
    assertThat(emitted).contains("BuildStarted", "RolloutStalled", "ManifestNotOurs");
    Map<String, Set<String>> unknown = new HashMap<>();
    for (String doc : DOCS) {
      String text = Files.readString(ROOT.resolve(doc));
      for (Pattern p : List.of(EVENT_AFTER, EVENT_BEFORE)) {
        Matcher m = p.matcher(text);
        while (m.find()) {
          if (!emitted.contains(m.group(1))) {
            unknown.computeIfAbsent(doc, d -> new TreeSet<>()).add(m.group(1));
          }
        }
      }
    }
    assertThat(unknown).as("events named in the docs that the operator never emits").isEmpty();
  }

  @Test
  void docsNameOnlyStatusFieldsOfTheCrds() throws IOException {
    Set<String> fields = statusFields();
    assertThat(fields).contains("status.lastBuildTime", "status.readers.failingReasons.reason");
    Map<String, Set<String>> unknown = new HashMap<>();
    for (String doc : DOCS) {
      Matcher m = STATUS_PATH.matcher(Files.readString(ROOT.resolve(doc)));
      while (m.find()) {
        String path = "status" + m.group(1);
        if (!fields.contains(path)) {
          unknown.computeIfAbsent(doc, d -> new TreeSet<>()).add(path);
        }
      }
    }
    assertThat(unknown).as("status fields named in the docs that no CRD has").isEmpty();
  }

  /**
   * Reasons passed to the event recorder: string literals, and constants resolved in the class that
   * names them; a reason computed at run time is a condition reason (a failure's Warning, a held
   * build's Normal event), so every condition reason counts as well.
   */
  private static Set<String> emittedEventReasons() throws IOException {
    Path main = ROOT.resolve("operator/src/main/java");
    Map<String, String> constants = new HashMap<>();
    Map<Path, String> sources = new HashMap<>();
    try (Stream<Path> files = Files.walk(main)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String source = Files.readString(file);
        sources.put(file, source);
        Matcher c = STRING_CONSTANT.matcher(source);
        while (c.find()) {
          constants.put(className(file) + "." + c.group(1), c.group(2));
        }
      }
    }
    Set<String> emitted = new TreeSet<>(Reasons.all());
    sources.forEach(
        (file, source) -> {
          Matcher call = RECORDER_CALL.matcher(source);
          while (call.find()) {
            String arg = call.group(1);
            if (arg.startsWith("\"") && arg.endsWith("\"")) {
              emitted.add(arg.substring(1, arg.length() - 1));
            } else if (arg.matches("[A-Z][A-Za-z0-9]*\\.[A-Z][A-Z0-9_]*")) {
              addIfKnown(emitted, constants, arg);
            } else if (arg.matches("[A-Z][A-Z0-9_]*")) {
              addIfKnown(emitted, constants, className(file) + "." + arg);
            }
          }
        });
    return emitted;
  }

  private static void addIfKnown(Set<String> emitted, Map<String, String> constants, String ref) {
    String value = constants.get(ref);
    assertThat(value).as("event reason constant %s", ref).isNotNull();
    emitted.add(value);
  }

  private static String className(Path file) {
    String name = file.getFileName().toString();
    return name.substring(0, name.length() - ".java".length());
  }

  /** Every {@code status.…} path of the CRDs' status schemas; arrays stand for their items. */
  private static Set<String> statusFields() throws IOException {
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
    Set<String> fields = new TreeSet<>();
    try (Stream<Path> files = Files.list(ROOT.resolve("crds"))) {
      for (Path crd : files.filter(f -> f.toString().endsWith(".yml")).toList()) {
        for (JsonNode version : yaml.readTree(crd.toFile()).path("spec").path("versions")) {
          JsonNode status =
              version.path("schema").path("openAPIV3Schema").path("properties").path("status");
          collect(status, "status", fields);
        }
      }
    }
    return fields;
  }

  private static void collect(JsonNode schema, String path, Set<String> fields) {
    if (schema.isMissingNode()) {
      return;
    }
    fields.add(path);
    JsonNode node = "array".equals(schema.path("type").asText()) ? schema.path("items") : schema;
    node.path("properties")
        .fields()
        .forEachRemaining(p -> collect(p.getValue(), path + "." + p.getKey(), fields));
  }
}
