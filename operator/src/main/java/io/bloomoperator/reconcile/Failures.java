package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.publish.StoreUnavailableException;
import io.bloomoperator.publish.WriteBudgetExceeded;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.source.SourceException;
import io.bloomoperator.status.OwnWrites;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place a failed step becomes an outcome: the reason, the metric and when to retry. The
 * published version is never touched by a failure; it keeps serving.
 */
final class Failures {

  /** When a reconcile the write fence stopped runs again, should this replica still be alive. */
  static final Duration NOT_LEADER_RETRY = Duration.ofSeconds(5);

  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);

  private final BuildMetrics metrics;

  Failures(BuildMetrics metrics) {
    this.metrics = metrics;
  }

  /** The outcome of {@code run} failing with {@code e}. */
  Outcome of(FilterRun run, Exception e) {
    if (e instanceof SourceException source) {
      metrics.sourceFailed(source.reason());
      return Outcome.failed(
          source.reason(), run.source().description() + ": " + source.getMessage(), true);
    }
    if (e instanceof WriteBudgetExceeded budget) {
      metrics.publishFailed(budget.reason());
      // Not before the budget has room: an earlier retry would be refused again.
      return new Outcome.Failed(
          budget.reason(),
          budget.getMessage(),
          true,
          budget.retryAfter(run.now()).map(left -> left.plus(Decision.MIN_DELAY)));
    }
    if (e instanceof PublishException publish) {
      metrics.publishFailed(publish.reason());
      return Outcome.failed(publish.reason(), publish.getMessage(), true);
    }
    Optional<StoreUnavailableException> unavailable = StoreUnavailableException.in(e);
    if (unavailable.isPresent()) {
      metrics.publishFailed(Reasons.STORE_UNAVAILABLE);
      return Outcome.failed(
          Reasons.STORE_UNAVAILABLE,
          unavailable.get().getMessage() + "; the published version keeps serving",
          true);
    }
    if (e instanceof IOException) {
      metrics.publishFailed(Reasons.PUBLISH_FAILED);
      return Outcome.failed(
          Reasons.PUBLISH_FAILED, "chunk clean-up failed; see the operator log", true);
    }
    // Not the leader: not ours to report either, the status belongs to the leader. This
    // replica's leader elector notices at its next renewal and ends the process; if the Lease
    // only could not be read, try again soon.
    LOG.warn("{}/{}: not writing, not the leader: {}", run.namespace(), run.name(), e.getMessage());
    return new Outcome.Wait(NOT_LEADER_RETRY);
  }

  /**
   * Logs an error no step mapped: etcd full (expected while it is; true: nothing more to do), or an
   * unexpected error, whose text may come from anywhere (a driver, a server): the log has it, the
   * status only names its kind.
   */
  static boolean logged(BloomFilter filter, Exception e) {
    String ns = filter.getMetadata().getNamespace();
    String name = filter.getMetadata().getName();
    if (StorageFull.causedBy(e)) {
      LOG.warn("{}/{}: {}: {}; retrying", ns, name, Reasons.STORAGE_FULL, StorageFull.DESCRIPTION);
      return true;
    }
    LOG.warn("{}/{}: unexpected error", ns, name, e);
    return false;
  }

  /** The filter to report an error on, as fresh as this process's own writes. */
  static BloomFilter current(BloomFilter filter, OwnWrites ownWrites, KubernetesClient client) {
    try {
      return ownWrites.current(filter, client);
    } catch (KubernetesClientException unreadable) {
      return filter; // the status write would most likely be refused too: it is only a report
    }
  }

  /** Ready=False/ReconcileError, naming the kind of error only. */
  static Outcome unexpected(Exception e) {
    return Outcome.failed(
        Reasons.RECONCILE_ERROR,
        "unexpected " + e.getClass().getSimpleName() + "; see the operator log",
        false);
  }
}
