package io.bloomoperator.build;

import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.changes.ChangeStream;
import io.bloomoperator.changes.FilterChanges;
import io.bloomoperator.changes.StreamException;
import io.bloomoperator.changes.StreamPosition;
import io.bloomoperator.changes.StreamRead;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.RunState;
import io.bloomoperator.run.Step;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * Between full builds, publishes what the filter's change stream added since the published version
 * ({@code spec.changes}): reads from the position that version records, adds the keys to its bits
 * and publishes the result with the new position ({@link BuildAndPublish#publishChanges}; deletes
 * too, with counting deletions), as a delta when the plan finds one cheaper. Runs only when the
 * schedule says the filter is up to date; a full build due now records its own position instead. A
 * position the stream lost (retention passed it) makes this reconcile a full build. Stream failures
 * never fail the filter: the published version keeps serving, and {@code status.stream.message} and
 * a Warning event say why it is not fresh.
 */
public final class StreamStep implements Step {

  private final BuildAndPublish act;
  private final BuildMetrics metrics;

  public StreamStep(BuildAndPublish act, BuildMetrics metrics) {
    this.act = act;
    this.metrics = metrics;
  }

  @Override
  public Next apply(FilterRun run, RunState state) throws PublishException {
    FilterChanges changes = run.changes();
    if (changes == null) {
      return Next.go(state);
    }
    if (state.decision().action() != Decision.Action.UP_TO_DATE || !state.hasManifest()) {
      return Next.go(state);
    }
    PublishedSnapshot current = state.current();
    StreamStatus status = copy(run.report().stream());
    if (current.streamPosition() == null) {
      return withoutPosition(run, state, changes, status);
    }
    StreamPosition from;
    try {
      from = StreamPosition.parse(current.streamPosition());
    } catch (IllegalArgumentException e) {
      return failed(
          run,
          state,
          status,
          "the published stream position is not one this operator"
              + " writes; the next full build records a new one",
          true);
    }
    if (run.now().isBefore(state.streamSlot(run.now(), changes.spec().publishInterval()))) {
      // Within publishEvery of the last publish (this reconcile came early: a manifest or status
      // write, a reader report). Nothing is read: the events stay in the stream after the
      // published position and go into the delta at the slot, when the next reconcile is due.
      return Next.go(state);
    }
    try (StreamRead<ChangeStream.Batch> read = changes.read(from, run.now())) {
      if (read instanceof StreamRead.Deferred<ChangeStream.Batch> deferred) {
        // Not a failure: the status and events stay as they are; read again next time.
        metrics.streamDeferred(deferred.reason().tag());
        return Next.go(state);
      }
      if (read instanceof StreamRead.Failed<ChangeStream.Batch> failure) {
        metrics.streamFailed(failure.error().tag());
        metrics.streamLag(run.filter(), null);
        return failed(
            run,
            state,
            status,
            failure,
            failure.error().kind() == StreamException.Kind.POSITION_LOST);
      }
      return publish(
          run, state, status, from, ((StreamRead.Done<ChangeStream.Batch>) read).value());
    }
  }

  /** Publishes what one read found, while the heap it reserved is still held. */
  private Next publish(
      FilterRun run,
      RunState state,
      StreamStatus status,
      StreamPosition from,
      ChangeStream.Batch batch)
      throws PublishException {
    PublishedSnapshot current = state.current();
    status.setMessage(null);
    status.setLag(batch.lag() >= 0 ? batch.lag() : null);
    metrics.streamLag(run.filter(), status.getLag());
    if (batch.next().equals(from)) {
      status.setPosition(from.text());
      report(run, status);
      return Next.go(state);
    }
    // Deletes and malformed events move the position too: it is published even without adds, so
    // they are not read again on every reconcile.
    Optional<BuildAndPublish.StreamPublished> published;
    try {
      published = act.publishChanges(run, current, batch);
    } catch (PublishException e) {
      if (!StreamBudgetWait.refused(e)) {
        throw e;
      }
      return waitForBudget(run, state, status, e, StreamBudgetWait.until(e, run.now()));
    }
    if (published.isEmpty()) {
      report(run, status);
      return Next.go(state); // the namespace's builds are running; read again next time
    }
    metrics.streamPublished(
        batch.adds().size(), batch.deletes(), batch.malformed(), batch.oldest(), Instant.now());
    status.setPosition(batch.next().text());
    status.setLastDeltaAt(run.now().toString());
    status.setAddsApplied(plus(status.getAddsApplied(), batch.adds().size()));
    BuildAndPublish.StreamPublished done = published.get();
    status.setDeletionsPending(plus(status.getDeletionsPending(), done.deletesPending()));
    if (run.changes().spec().counting()) {
      status.setDeletionsApplied(plus(status.getDeletionsApplied(), done.deletesApplied()));
      said(run, status, done.deletions());
    }
    status.setMalformedEvents(plus(status.getMalformedEvents(), batch.malformed()));
    report(run, status);
    return Next.go(state.publishing(done.published().state()));
  }

  /**
   * A stream publish the write budget refused: not a failure of the filter, whose published version
   * keeps serving and stays Ready. The stream is not read again before the budget has room (what is
   * read could not be published), then resumes from the published position, so nothing is lost. The
   * status says so at every refusal; a Warning event only when the waiting starts.
   */
  private Next waitForBudget(
      FilterRun run,
      RunState state,
      StreamStatus status,
      PublishException refusal,
      Optional<Instant> until) {
    run.changes().waitForBudget(until, run.now());
    metrics.streamDeferred(StreamRead.Deferral.WRITE_BUDGET.tag());
    boolean said =
        status.getMessage() != null && status.getMessage().startsWith(StreamBudgetWait.PREFIX);
    String message = StreamBudgetWait.PREFIX + refusal.getMessage();
    if (!said) {
      run.events().warning(run.filter(), StreamBudgetWait.EVENT, message);
    }
    status.setMessage(message);
    report(run, status);
    return Next.go(state);
  }

  /**
   * The published version records no position (published before {@code spec.changes}, or while the
   * stream could not be read): once the stream answers, a full build starts it from a position
   * consistent with a scan; until then the status says why not.
   */
  private Next withoutPosition(
      FilterRun run, RunState state, FilterChanges changes, StreamStatus status) {
    try (StreamRead<StreamPosition> probe = changes.probeStart(run.now(), run.now())) {
      if (probe instanceof StreamRead.Deferred<StreamPosition> deferred) {
        metrics.streamDeferred(deferred.reason().tag());
        return Next.go(state);
      }
      if (probe instanceof StreamRead.Failed<StreamPosition> failure) {
        metrics.streamFailed(failure.error().tag());
        return failed(run, state, status, failure, false);
      }
    }
    return failed(
        run,
        state,
        status,
        "the published version records no stream position; a full build starts the stream",
        true);
  }

  /**
   * A failed read: said in the status at every attempt (with when it is tried again), and in a
   * Warning event only when the stream starts failing (or fails otherwise), not at every attempt of
   * its backoff; nor again after a restart when the status already says it.
   */
  private static Next failed(
      FilterRun run,
      RunState state,
      StreamStatus status,
      StreamRead.Failed<?> failure,
      boolean rebuild) {
    String reason = failure.error().getMessage();
    boolean said = status.getMessage() != null && status.getMessage().startsWith(reason);
    if (failure.news() && !said) {
      run.events().warning(run.filter(), StreamPublish.EVENT_STREAM_FAILED, reason);
    }
    return record(run, state, status, failure.message(), rebuild);
  }

  private static Next failed(
      FilterRun run, RunState state, StreamStatus status, String message, boolean rebuild) {
    if (!Objects.equals(message, status.getMessage())) {
      run.events().warning(run.filter(), StreamPublish.EVENT_STREAM_FAILED, message);
    }
    return record(run, state, status, message, rebuild);
  }

  private static Next record(
      FilterRun run, RunState state, StreamStatus status, String message, boolean rebuild) {
    status.setMessage(message);
    report(run, status);
    if (!rebuild) {
      return Next.go(state);
    }
    // Only a full build catches up: it reads the source and records a position the stream has.
    return Next.go(
        new RunState(
            state.current(),
            state.graceLeft(),
            state.token(),
            new Decision(Decision.Action.BUILD, Duration.ZERO, false)));
  }

  /** Writes {@code status}, with what the stream holds outside the operator (its slot, its log). */
  private static void report(FilterRun run, StreamStatus status) {
    if (run.changes() != null) {
      run.changes().describe(status);
    }
    run.report().stream(status);
  }

  /**
   * Says in {@code status.stream.deletions} how deletes are applied, and in a Warning event when
   * counting stops (once, not at every publish).
   */
  private static void said(FilterRun run, StreamStatus status, String deletions) {
    if (deletions == null || deletions.equals(status.getDeletions())) {
      return;
    }
    if (!CountingDeletions.COUNTING.equals(deletions)) {
      run.events().warning(run.filter(), CountingDeletions.EVENT_COUNTING_OFF, deletions);
    }
    status.setDeletions(deletions);
  }

  private static long plus(Long total, long more) {
    return (total == null ? 0 : total) + more;
  }

  private static StreamStatus copy(StreamStatus was) {
    StreamStatus now = new StreamStatus();
    if (was != null) {
      now.setPosition(was.getPosition());
      now.setLag(was.getLag());
      now.setLastDeltaAt(was.getLastDeltaAt());
      now.setAddsApplied(was.getAddsApplied());
      now.setDeletionsPending(was.getDeletionsPending());
      now.setDeletionsApplied(was.getDeletionsApplied());
      now.setDeletions(was.getDeletions());
      now.setMalformedEvents(was.getMalformedEvents());
      now.setMessage(was.getMessage());
      now.setSlot(was.getSlot());
      now.setRetainedWalBytes(was.getRetainedWalBytes());
    }
    return now;
  }
}
