package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.build.BuildCrashes;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.status.StatusReport;
import io.bloomoperator.status.StorageFullFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Instant;
import java.util.Optional;

/**
 * The guards a reconcile passes before anything reads the source: a publish that failed while etcd
 * was full is reported first (once etcd has room), and a filter whose build made the operator die
 * backs off ({@link BuildCrashes}) instead of doing it again right after the restart.
 */
final class Guards {

  private final FilterRuns runs;
  private final BuildCrashes crashes;

  Guards(FilterRuns runs, BuildCrashes crashes) {
    this.runs = runs;
    this.crashes = crashes;
  }

  /** The report to go on with, or the reconcile's result when a guard ends it ({@code stop}). */
  record Passed(StatusReport report, UpdateControl<BloomFilter> stop) {}

  Passed check(BloomFilter filter, KubernetesClient client, EventRecorder events, Instant now) {
    StatusReport report = runs.report(filter, client, events, now);
    Optional<Instant> fullSince = runs.storageFull().unrecordedSince(filter);
    if (fullSince.isPresent()) {
      UpdateControl<BloomFilter> stillFull =
          report.record(StorageFullFailures.unrecordedOutcome(fullSince.get()));
      if (!report.written()) {
        return new Passed(report, stillFull); // etcd is still full: say it once it has room
      }
      report = runs.report(filter, client, events, now);
    }
    Optional<Outcome> crashed = crashes.check(filter, report, now);
    return new Passed(report, crashed.map(report::record).orElse(null));
  }
}
