package io.bloomoperator.api;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.CustomResource;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Puts the printer columns of the generated CRDs in the order their classes declare them. The CRD
 * generator sorts columns by JSON path, which puts {@code Age} first and {@code Ready} in the
 * middle of {@code kubectl get}; users expect NAME, READY, …, AGE. Run by the build right after the
 * test classes are compiled (exec-maven-plugin, phase process-test-classes), on the files the
 * generator wrote under {@code target/classes/META-INF/fabric8}, so that the jar, {@code
 * hack/update-crds.sh} and {@code CrdUpToDateTest} all see the same text. Build-time only, hence in
 * the test sources: it never ships in the operator's jar.
 *
 * <p>Works on the generator's YAML text (one list item per column, at a fixed indentation) rather
 * than re-serializing it, so nothing but the order changes.
 */
public final class PrinterColumnOrder {

  private static final String LIST = "  - additionalPrinterColumns:";
  private static final String ITEM = "    - ";
  private static final String ITEM_BODY = "      ";

  private PrinterColumnOrder() {}

  /**
   * @param args the directory holding the generated CRDs
   */
  public static void main(String[] args) throws IOException {
    Path dir = Path.of(args[0]);
    for (Class<? extends CustomResource<?, ?>> kind :
        List.of(BloomFilter.class, BloomStore.class)) {
      Path file = dir.resolve(HasMetadata.getFullResourceName(kind) + "-v1.yml");
      String yaml = Files.readString(file, StandardCharsets.UTF_8);
      String ordered = ordered(yaml, declaredNames(kind));
      if (!ordered.equals(yaml)) {
        Files.writeString(file, ordered, StandardCharsets.UTF_8);
      }
    }
  }

  static List<String> declaredNames(Class<?> kind) {
    return Arrays.stream(kind.getAnnotationsByType(AdditionalPrinterColumn.class))
        .map(AdditionalPrinterColumn::name)
        .toList();
  }

  /**
   * {@code yaml} with its printer columns in the order of {@code names}.
   *
   * @throws IllegalStateException if the CRD's columns are not exactly {@code names}
   */
  static String ordered(String yaml, List<String> names) {
    List<String> lines = List.of(yaml.split("\n", -1));
    int start = lines.indexOf(LIST);
    if (start < 0) {
      throw new IllegalStateException("no printer columns in the generated CRD");
    }
    List<List<String>> items = new ArrayList<>();
    int end = start + 1;
    for (; end < lines.size(); end++) {
      String line = lines.get(end);
      if (line.startsWith(ITEM)) {
        items.add(new ArrayList<>(List.of(line)));
      } else if (line.startsWith(ITEM_BODY) && !items.isEmpty()) {
        items.get(items.size() - 1).add(line);
      } else {
        break;
      }
    }
    Map<String, List<String>> columns = new LinkedHashMap<>();
    items.forEach(column -> columns.put(nameOf(column), column));
    if (!columns.keySet().equals(new java.util.HashSet<>(names))
        || columns.size() != names.size()) {
      throw new IllegalStateException(
          "generated columns " + columns.keySet() + " are not the declared " + names);
    }
    List<String> out = new ArrayList<>(lines.subList(0, start + 1));
    names.forEach(name -> out.addAll(columns.get(name)));
    out.addAll(lines.subList(end, lines.size()));
    return String.join("\n", out);
  }

  /** The value of the column's {@code name:} line, or null without one. */
  private static String nameOf(List<String> item) {
    for (String line : item) {
      String trimmed = line.substring(ITEM.length()).trim();
      if (trimmed.startsWith("name: \"")) {
        return trimmed.substring("name: \"".length(), trimmed.length() - 1);
      }
    }
    return null;
  }
}
