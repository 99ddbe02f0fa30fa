package io.bloomoperator.run;

import io.bloomoperator.api.ChangesSpec;
import io.bloomoperator.publish.PublishedSnapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What the steps of one reconcile hand on: the published state (trusted, after the clean-up), how
 * long the versions it replaced are still retained, the source's change token and the schedule's
 * decision.
 *
 * @param current the published state; its manifest is null when nothing of ours is published
 * @param graceLeft until the retained versions may go, if any are retained
 * @param token the source's change token, or null when it cannot tell
 */
public record RunState(
    PublishedSnapshot current, Optional<Duration> graceLeft, String token, Decision decision) {

  /** Whether a version of ours is published. */
  public boolean hasManifest() {
    return current != null && current.manifest() != null;
  }

  /** This state with {@code published} as the published state. */
  public RunState publishing(PublishedSnapshot published) {
    return new RunState(published, graceLeft, token, decision);
  }

  /** This state with {@code published} replacing a version now retained for {@code grace}. */
  public RunState replacing(PublishedSnapshot published, Duration grace) {
    return new RunState(published, Optional.of(grace), token, decision);
  }

  /**
   * When to reconcile again: the refresh after {@code builtAt}, or earlier for the end of a grace
   * period or the next re-stamp of the signed manifest.
   */
  public Optional<Duration> nextCheck(FilterRun run, Instant builtAt) {
    Instant now = run.now();
    Optional<Duration> wake =
        run.store()
            .restampDue(current, now)
            .map(d -> d.compareTo(Decision.MIN_DELAY) < 0 ? Decision.MIN_DELAY : d)
            .map(d -> graceLeft.filter(g -> g.compareTo(d) < 0).orElse(d))
            .or(() -> graceLeft);
    Optional<Duration> next =
        Decision.nextCheck(run.spec().refresh(), token != null, builtAt, wake, now);
    ChangesSpec changes = run.filter().getSpec().getChanges();
    if (changes == null) {
      return next;
    }
    // A change stream is read at every slot: the next reconcile is due when a delta may go out,
    // which is the published version's slot when it is still ahead (a reconcile that came early),
    // else publishEvery from now.
    Duration every = changes.publishInterval();
    Duration untilSlot = Duration.between(now, streamSlot(now, every));
    Duration stream = untilSlot.isNegative() || untilSlot.isZero() ? every : untilSlot;
    return Optional.of(next.filter(d -> d.compareTo(stream) < 0).orElse(stream));
  }

  /**
   * When the next stream delta may be published: {@code every} ({@code spec.changes.publishEvery})
   * after the published version was written, so a filter publishes at most once per interval
   * whatever triggers its reconciles (its own manifest and status writes, reader reports). A
   * version written later than {@code now} (another replica's clock) counts as written now, so the
   * slot is never more than {@code every} away.
   */
  public Instant streamSlot(Instant now, Duration every) {
    Instant written = current == null ? null : current.publishedAt();
    if (written == null) {
      return now;
    }
    return (written.isAfter(now) ? now : written).plus(every);
  }
}
