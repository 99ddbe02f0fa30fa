package io.bloomoperator.build;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BuildAttempt;
import io.bloomoperator.api.Durations;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.status.StatusReport;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Optional;

/**
 * Keeps a filter whose build made the operator die (out of memory on a huge value, a kill) from
 * being built again right after every restart, which would crash-loop the operator for every
 * tenant.
 *
 * <p>Every build is recorded in {@code status.buildAttempt} before its source is read, and marked
 * finished by the status write that ends it, however it ended. A record without a finish, started
 * before this operator process started, belongs to a build the operator never finished: a crash.
 * The filter then gets Ready=False/{@link Reasons#BUILD_CRASHED} and builds again only after {@link
 * #backoff} (1 min, doubling per crash in a row, at most 1 h); a build that ends, successfully or
 * not, resets the count. A spec change does not shorten the wait: otherwise each edit could crash
 * the operator again.
 *
 * <p>An operator stopped during a build (an upgrade whose stop outlasted the reconcile termination
 * timeout, a leader that lost its Lease) leaves the same record: that build waits one minute too.
 */
public final class BuildCrashes {

  public static final Duration MAX_BACKOFF = Duration.ofHours(1);

  private final Instant processStart;
  private final BuildMetrics metrics;
  private final Duration firstBackoff;

  /**
   * @param processStart when this operator process (its reconciler) started: records of builds
   *     started earlier, without a finish, are crashes
   * @param builds its crash backoff is the wait after one crash, doubling per crash in a row
   */
  public BuildCrashes(Instant processStart, BuildMetrics metrics, OperatorSettings.Builds builds) {
    this.processStart = processStart;
    this.metrics = metrics;
    this.firstBackoff = builds.crashBackoff();
  }

  /** The wait before the next build after {@code crashes} crashed builds in a row (1 or more). */
  public Duration backoff(int crashes) {
    int doublings = Math.max(0, Math.min(crashes - 1, 16));
    Duration delay = firstBackoff.multipliedBy(1L << doublings);
    return delay.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : delay;
  }

  /**
   * What to do before anything reads the filter's source: empty to go on, or the reconcile's result
   * when a crash was just found (reported, backed off) or its backoff still runs.
   */
  public Optional<Outcome> check(BloomFilter filter, StatusReport report, Instant now) {
    BuildAttempt attempt = filter.getStatus() == null ? null : filter.getStatus().getBuildAttempt();
    if (attempt == null) {
      return Optional.empty();
    }
    Instant started = instant(attempt.getStartedAt());
    Instant finished = instant(attempt.getFinishedAt());
    boolean unfinished = started != null && (finished == null || finished.isBefore(started));
    if (unfinished && started.isBefore(processStart)) {
      int crashes = (attempt.getCrashes() == null ? 0 : attempt.getCrashes()) + 1;
      Duration delay = backoff(crashes);
      Instant retryAfter = now.plus(delay).truncatedTo(ChronoUnit.SECONDS);
      metrics.buildCrashed();
      report.draft().crashRecorded(crashes, retryAfter);
      return Optional.of(
          new Outcome.Failed(
              Reasons.BUILD_CRASHED,
              "the operator stopped during the build that started at "
                  + started.truncatedTo(ChronoUnit.SECONDS)
                  + " ("
                  + crashes
                  + " such build(s) in a row: out of memory, killed or restarted); next build not"
                  + " before "
                  + retryAfter
                  + " (backoff "
                  + Durations.format(delay)
                  + ", doubling per crash up to "
                  + Durations.format(MAX_BACKOFF)
                  + ")",
              false,
              Optional.of(Duration.between(now, retryAfter))));
    }
    Instant retryAfter = instant(attempt.getRetryAfter());
    if (!unfinished && retryAfter != null && now.isBefore(retryAfter)) {
      return Optional.of(new Outcome.Wait(Duration.between(now, retryAfter)));
    }
    return Optional.empty();
  }

  private static Instant instant(String text) {
    if (text == null) {
      return null;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      return null; // not the operator's writing: no record
    }
  }
}
