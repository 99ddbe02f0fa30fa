package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.StatusBudget;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.Outcome;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The record step of one reconcile: the status it writes (one JSON merge patch, whatever the
 * outcome), the Warning event and metric of a failure, and when the next reconcile runs. One
 * instance per reconcile; it works on a copy of the status, never on the cached resource.
 */
public final class StatusReport {

  private static final Logger LOG = LoggerFactory.getLogger(StatusReport.class);

  private final BloomFilter filter;
  private final KubernetesClient client;

  /** Charged with every status write, at the size of the whole object. */
  private final StatusBudget budget;

  private final EventRecorder events;
  private final BuildMetrics metrics;
  private final Instant now;
  private final StorageFullFailures storageFull;
  private final Optional<Condition> previousReady;
  private final DraftStatus draft;
  private final BloomFilterStatus status;

  /** Told the API server's answer to each status write, so the next reconcile reads its own. */
  private final OwnWrites ownWrites;

  private boolean written;

  /** Whether the write was charged before it was made (a deferrable one). */
  private boolean prepaid;

  public StatusReport(
      BloomFilter filter,
      KubernetesClient client,
      StatusBudget budget,
      EventRecorder events,
      BuildMetrics metrics,
      StorageFullFailures storageFull,
      OwnWrites ownWrites,
      Instant now) {
    this.filter = filter;
    this.budget = budget;
    this.ownWrites = ownWrites;
    this.storageFull = storageFull;
    this.client = client;
    this.events = events;
    this.metrics = metrics;
    this.now = now;
    this.previousReady = ReadyCondition.of(filter);
    this.draft = new DraftStatus(filter, metrics, now);
    this.status = draft.status();
  }

  /** The status this report writes, as the steps fill it in. */
  public DraftStatus draft() {
    return draft;
  }

  /**
   * Ready=True with {@code reason} (the published version serves; {@code note}, if not empty, says
   * what is held), then come back after {@code next} (if any).
   */
  public UpdateControl<BloomFilter> ready(String reason, String note, Optional<Duration> next) {
    String message =
        "version "
            + status.getVersion()
            + " published: "
            + status.getKeys()
            + " keys, "
            + status.getChunks()
            + " chunk(s), "
            + status.getSize()
            + note;
    ReadyCondition.set(status, previousReady, true, reason, message, generation(), now);
    status.setPhase(Reasons.PHASE_IDLE);
    metrics.ready(filter, true, now);
    UpdateControl<BloomFilter> control = UpdateControl.noUpdate();
    if (!write()) {
      Duration retry = storageFull.refused(filter, now);
      LOG.warn(
          "{}/{}: version {} is published but its status was not written: {}; retrying in {}",
          filter.getMetadata().getNamespace(),
          filter.getMetadata().getName(),
          status.getVersion(),
          StorageFull.DESCRIPTION,
          retry);
      return control.rescheduleAfter(retry);
    }
    next.ifPresent(control::rescheduleAfter);
    return control;
  }

  /**
   * Ready=False with {@code reason}; the published version stays as it is. One Warning event per
   * new failure (not per retry). While etcd is full neither can be written: the failure is logged
   * (one line) and counted, a {@link Reasons#STORAGE_FULL} publish is remembered until the status
   * can say so, and the retry backs off from when the writes started failing.
   *
   * @param retry whether to come back with a backoff that grows with the failure's age; false when
   *     only a spec change can help (a spec change triggers a reconcile anyway)
   */
  public UpdateControl<BloomFilter> failed(String reason, String message, boolean retry) {
    boolean newFailure =
        previousReady
            .map(c -> !"False".equals(c.getStatus()) || !reason.equals(c.getReason()))
            .orElse(true);
    metrics.failed(reason);
    LOG.warn(
        "{}/{}: {}: {}",
        filter.getMetadata().getNamespace(),
        filter.getMetadata().getName(),
        reason,
        message);
    ReadyCondition.set(status, previousReady, false, reason, message, generation(), now);
    status.setPhase(Reasons.PHASE_FAILED);
    metrics.ready(filter, false, now);
    UpdateControl<BloomFilter> control = UpdateControl.noUpdate();
    if (!write()) {
      Duration delay = storageFull.refused(filter, now);
      if (Reasons.STORAGE_FULL.equals(reason)) {
        storageFull.publishRefused(filter);
      }
      return control.rescheduleAfter(delay);
    }
    // After the status: an event is a write too, and while etcd is full it would only fail.
    if (newFailure) {
      events.warning(filter, reason, message);
    }
    return retry ? control.rescheduleAfter(Decision.backoff(previousReady, now)) : control;
  }

  /** Writes {@code outcome} into the status (once per reconcile) and says when to come back. */
  public UpdateControl<BloomFilter> record(Outcome outcome) {
    if (outcome instanceof Outcome.Ready ready) {
      return ready(ready.reason(), ready.note(), ready.next());
    }
    if (outcome instanceof Outcome.Progress progress) {
      return progress(progress);
    }
    if (outcome instanceof Outcome.Failed failed) {
      UpdateControl<BloomFilter> control =
          failed(failed.reason(), failed.message(), failed.retry());
      return failed.next().map(control::rescheduleAfter).orElse(control);
    }
    return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(((Outcome.Wait) outcome).delay());
  }

  /**
   * A write of figures only, when the condition already says {@code progress.reason()}: charged up
   * front as deferrable, skipped (the figures stay in memory, the next round tries again) when the
   * deferrable share has no room.
   */
  private UpdateControl<BloomFilter> progress(Outcome.Progress progress) {
    boolean same =
        previousReady
            .map(c -> "True".equals(c.getStatus()) && progress.reason().equals(c.getReason()))
            .orElse(false);
    if (same) {
      if (!budget.deferrable(filter, now)) {
        UpdateControl<BloomFilter> control = UpdateControl.noUpdate();
        progress.next().ifPresent(control::rescheduleAfter);
        return control;
      }
      prepaid = true;
    }
    return ready(progress.reason(), progress.note(), progress.next());
  }

  /** Whether the last status write went through (false: etcd is full). */
  public boolean written() {
    return written;
  }

  private long generation() {
    return filter.getMetadata().getGeneration();
  }

  /** Writes the status; false when etcd is full (any other refusal is thrown). */
  private boolean write() {
    BuildAttempts.finish(status, now);
    try {
      // Always written (it reports the outcome, a budget refusal included), charged afterwards.
      ownWrites.remember(
          prepaid
              ? StatusWriter.writePrepaid(client, filter, status)
              : StatusWriter.write(client, budget, filter, status, now));
    } catch (KubernetesClientException e) {
      if (!StorageFull.causedBy(e)) {
        throw e;
      }
      written = false;
      return false;
    }
    filter.setStatus(status);
    storageFull.cleared(filter);
    written = true;
    return true;
  }
}
