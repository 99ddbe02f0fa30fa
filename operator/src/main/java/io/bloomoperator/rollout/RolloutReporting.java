package io.bloomoperator.rollout;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderCount;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.readers.ReaderRollouts;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.stream.Collectors;

/**
 * The events and metrics of reader counts: RolloutComplete with its duration, RolloutStalled with
 * the counts and failure codes (never text from a report), and the readers gauges.
 */
public final class RolloutReporting implements ReaderRollouts.RolloutSink {

  private final KubernetesClient client;
  private final Clock clock;
  private final BuildMetrics metrics;

  public RolloutReporting(KubernetesClient client, Clock clock, BuildMetrics metrics) {
    this.client = client;
    this.clock = clock;
    this.metrics = metrics;
  }

  @Override
  public void counted(BloomFilter filter, ReaderStatus readers) {
    metrics.readers(filter, readers);
  }

  @Override
  public void completed(BloomFilter filter, ReaderStatus readers, Duration took) {
    metrics.rolloutCompleted(took);
    new EventRecorder(client, clock)
        .normal(
            filter,
            ReaderRollouts.EVENT_ROLLOUT_COMPLETE,
            "v"
                + readers.getVersion()
                + " served by "
                + readers.getServing()
                + " readers, "
                + took.toSeconds()
                + " s after its publish");
  }

  @Override
  public void stalled(BloomFilter filter, ReaderStatus readers) {
    String reasons =
        readers.getFailingReasons().stream()
            .map(c -> c.getReason() + " " + c.getReaders())
            .collect(Collectors.joining(", "));
    new EventRecorder(client, clock)
        .warning(
            filter,
            ReaderRollouts.EVENT_ROLLOUT_STALLED,
            "v"
                + readers.getVersion()
                + " served by "
                + readers.getServing()
                + " readers ("
                + readers.getStale()
                + " stale"
                + (reasons.isEmpty() ? "" : "; failing to load: " + reasons)
                + "; others on "
                + readers.getOtherVersions().stream()
                    .map(ReaderCount::getVersion)
                    .map(v -> "v" + v)
                    .collect(Collectors.joining(", "))
                + ")");
  }
}
