package io.bloomoperator.changes;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The operator-wide rules every stream is asked within, in the order they are applied: a stream
 * that failed lately is left alone ({@link StreamBackoff}); a namespace has at most its share of
 * reads under way ({@link StreamReadPlaces}); a read reserves the heap it may hold ({@link
 * StreamReadBudget}). What cannot go ahead now is deferred, never waited for on the thread.
 */
public final class StreamReads {

  /** One question to a stream, given the key bytes it may collect (0 when it collects none). */
  @FunctionalInterface
  interface Ask<T> {
    T run(long keyBytes) throws StreamException;
  }

  private final StreamLimits limits;
  private final StreamBackoff backoff;
  private final StreamReadPlaces places;
  private final StreamReadBudget budget;

  public StreamReads(StreamLimits limits) {
    this(
        limits,
        new StreamBackoff(limits.maxBackoff()),
        new StreamReadPlaces(limits.readsPerNamespace()),
        new StreamReadBudget(limits.readBytes(), limits.namespaceReadBytes()));
  }

  StreamReads(
      StreamLimits limits,
      StreamBackoff backoff,
      StreamReadPlaces places,
      StreamReadBudget budget) {
    this.limits = limits;
    this.backoff = backoff;
    this.places = places;
    this.budget = budget;
  }

  /** Every stream's backoff. */
  public StreamBackoff backoff() {
    return backoff;
  }

  /** The read heap (for tests and diagnostics). */
  public StreamReadBudget budget() {
    return budget;
  }

  <T> StreamRead<T> ask(
      String uid,
      String namespace,
      Duration publishEvery,
      Instant now,
      boolean collects,
      Ask<T> ask) {
    Optional<Instant> until = backoff.waiting(uid, now);
    if (until.isPresent()) {
      return new StreamRead.Deferred<>(StreamRead.Deferral.BACKOFF, until.get());
    }
    Optional<Instant> budgetWait = collects ? backoff.budgetWait(uid, now) : Optional.empty();
    if (budgetWait.isPresent()) {
      return new StreamRead.Deferred<>(StreamRead.Deferral.WRITE_BUDGET, budgetWait.get());
    }
    Optional<StreamReadPlaces.Place> place = places.enter(namespace);
    if (place.isEmpty()) {
      return new StreamRead.Deferred<>(StreamRead.Deferral.READS, null);
    }
    try (StreamReadPlaces.Place held = place.get()) {
      StreamReadBudget.Grant grant = null;
      if (collects) {
        Optional<StreamReadBudget.Grant> granted =
            budget.take(namespace, limits.minReadBytes(), limits.fullReadBytes());
        if (granted.isEmpty()) {
          return new StreamRead.Deferred<>(StreamRead.Deferral.BYTES, null);
        }
        grant = granted.get();
      }
      try {
        T value = ask.run(grant == null ? 0 : grant.bytes() - limits.readOverhead());
        return new StreamRead.Done<>(value, backoff.succeeded(uid), grant);
      } catch (StreamException e) {
        close(grant);
        if (e.kind() == StreamException.Kind.POSITION_LOST) {
          // A full build follows at once; the stream itself answered.
          backoff.succeeded(uid);
          return new StreamRead.Failed<>(e, null);
        }
        return new StreamRead.Failed<>(e, backoff.failed(uid, publishEvery, now, e.kind()));
      } catch (RuntimeException | Error e) {
        close(grant);
        throw e;
      }
    }
  }

  private static void close(StreamReadBudget.Grant grant) {
    if (grant != null) {
      grant.close();
    }
  }
}
