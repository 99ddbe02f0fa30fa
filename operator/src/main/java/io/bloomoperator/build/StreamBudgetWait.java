package io.bloomoperator.build;

import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.WriteBudgetExceeded;
import java.time.Instant;
import java.util.Optional;

/**
 * Which refusals of a stream publish are a write budget's (etcd's, or an object store's uploads),
 * and until when the stream waits for it: both say when the refused write fits.
 */
final class StreamBudgetWait {

  /** The status message's start while a stream waits for its write budget. */
  static final String PREFIX = "stream publishes wait for the write budget: ";

  /** The Warning event sent when a stream starts waiting for its write budget. */
  static final String EVENT = "ChangeStreamWaitsForBudget";

  private StreamBudgetWait() {}

  /** Whether {@code e} is a write budget's refusal (etcd's, or an object store's uploads). */
  static boolean refused(PublishException e) {
    return e instanceof WriteBudgetExceeded;
  }

  /**
   * Until when a stream whose publish the budget {@linkplain #refused refused} waits; empty when
   * the refused write never fits (then it is a failure of the filter, not a wait).
   */
  static Optional<Instant> until(PublishException e, Instant now) {
    return ((WriteBudgetExceeded) e).retryAfter(now).map(now::plus);
  }
}
