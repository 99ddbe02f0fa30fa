package io.bloomoperator.readers;

import io.bloomoperator.api.ReaderCount;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReport;
import java.time.Instant;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counts reader reports into the counts of {@code status.readers} (not the rollout fields, see
 * {@link Rollout}). Every reader counts once in total, and in exactly one of stale, current or
 * another version; failing is counted among the readers with a recent heartbeat. Pure.
 */
final class ReaderTally {

  /** Versions listed in {@code otherVersions}, newest first; older ones are left out. */
  static final int MAX_LISTED_VERSIONS = 10;

  private ReaderTally() {}

  static ReaderStatus count(Collection<ReaderReport> reports, long version, Instant now) {
    int stale = 0;
    int current = 0;
    int failing = 0;
    Map<Long, Integer> others = new TreeMap<>(Comparator.reverseOrder());
    Map<LoadFailureReason, Integer> reasons = new EnumMap<>(LoadFailureReason.class);
    for (ReaderReport report : reports) {
      if (report.staleAt(now)) {
        stale++;
        continue;
      }
      if (report.servedVersion() == version) {
        current++;
      } else {
        others.merge(report.servedVersion(), 1, Integer::sum);
      }
      if (report.failing()) {
        failing++;
        reasons.merge(report.failingReason(), 1, Integer::sum);
      }
    }
    ReaderStatus status = new ReaderStatus();
    status.setVersion(version);
    status.setTotal(reports.size());
    status.setCurrent(current);
    status.setStale(stale);
    status.setFailing(failing);
    status.setServing(current + "/" + reports.size());
    status.setOtherVersions(
        others.entrySet().stream()
            .limit(MAX_LISTED_VERSIONS)
            .map(e -> ReaderCount.ofVersion(e.getKey(), e.getValue()))
            .toList());
    status.setFailingReasons(
        reasons.entrySet().stream()
            .map(e -> ReaderCount.ofReason(e.getKey().name(), e.getValue()))
            .toList());
    return status;
  }
}
