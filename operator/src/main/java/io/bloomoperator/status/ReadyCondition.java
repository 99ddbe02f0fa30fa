package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * The Ready condition as the Kubernetes API conventions describe it: lastTransitionTime moves only
 * when the status flips, observedGeneration says which spec it judged.
 */
public final class ReadyCondition {

  public static final String TYPE = "Ready";

  /** Longest message kept; the rest is cut so one resource cannot bloat its status. */
  static final int MAX_MESSAGE_CHARS = 1024;

  private ReadyCondition() {}

  /** The current Ready condition of a resource, if any. */
  public static Optional<Condition> of(BloomFilter filter) {
    BloomFilterStatus status = filter.getStatus();
    if (status == null || status.getConditions() == null) {
      return Optional.empty();
    }
    return status.getConditions().stream().filter(c -> TYPE.equals(c.getType())).findFirst();
  }

  /**
   * Sets Ready on {@code status}, keeping lastTransitionTime when the status value is unchanged.
   */
  public static void set(
      BloomFilterStatus status,
      Optional<Condition> previous,
      boolean ready,
      String reason,
      String message,
      long generation,
      Instant now) {
    String value = ready ? "True" : "False";
    String transition =
        previous
            .filter(c -> value.equals(c.getStatus()))
            .map(Condition::getLastTransitionTime)
            .orElse(now.truncatedTo(ChronoUnit.SECONDS).toString());
    Condition condition =
        new ConditionBuilder()
            .withType(TYPE)
            .withStatus(value)
            .withReason(reason)
            .withMessage(
                message == null || message.length() <= MAX_MESSAGE_CHARS
                    ? message
                    : message.substring(0, MAX_MESSAGE_CHARS - 1) + "…")
            .withObservedGeneration(generation)
            .withLastTransitionTime(transition)
            .build();
    status.getConditions().removeIf(c -> TYPE.equals(c.getType()));
    status.getConditions().add(condition);
  }
}
