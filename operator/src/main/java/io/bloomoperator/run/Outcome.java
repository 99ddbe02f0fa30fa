package io.bloomoperator.run;

import io.bloomoperator.api.Reasons;
import java.time.Duration;
import java.util.Optional;

/**
 * How one reconcile ends, as a value: the pipeline's steps return it and the status side renders it
 * once ({@code status.StatusReport#record}), so no step writes the Ready condition itself.
 */
public sealed interface Outcome {

  /**
   * Ready=True: the published version serves.
   *
   * @param reason the condition's reason ({@link Reasons#PUBLISHED} unless something is held)
   * @param note appended to the message, empty or starting with "; "
   * @param next when to reconcile again, if at all
   */
  record Ready(String reason, String note, Optional<Duration> next) implements Outcome {}

  /**
   * Ready=False; the published version stays as it is.
   *
   * @param retry come back with the failure-age backoff ({@code false}: only a spec change helps)
   * @param next when to come back instead of the backoff, if set
   */
  record Failed(String reason, String message, boolean retry, Optional<Duration> next)
      implements Outcome {}

  /**
   * Ready=True with the same decision as the status already says, only figures moved (a running
   * canary's reader counts): written as a deferrable status write, skipped while the status budget
   * has no room for one, so reader-count churn never becomes write churn.
   */
  record Progress(String reason, String note, Optional<Duration> next) implements Outcome {}

  /** Nothing to report: come back after {@code delay} (the status is not written). */
  record Wait(Duration delay) implements Outcome {}

  /** Ready=True, published, then come back after {@code next}. */
  static Outcome ready(Optional<Duration> next) {
    return new Ready(Reasons.PUBLISHED, "", next);
  }

  /** Ready=False with the failure-age backoff, or none when {@code retry} is false. */
  static Outcome failed(String reason, String message, boolean retry) {
    return new Failed(reason, message, retry, Optional.empty());
  }
}
