package io.bloomoperator.build;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.WriteBudgetExceeded;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Which refusals of a stream publish are a write budget's, and until when the stream waits for it:
 * the etcd budget says when the refused write fits; the object store's upload budget counts per
 * minute, so the stream asks again a minute later.
 */
final class StreamBudgetWait {

  /** The status message's start while a stream waits for its write budget. */
  static final String PREFIX = "stream publishes wait for the write budget: ";

  /** The Warning event sent when a stream starts waiting for its write budget. */
  static final String EVENT = "ChangeStreamWaitsForBudget";

  private static final Duration STORE_BUCKET = Duration.ofMinutes(1);

  private StreamBudgetWait() {}

  /** Whether {@code e} is a write budget's refusal (etcd's, or an object store's uploads). */
  static boolean refused(PublishException e) {
    return e instanceof WriteBudgetExceeded
        || Reasons.STORE_UPLOAD_BUDGET_EXCEEDED.equals(e.reason());
  }

  /**
   * Until when a stream whose publish the budget {@linkplain #refused refused} waits; empty when
   * the refused write never fits.
   */
  static Optional<Instant> until(PublishException e, Instant now) {
    if (e instanceof WriteBudgetExceeded budget) {
      return budget.retryAfter(now).map(now::plus);
    }
    return Optional.of(now.plus(STORE_BUCKET));
  }
}
