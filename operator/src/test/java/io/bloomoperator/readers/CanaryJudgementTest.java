package io.bloomoperator.readers;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.readers.CanaryJudgement.Decision;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReport;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The canary verdict from 50 readers app-0..app-49, of which app-0, app-8, app-23, app-29 and
 * app-38 form the 10 % share.
 */
class CanaryJudgementTest {

  private static final Instant START = Instant.parse("2026-12-01T12:00:00Z");
  private static final Duration HOLD = Duration.ofSeconds(30);
  private static final List<String> SHARE = List.of("app-0", "app-8", "app-23", "app-29", "app-38");

  private static ReaderReport report(String pod, long served, long failing, Instant at) {
    return new ReaderReport(
        "shop",
        pod,
        "uid-" + pod,
        "ids",
        served,
        failing,
        failing == ReaderReport.NONE ? null : LoadFailureReason.UNSIGNED,
        at,
        at,
        Duration.ofMinutes(3));
  }

  /** The share serves {@code canary}, everyone else {@code stable}. */
  private static List<ReaderReport> fleet(long stable, long canary, Instant at) {
    List<ReaderReport> reports = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      String pod = "app-" + i;
      reports.add(report(pod, SHARE.contains(pod) ? canary : stable, ReaderReport.NONE, at));
    }
    return reports;
  }

  @Test
  void waitsForTheHoldThenPromotesWhenTheWholeShareServesTheCanary() {
    List<ReaderReport> reports = fleet(3, 4, START);
    assertThat(CanaryJudgement.judge(reports, 4, 10, START, HOLD, START.plusSeconds(29)))
        .isEqualTo(new Decision.Wait(5, 5));
    assertThat(CanaryJudgement.judge(reports, 4, 10, START, HOLD, START.plusSeconds(30)))
        .isEqualTo(new Decision.Promote(5));
  }

  @Test
  void aShareReaderNotYetOnTheCanaryHoldsThePromotion() {
    List<ReaderReport> reports = fleet(3, 4, START);
    reports.set(8, report("app-8", 3, ReaderReport.NONE, START));
    assertThat(CanaryJudgement.judge(reports, 4, 10, START, HOLD, START.plusSeconds(60)))
        .isEqualTo(new Decision.Wait(5, 4));
  }

  @Test
  void aShareReaderFailingTheCanaryHaltsItAtOnce() {
    List<ReaderReport> reports = fleet(3, 3, START);
    reports.set(23, report("app-23", 3, 4, START));
    assertThat(CanaryJudgement.judge(reports, 4, 10, START, HOLD, START.plusSeconds(1)))
        .isEqualTo(new Decision.Halt(LoadFailureReason.UNSIGNED, 1));
  }

  @Test
  void readersOutsideTheShareNeitherHaltNorAdvanceIt() {
    List<ReaderReport> reports = fleet(3, 4, START);
    reports.set(1, report("app-1", 3, 4, START)); // outside the share, "failing" the canary
    assertThat(CanaryJudgement.judge(reports, 4, 10, START, HOLD, START.plusSeconds(60)))
        .isEqualTo(new Decision.Promote(5));

    List<ReaderReport> outsiders = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      if (!SHARE.contains("app-" + i)) {
        outsiders.add(report("app-" + i, 4, ReaderReport.NONE, START)); // all claim the canary
      }
    }
    assertThat(CanaryJudgement.judge(outsiders, 4, 10, START, HOLD, START.plusSeconds(60)))
        .isEqualTo(new Decision.Wait(0, 0)); // no reader of the share: no evidence, no promotion
  }

  @Test
  void staleShareReadersAreNotEvidence() {
    Instant later = START.plus(Duration.ofMinutes(10));
    List<ReaderReport> reports = fleet(3, 4, START); // heartbeats 10 minutes old, stale after 3
    assertThat(CanaryJudgement.judge(reports, 4, 10, START, HOLD, later))
        .isEqualTo(new Decision.Wait(0, 0));
  }
}
