package io.bloomoperator.readers;

import io.bloomoperator.run.Decision;
import io.bloomoperator.snapshot.CanaryShare;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReport;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;

/**
 * What to do with a canary now, from the reports of live readers: halt it as soon as a reader in
 * its share reports failing to load it, promote it once the hold time is over and every reader in
 * the share (at least one) serves it, otherwise wait. Pure: the reports, the canary and the clock
 * decide, so the verdict is the same after an operator restart or a leader change.
 *
 * <p>Only readers in the share count ({@link CanaryShare}, computed from each report's pod name): a
 * report from a pod outside it, forged or not, can neither halt nor advance the canary. A forged
 * report from a pod inside the share (which must be a live pod of the filter's namespace to be
 * counted at all) can at most halt the canary, or, by claiming to serve it, advance it in that
 * namespace.
 */
public final class CanaryJudgement {

  /** The verdict on a canary. */
  public sealed interface Decision {
    /** Keep the canary as it is. */
    record Wait(int canaryReaders, int onCanary) implements Decision {}

    /** Publish the canary to every reader. */
    record Promote(int canaryReaders) implements Decision {}

    /** Withdraw the canary: {@code failing} readers of the share fail to load it. */
    record Halt(LoadFailureReason reason, int failing) implements Decision {}
  }

  private CanaryJudgement() {}

  /**
   * @param reports the counted reports of the filter (live pods of its namespace only)
   * @param canaryVersion the version announced as canary
   * @param percent the canary share, 1..100
   * @param startedAt when the canary was announced
   * @param holdFor how long the share serves it before it may be promoted
   */
  public static Decision judge(
      Collection<ReaderReport> reports,
      long canaryVersion,
      int percent,
      Instant startedAt,
      Duration holdFor,
      Instant now) {
    Counts counts = count(reports, canaryVersion, percent, now);
    if (counts.failing() > 0) {
      return new Decision.Halt(counts.firstFailingReason(), counts.failing());
    }
    int canaryReaders = counts.readers();
    int onCanary = counts.onCanary();
    boolean held = !now.isBefore(startedAt.plus(holdFor));
    if (held && canaryReaders > 0 && onCanary == canaryReaders) {
      return new Decision.Promote(canaryReaders);
    }
    return new Decision.Wait(canaryReaders, onCanary);
  }

  /**
   * The readers of the share among {@code reports}: live ones (recent heartbeat) in the share,
   * those serving the canary, those failing to load it, and the reason of the first failing one by
   * pod name (the same whatever order the reports arrive in; null when none fails).
   */
  public record Counts(
      int readers, int onCanary, int failing, LoadFailureReason firstFailingReason) {}

  /** Counts the share's readers of the canary {@code canaryVersion} among {@code reports}. */
  public static Counts count(
      Collection<ReaderReport> reports, long canaryVersion, int percent, Instant now) {
    int canaryReaders = 0;
    int onCanary = 0;
    int failing = 0;
    ReaderReport firstFailing = null;
    for (ReaderReport report : reports) {
      if (report.staleAt(now) || !CanaryShare.contains(report.podName(), percent)) {
        continue;
      }
      canaryReaders++;
      if (report.servedVersion() == canaryVersion) {
        onCanary++;
      } else if (report.failingVersion() == canaryVersion) {
        failing++;
        if (firstFailing == null
            || Comparator.<String>naturalOrder().compare(report.podName(), firstFailing.podName())
                < 0) {
          firstFailing = report;
        }
      }
    }
    return new Counts(
        canaryReaders,
        onCanary,
        failing,
        firstFailing == null ? null : firstFailing.failingReason());
  }
}
