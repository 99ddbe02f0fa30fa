package io.bloomoperator.objectstore;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;

/** Whether a namespace's labels match a label selector, as the API server would judge it. */
final class NamespaceSelector {

  private NamespaceSelector() {}

  /**
   * @return false for a selector with neither labels nor expressions: an empty selector here would
   *     allow every namespace, which is never what "allowed namespaces" should mean by accident
   */
  static boolean matches(LabelSelector selector, Map<String, String> labels) {
    Map<String, String> required = selector.getMatchLabels();
    List<LabelSelectorRequirement> expressions = selector.getMatchExpressions();
    boolean empty =
        (required == null || required.isEmpty()) && (expressions == null || expressions.isEmpty());
    if (empty) {
      return false;
    }
    Map<String, String> have = labels == null ? Map.of() : labels;
    if (required != null
        && !required.entrySet().stream().allMatch(e -> e.getValue().equals(have.get(e.getKey())))) {
      return false;
    }
    return expressions == null || expressions.stream().allMatch(r -> matches(r, have));
  }

  private static boolean matches(LabelSelectorRequirement requirement, Map<String, String> have) {
    String value = have.get(requirement.getKey());
    List<String> values = requirement.getValues() == null ? List.of() : requirement.getValues();
    return switch (requirement.getOperator()) {
      case "In" -> value != null && values.contains(value);
      case "NotIn" -> value == null || !values.contains(value);
      case "Exists" -> value != null;
      case "DoesNotExist" -> value == null;
      default -> false; // an operator the API server would have refused: allow nothing
    };
  }
}
