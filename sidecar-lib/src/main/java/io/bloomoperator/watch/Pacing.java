package io.bloomoperator.watch;

import java.time.Clock;
import java.time.Duration;

/**
 * When a {@link WatchLoop} acts: the one thread it runs on, the backoff between retries of a failed
 * load, the interval of the resync poll ({@link Duration#ZERO}: none), the clock manifests' age is
 * measured with, and the least time between two writes of the local snapshot ({@link
 * Duration#ZERO}: after every swap; see {@link CacheWrites}).
 */
record Pacing(
    WatcherThread thread,
    Backoff retryBackoff,
    Duration resync,
    Clock clock,
    Duration localSnapshotInterval) {

  /** Pacing that writes the local snapshot after every swap. */
  Pacing(WatcherThread thread, Backoff retryBackoff, Duration resync, Clock clock) {
    this(thread, retryBackoff, resync, clock, Duration.ZERO);
  }
}
