package io.bloomoperator.readers;

import io.bloomoperator.api.ReaderStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The rollout fields of {@code status.readers}: when the published version started to roll out,
 * when every reader with a recent heartbeat served it, whether it stalled; and which event that
 * calls for. All state is in the status, so an operator restart or a new leader goes on where the
 * last left off. Pure.
 */
final class Rollout {

  /** What changed in this step, for an event. */
  enum Step {
    NONE,
    COMPLETED,
    STALLED
  }

  /**
   * @param step what happened
   * @param took for {@link Step#COMPLETED}: from the start of the rollout to now
   */
  record Outcome(Step step, Duration took) {}

  private Rollout() {}

  /**
   * Fills the rollout fields of {@code next} (the counts of this round) from {@code previous} (what
   * the status says, null before the first count).
   *
   * @param publishedAt when the version was published, if known (else the rollout starts now)
   */
  static Outcome advance(
      ReaderStatus previous,
      ReaderStatus next,
      Instant publishedAt,
      Instant now,
      Duration stallAfter) {
    boolean firstCount = previous == null;
    if (firstCount || !next.getVersion().equals(previous.getVersion())) {
      Instant start = publishedAt == null || publishedAt.isAfter(now) ? now : publishedAt;
      next.setRolloutStartedAt(format(start));
      next.setRolloutCompletedAt(null);
      next.setRolloutStalled(false);
    } else {
      next.setRolloutStartedAt(previous.getRolloutStartedAt());
      next.setRolloutCompletedAt(previous.getRolloutCompletedAt());
      next.setRolloutStalled(previous.getRolloutStalled());
    }
    if (next.getRolloutCompletedAt() != null) {
      return new Outcome(Step.NONE, null);
    }
    Instant started = parse(next.getRolloutStartedAt(), now);
    int live = next.getTotal() - next.getStale();
    if (live > 0 && next.getCurrent() == live) {
      next.setRolloutCompletedAt(format(now));
      next.setRolloutStalled(false);
      // A filter counted for the first time was not watched rolling out: no duration to tell.
      return firstCount
          ? new Outcome(Step.NONE, null)
          : new Outcome(Step.COMPLETED, Duration.between(started, now));
    }
    if (!Boolean.TRUE.equals(next.getRolloutStalled())
        && live > 0
        && (next.getFailing() > 0 || Duration.between(started, now).compareTo(stallAfter) > 0)) {
      next.setRolloutStalled(true);
      return new Outcome(Step.STALLED, null);
    }
    return new Outcome(Step.NONE, null);
  }

  private static String format(Instant t) {
    return t.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  private static Instant parse(String text, Instant fallback) {
    try {
      return text == null ? fallback : Instant.parse(text);
    } catch (RuntimeException e) {
      return fallback;
    }
  }
}
