package io.bloomoperator.build;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BuildAttempt;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.publish.StatusBudget;
import io.bloomoperator.status.StatusWriter;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Shows a long build's progress in the resource ({@code status.phase=Building}, {@code
 * status.keysRead}), at most every few seconds so that a 100M-key build writes a handful of
 * patches, not thousands. A failed progress write is logged and ignored; one the write budget has
 * no room for ({@link StatusBudget#deferrable}) is skipped, and the next one shows the progress.
 */
public final class BuildProgressReporter implements FilterBuilder.Progress {

  private static final Logger LOG = LoggerFactory.getLogger(BuildProgressReporter.class);
  static final Duration INTERVAL = Duration.ofSeconds(5);

  private final KubernetesClient client;
  private final BloomFilter filter;
  private final StatusBudget budget;
  private long lastReport = System.nanoTime();

  BuildProgressReporter(KubernetesClient client, BloomFilter filter, StatusBudget budget) {
    this.client = client;
    this.filter = filter;
    this.budget = budget;
  }

  /**
   * Marks the start of a build and records it ({@link BuildCrashes}) before the source is read.
   *
   * @return whether the record was written
   */
  boolean started(BuildAttempt attempt) {
    try {
      // Charged, never skipped: BuildCrashes needs the record of every build's start.
      StatusWriter.patch(
          client,
          budget,
          filter,
          Map.of("phase", Reasons.PHASE_BUILDING, "keysRead", 0, "buildAttempt", attempt),
          Instant.now());
      return true;
    } catch (KubernetesClientException e) {
      LOG.warn(
          "{}/{}: the start of a build was not recorded: {}",
          filter.getMetadata().getNamespace(),
          filter.getMetadata().getName(),
          e.getMessage());
      return false;
    }
  }

  @Override
  public void keysRead(long keys) {
    long now = System.nanoTime();
    if (now - lastReport >= INTERVAL.toNanos()) {
      lastReport = now;
      write(keys);
    }
  }

  private void write(long keys) {
    try {
      // Two fields: the reconciler writes the whole status when the build ends.
      StatusWriter.patchIfRoom(
          client,
          budget,
          filter,
          Map.of("phase", Reasons.PHASE_BUILDING, "keysRead", keys),
          Instant.now());
    } catch (KubernetesClientException e) {
      LOG.debug("progress of {} not written: {}", filter.getMetadata().getName(), e.getMessage());
    }
  }
}
