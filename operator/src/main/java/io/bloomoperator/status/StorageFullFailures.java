package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Filters whose writes etcd refused because it is full, kept in memory because at that moment the
 * resource itself cannot be written: the only state of the reconciler that lives outside the
 * resource, and it only matters while etcd is full (an operator restart forgets it and starts the
 * backoff over, which is harmless).
 *
 * <p>Per filter: since when its writes fail (the backoff grows with that, like {@link
 * Decision#backoff}), and whether its Ready condition says so yet.
 */
public final class StorageFullFailures {

  private record Failure(Instant since, boolean unrecordedPublish) {}

  private final Map<String, Failure> failures = new ConcurrentHashMap<>();

  /**
   * A write for {@code filter} was refused at {@code now} because etcd is full.
   *
   * @return how long to wait before trying again
   */
  public Duration refused(BloomFilter filter, Instant now) {
    Failure failure = failures.computeIfAbsent(uid(filter), k -> new Failure(now, false));
    return Decision.backoff(Duration.between(failure.since(), now));
  }

  /**
   * The outcome that says a publish failed because etcd was full since {@code since}, when the
   * status could not say so then.
   */
  public static Outcome unrecordedOutcome(Instant since) {
    return Outcome.failed(
        Reasons.STORAGE_FULL,
        StorageFull.DESCRIPTION
            + " since "
            + since.truncatedTo(ChronoUnit.SECONDS)
            + ": no new version could be published; the published version kept serving",
        true);
  }

  /** A publish was refused and the status could not say so: the next reconcile says it first. */
  public void publishRefused(BloomFilter filter) {
    failures.computeIfPresent(uid(filter), (k, f) -> new Failure(f.since(), true));
  }

  /** Since when etcd has refused the writes of a publish the Ready condition does not show yet. */
  public Optional<Instant> unrecordedSince(BloomFilter filter) {
    Failure failure = failures.get(uid(filter));
    return failure == null || !failure.unrecordedPublish()
        ? Optional.empty()
        : Optional.of(failure.since());
  }

  /** A status write went through: etcd has room again (and the status says what happened). */
  public void cleared(BloomFilter filter) {
    failures.remove(uid(filter));
  }

  private static String uid(BloomFilter filter) {
    return filter.getMetadata().getUid();
  }
}
