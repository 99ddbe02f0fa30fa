package io.bloomoperator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** docs/configuration.md's metrics table lists exactly the catalogue: name, type and tags. */
class MetricCatalogueDocumentedTest {

  private static final Pattern ROW =
      Pattern.compile("^\\| `(bloomoperator_[a-z_]+)` \\| ([a-z]+) \\| ([^|]+) \\|");

  @Test
  void everyCataloguedMetricHasARowAndEveryRowIsCatalogued() throws IOException {
    List<String> lines =
        Files.readAllLines(RealKubernetesExtension.repoRoot().resolve("docs/configuration.md"));
    int start = lines.indexOf("| metric | type | tags | meaning |");
    assertThat(start).as("the metrics table of docs/configuration.md").isPositive();
    List<String> documented = new ArrayList<>();
    for (String line : lines.subList(start + 2, lines.size())) {
      if (line.isBlank()) {
        break;
      }
      Matcher row = ROW.matcher(line);
      assertThat(row.find()).as("a metrics row: %s", line).isTrue();
      documented.add(row.group(1) + " " + row.group(2) + " " + row.group(3).trim());
    }
    List<String> catalogued =
        MetricCatalogue.all().stream()
            .map(
                m ->
                    m.prometheusName()
                        + " "
                        + m.type().name().toLowerCase(Locale.ROOT)
                        + " "
                        + (m.tags().isEmpty()
                            ? "none"
                            : m.tags().stream()
                                .map(t -> "`" + t + "`")
                                .collect(Collectors.joining(", "))))
            .toList();
    assertThat(documented).containsExactlyElementsOf(catalogued);
  }
}
