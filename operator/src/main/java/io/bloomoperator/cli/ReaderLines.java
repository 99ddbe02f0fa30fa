package io.bloomoperator.cli;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.snapshot.ReaderReport;
import java.io.PrintWriter;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;

/**
 * The readers part of {@code status}: the counts of {@code status.readers}, then every pod whose
 * reader report (docs/reader-protocol.md) says it is not on the published version, with why.
 */
final class ReaderLines {

  /** Pods listed at most; the rest are counted. */
  static final int MAX_PODS = 100;

  private static final String FORMAT = "%-16s%s%n";

  private ReaderLines() {}

  /**
   * @param reports the reports about this filter, or null when they could not be listed
   * @param whyNot why they could not be listed (with {@code reports} null)
   */
  static void print(
      BloomFilter filter, List<ReaderReport> reports, String whyNot, PrintWriter out, Instant now) {
    ReaderStatus counted = filter.getStatus() == null ? null : filter.getStatus().getReaders();
    Long version = filter.getStatus() == null ? null : filter.getStatus().getVersion();
    if (counted == null) {
      out.printf(FORMAT, "Readers:", "none counted (readers report with docs/reader-protocol.md)");
    } else {
      out.printf(
          FORMAT,
          "Readers:",
          counted.getServing()
              + " on v"
              + counted.getVersion()
              + " ("
              + counted.getStale()
              + " stale, "
              + counted.getFailing()
              + " failing), rollout "
              + (counted.getRolloutCompletedAt() != null
                  ? "complete at " + counted.getRolloutCompletedAt()
                  : Boolean.TRUE.equals(counted.getRolloutStalled())
                      ? "stalled (since " + counted.getRolloutStartedAt() + ")"
                      : "in progress since " + counted.getRolloutStartedAt()));
    }
    if (reports == null) {
      out.printf(FORMAT, "Not current:", "cannot list reader reports: " + whyNot);
      return;
    }
    if (version == null) {
      return;
    }
    List<ReaderReport> behind =
        reports.stream()
            .filter(r -> r.servedVersion() != version || r.failing() || r.staleAt(now))
            .sorted(Comparator.comparing(ReaderReport::podName))
            .toList();
    if (behind.isEmpty()) {
      out.printf(FORMAT, "Not current:", reports.isEmpty() ? "-" : "none");
      return;
    }
    String label = "Not current:";
    for (ReaderReport r : behind.subList(0, Math.min(MAX_PODS, behind.size()))) {
      out.printf(FORMAT, label, describe(r, now));
      label = "";
    }
    if (behind.size() > MAX_PODS) {
      out.printf(FORMAT, "", "... and " + (behind.size() - MAX_PODS) + " more");
    }
  }

  /** {@code pod serves v6, failing v7: CHUNK, stale (last heartbeat ...)}: codes only. */
  static String describe(ReaderReport r, Instant now) {
    StringBuilder line =
        new StringBuilder(r.podName())
            .append("  serves ")
            .append(
                r.servedVersion() == ReaderReport.NONE ? "nothing yet" : "v" + r.servedVersion());
    if (r.failing()) {
      line.append(", failing v").append(r.failingVersion()).append(": ").append(r.failingReason());
    }
    if (r.staleAt(now)) {
      line.append(", stale (last heartbeat ").append(r.renewedAt()).append(")");
    }
    return line.toString();
  }
}
