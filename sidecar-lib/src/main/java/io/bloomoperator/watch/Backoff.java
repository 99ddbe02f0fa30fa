package io.bloomoperator.watch;

import java.time.Duration;

/**
 * Exponential backoff: initial, doubled on every {@link #next()} up to max, back to initial on
 * {@link #reset()}. Not thread-safe; each user confines its instance to the watcher thread.
 */
final class Backoff {

  private final Duration initial;
  private final Duration max;
  private Duration next;

  Backoff(Duration initial, Duration max) {
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException(
          "backoff needs 0 < initial <= max, got " + initial + ", " + max);
    }
    this.initial = initial;
    this.max = max;
    this.next = initial;
  }

  /** The delay to wait now; the one after will be twice as long (capped). */
  Duration next() {
    Duration current = next;
    Duration doubled = current.multipliedBy(2);
    next = doubled.compareTo(max) > 0 ? max : doubled;
    return current;
  }

  void reset() {
    next = initial;
  }
}
