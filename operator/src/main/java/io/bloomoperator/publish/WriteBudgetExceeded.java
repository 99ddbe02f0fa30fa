package io.bloomoperator.publish;

import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * A new version was not published because its namespace or its filter has written its hourly budget
 * to etcd ({@link WriteBudget}), or its namespace its hourly upload budget to an object store
 * ({@link StoreBudget}, reason {@link Reasons#STORE_UPLOAD_BUDGET_EXCEEDED}). Nothing was written;
 * the published version keeps serving. Says when the refused write fits, if it ever does.
 */
public final class WriteBudgetExceeded extends PublishException {

  private final Instant retryAt;

  private WriteBudgetExceeded(String message, Instant retryAt) {
    this(Reasons.WRITE_BUDGET_EXCEEDED, message, retryAt);
  }

  private WriteBudgetExceeded(String reason, String message, Instant retryAt) {
    super(reason, message, null);
    this.retryAt = retryAt;
  }

  /**
   * An object store's upload budget refused: {@code message} in words an author can act on, {@code
   * fitsAt} when the refused upload fits (null: never).
   */
  static WriteBudgetExceeded uploads(String message, Instant fitsAt) {
    return new WriteBudgetExceeded(Reasons.STORE_UPLOAD_BUDGET_EXCEEDED, message, fitsAt);
  }

  /** The refusal of a write of {@code bytes}, in words an author can act on. */
  public static WriteBudgetExceeded of(WriteBudget.Refusal refusal, long bytes) {
    return new WriteBudgetExceeded(
        describe(refusal, "publishing " + ByteSizes.human(bytes) + " would exceed"),
        refusal.fitsAt());
  }

  /** The refusal of any write: the budget is used up before a build starts. */
  public static WriteBudgetExceeded exhausted(WriteBudget.Refusal refusal) {
    return new WriteBudgetExceeded(describe(refusal, "nothing more fits in"), refusal.fitsAt());
  }

  private static String describe(WriteBudget.Refusal refusal, String what) {
    boolean namespace = refusal.scope().startsWith("namespace");
    return what
        + " the "
        + refusal.scope()
        + "'s etcd write budget of "
        + ByteSizes.human(refusal.limit())
        + " per hour ("
        + (namespace
            ? "BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR"
            : "BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR")
        + "; "
        + ByteSizes.human(refusal.used())
        + " written in the last hour); "
        + (refusal.fitsAt() == null
            ? "a version this large never fits: ask the administrator to raise the limit"
            : "the next publish is possible at " + refusal.fitsAt().truncatedTo(ChronoUnit.SECONDS))
        + "; the published version keeps serving";
  }

  /** How long to wait before trying again, if the budget will ever have room. */
  public Optional<Duration> retryAfter(Instant now) {
    if (retryAt == null) {
      return Optional.empty();
    }
    Duration left = Duration.between(now, retryAt);
    return Optional.of(left.isNegative() ? Duration.ZERO : left);
  }
}
