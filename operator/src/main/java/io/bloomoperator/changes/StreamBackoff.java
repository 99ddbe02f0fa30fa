package io.bloomoperator.changes;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongUnaryOperator;

/**
 * When each filter's stream may be read again after failures. A broker that is down or never
 * answers costs a reconcile thread for up to {@link StreamLimits#maxCallTime()} per attempt, and a
 * streamed filter is reconciled every {@code publishEvery}: without a wait between attempts, one
 * tenant's dead bootstrap address would keep threads every namespace shares busy. The wait starts
 * at {@code publishEvery}, doubles with each failure in a row up to {@link
 * StreamLimits#maxBackoff()}, is spread at random (half of it to all of it, so streams that failed
 * together do not come back together) and ends with the first read that succeeds.
 */
public final class StreamBackoff {

  /** One failure recorded: how many in a row, until when the stream is left alone. */
  public record Failure(int inARow, Instant retryAt, boolean firstOfItsKind) {}

  private record State(int inARow, Instant retryAt, StreamException.Kind kind) {}

  private final Duration max;
  private final LongUnaryOperator jitter;
  private final Map<String, State> byUid = new HashMap<>();
  private final Map<String, Instant> budgetWaits = new HashMap<>();

  /** Backoff up to {@code max}, spread at random. */
  public StreamBackoff(Duration max) {
    this(max, millis -> millis / 2 + ThreadLocalRandom.current().nextLong(millis / 2 + 1));
  }

  /**
   * Backoff up to {@code max}; {@code jitter} turns the wait in milliseconds into the one used (at
   * most the wait).
   */
  StreamBackoff(Duration max, LongUnaryOperator jitter) {
    this.max = max;
    this.jitter = jitter;
  }

  /**
   * Until when the stream of {@code uid} is left alone; empty when it may be read at {@code now}.
   */
  public synchronized Optional<Instant> waiting(String uid, Instant now) {
    State state = byUid.get(uid);
    return state != null && now.isBefore(state.retryAt())
        ? Optional.of(state.retryAt())
        : Optional.empty();
  }

  /**
   * Records a failed attempt at {@code now} of the stream of {@code uid}, whose filter publishes
   * every {@code base}.
   *
   * @return the failures in a row, when to try again, and whether this is the first failure (of
   *     this kind) after the stream worked: the one to tell users about
   */
  public synchronized Failure failed(
      String uid, Duration base, Instant now, StreamException.Kind kind) {
    State was = byUid.get(uid);
    int inARow = was == null ? 1 : was.inARow() + 1;
    Instant retryAt = now.plusMillis(jitter.applyAsLong(wait(base, inARow).toMillis()));
    byUid.put(uid, new State(inARow, retryAt, kind));
    return new Failure(inARow, retryAt, was == null || was.kind() != kind);
  }

  /** The un-spread wait after {@code inARow} failures: base × 2^(inARow − 1), at most the max. */
  Duration wait(Duration base, int inARow) {
    Duration wait = base;
    for (int i = 1; i < inARow && wait.compareTo(max) < 0; i++) {
      wait = wait.multipliedBy(2);
    }
    return wait.compareTo(max) > 0 ? max : wait;
  }

  /** Records a read of {@code uid}'s stream that worked; true when it had been failing. */
  public synchronized boolean succeeded(String uid) {
    return byUid.remove(uid) != null;
  }

  /**
   * Records that a publish of {@code uid}'s stream was refused by a write budget that has room
   * again at {@code until}: reads wait for it (not a failure of the stream: no backoff, no event).
   */
  public synchronized void waitForBudget(String uid, Instant until) {
    budgetWaits.put(uid, until);
  }

  /** Until when {@code uid}'s stream waits for the write budget; empty when it need not. */
  public synchronized Optional<Instant> budgetWait(String uid, Instant now) {
    Instant until = budgetWaits.get(uid);
    if (until == null) {
      return Optional.empty();
    }
    if (!now.isBefore(until)) {
      budgetWaits.remove(uid);
      return Optional.empty();
    }
    return Optional.of(until);
  }

  /** Forgets {@code uid}: its stream was closed or reopened for a new spec. */
  public synchronized void forget(String uid) {
    byUid.remove(uid);
    budgetWaits.remove(uid);
  }
}
