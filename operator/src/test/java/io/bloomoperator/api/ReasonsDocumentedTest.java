package io.bloomoperator.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/configuration.md documents exactly the reasons and phases the operator uses. */
class ReasonsDocumentedTest {

  // A reason cell is `R`, or `R` linked to its troubleshooting entry.
  private static final Pattern ROW =
      Pattern.compile("^\\| \\[?`([A-Za-z]+)`(?:\\]\\(troubleshooting\\.md#[a-z]+\\))? \\|");

  @Test
  void everyReadyFalseReasonHasARowAndEveryRowIsAReason() throws IOException {
    List<String> lines =
        Files.readAllLines(RealKubernetesExtension.repoRoot().resolve("docs/configuration.md"));
    int start = lines.indexOf("`Ready=False` reasons:");
    assertThat(start).as("the reasons table of docs/configuration.md").isPositive();
    List<String> documented = new ArrayList<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (documented.size() > 0 && line.isBlank()) {
        break;
      }
      Matcher row = ROW.matcher(line);
      if (row.find()) {
        documented.add(row.group(1));
      }
    }
    List<String> failures = new ArrayList<>(Reasons.all());
    failures.remove(Reasons.PUBLISHED);
    assertThat(documented)
        .as("reasons in docs/configuration.md vs io.bloomoperator.api.Reasons")
        .containsExactlyInAnyOrderElementsOf(failures);
  }

  @Test
  void everyPhaseIsDocumented() throws IOException {
    String phaseRow =
        Files.readAllLines(RealKubernetesExtension.repoRoot().resolve("docs/configuration.md"))
            .stream()
            .filter(l -> l.startsWith("| `phase` |"))
            .findFirst()
            .orElseThrow();
    assertThat(Reasons.phases())
        .hasSize(3)
        .allSatisfy(phase -> assertThat(phaseRow).contains("`" + phase + "`"));
  }
}
