package io.bloomoperator.watch;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with full jitter: the n-th {@link #next()} waits a uniformly random time
 * between zero and a cap that starts at {@code initial} and doubles up to {@code max}; {@link
 * #reset()} starts over. The jitter is the point: after an API-server restart, hundreds of reader
 * pods fail at the same instant, and without it they would all retry (and fail) in lockstep. Not
 * thread-safe; each user confines its instance to the watcher thread.
 */
final class Backoff {

  private final Duration initial;
  private final Duration max;
  private final DoubleSupplier random; // uniform in [0, 1]
  private Duration cap;

  Backoff(Duration initial, Duration max) {
    this(initial, max, () -> ThreadLocalRandom.current().nextDouble());
  }

  /**
   * @param random uniform in [0, 1]: the fraction of the current cap to wait (tests fix it)
   */
  Backoff(Duration initial, Duration max, DoubleSupplier random) {
    if (initial.isNegative() || initial.isZero() || max.compareTo(initial) < 0) {
      throw new IllegalArgumentException(
          "backoff needs 0 < initial <= max, got " + initial + ", " + max);
    }
    this.initial = initial;
    this.max = max;
    this.random = random;
    this.cap = initial;
  }

  /** The delay to wait now: up to the current cap; the cap after it is twice as large (capped). */
  Duration next() {
    Duration current = cap;
    Duration doubled = current.multipliedBy(2);
    cap = doubled.compareTo(max) > 0 ? max : doubled;
    double fraction = Math.min(1.0, Math.max(0.0, random.getAsDouble()));
    return Duration.ofNanos(Math.round(current.toNanos() * fraction));
  }

  void reset() {
    cap = initial;
  }
}
