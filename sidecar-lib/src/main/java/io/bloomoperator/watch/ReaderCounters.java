package io.bloomoperator.watch;

import io.bloomoperator.snapshot.LoadFailureReason;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters behind a {@link LiveBloomFilter}'s metrics: lookups and maybe-present answers
 * (incremented on the lookup path, so {@link LongAdder}s: contended lookups must not share a CAS),
 * reported outcomes, failed loads by reason, and the per-version window the observed false-positive
 * rate is computed from. The first listener of its watch loop, so it learns of swaps and failures
 * without the loop knowing about it.
 *
 * <p>The window is replaced on each swap, on the watcher thread, from the snapshot the loop serves
 * at that moment. It takes the lookup totals as its baseline rather than counting lookups itself,
 * which keeps the lookup path at one or two increments; the price is that lookups racing the swap
 * (the microseconds between the new snapshot's installation and this listener's call) are counted
 * in the previous version's window. Outcomes are counted only for the snapshot the window belongs
 * to, compared by identity.
 */
final class ReaderCounters implements BloomFilterListener {

  final LongAdder lookups = new LongAdder();
  final LongAdder maybePresent = new LongAdder();
  private final LongAdder truePositives = new LongAdder();
  private final LongAdder falsePositives = new LongAdder();
  private final LongAdder[] failures = new LongAdder[LoadFailureReason.values().length];

  private volatile Window window = new Window(null, 0, 0);
  private volatile LoadFailure lastFailure;
  private SnapshotSource loop; // set before the loop starts, read on the watcher thread only

  ReaderCounters() {
    for (int i = 0; i < failures.length; i++) {
      failures[i] = new LongAdder();
    }
  }

  /** The source whose served snapshot each new window belongs to; called once, before it starts. */
  void attach(SnapshotSource source) {
    this.loop = source;
  }

  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    window = new Window(loop.serving(), lookups.sum(), maybePresent.sum());
  }

  @Override
  public void onFailure(long version, Exception exception) {
    LoadFailureReason reason = LoadFailureReason.of(exception);
    failures[reason.ordinal()].increment();
    lastFailure = new LoadFailure(version, reason, Instant.now());
  }

  /** Counts an outcome if {@code answeredBy} is the snapshot the current window belongs to. */
  void recordOutcome(ServedSnapshot answeredBy, boolean found) {
    Window current = window;
    if (current.snapshot != answeredBy) {
      return; // a swap is in progress: the outcome belongs to no complete window
    }
    (found ? current.truePositives : current.falsePositives).increment();
    (found ? truePositives : falsePositives).increment();
  }

  FalsePositiveObservation observation() {
    Window current = window;
    return new FalsePositiveObservation(
        current.snapshot == null ? LiveBloomFilter.NO_VERSION : current.snapshot.version(),
        lookups.sum() - current.lookupsBefore,
        maybePresent.sum() - current.maybePresentBefore,
        current.truePositives.sum(),
        current.falsePositives.sum());
  }

  long truePositives() {
    return truePositives.sum();
  }

  long falsePositives() {
    return falsePositives.sum();
  }

  long failures(LoadFailureReason reason) {
    return failures[reason.ordinal()].sum();
  }

  LoadFailure lastFailure() {
    return lastFailure;
  }

  /** One served version's outcome counts, and the lookup totals when it was swapped in. */
  private static final class Window {
    final ServedSnapshot snapshot; // null before the first
    final long lookupsBefore;
    final long maybePresentBefore;
    final LongAdder truePositives = new LongAdder();
    final LongAdder falsePositives = new LongAdder();

    Window(ServedSnapshot snapshot, long lookupsBefore, long maybePresentBefore) {
      this.snapshot = snapshot;
      this.lookupsBefore = lookupsBefore;
      this.maybePresentBefore = maybePresentBefore;
    }
  }
}
