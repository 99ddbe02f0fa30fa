package io.bloomoperator.watch;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the served snapshot is written to the {@link LocalSnapshotCache}: after every swap, or at
 * most once per interval when the directory is shared with other processes (file mode). A change
 * stream publishes a delta every second or two, and each write is the whole payload (1.3 GB at 1B
 * keys), so a shared file is rewritten on a bounded cadence instead: a version served within the
 * interval after a write waits, and only the newest waiting one is written when the interval has
 * passed. The file then lags what is served by at most the interval (plus the write itself).
 *
 * <p>Confined to the watcher thread: {@link #offer} runs there after each swap, and the deferred
 * write is scheduled there.
 */
final class CacheWrites {

  private static final Logger LOG = LoggerFactory.getLogger(CacheWrites.class);

  private final LocalSnapshotCache cache;
  private final long intervalNanos;
  private final WatcherThread thread;
  private final BooleanSupplier closed;
  private final String filter;

  private boolean written;
  private long lastWriteNanos;
  private ServedSnapshot waiting;
  private ScheduledFuture<?> scheduled;

  /**
   * @param interval the least time between two writes; zero writes after every swap
   * @param closed whether the watch was closed (a deferred write is then dropped)
   */
  CacheWrites(
      LocalSnapshotCache cache,
      Duration interval,
      WatcherThread thread,
      BooleanSupplier closed,
      String filter) {
    this.cache = cache;
    this.intervalNanos = interval.toNanos();
    this.thread = thread;
    this.closed = closed;
    this.filter = filter;
  }

  /** {@code snapshot} is served from now on: write it now, or when the interval has passed. */
  void offer(ServedSnapshot snapshot) {
    long now = System.nanoTime();
    if (!written || intervalNanos == 0 || now - lastWriteNanos >= intervalNanos) {
      waiting = null;
      write(snapshot, now);
      return;
    }
    waiting = snapshot; // a newer version replaces one still waiting: only the newest is written
    if (scheduled == null) {
      scheduled =
          thread.schedule(
              this::writeWaiting, lastWriteNanos + intervalNanos - now, TimeUnit.NANOSECONDS);
    }
  }

  /** Versions served but not written yet (0 or 1). */
  int waiting() {
    return waiting == null ? 0 : 1;
  }

  private void writeWaiting() {
    scheduled = null;
    ServedSnapshot snapshot = waiting;
    waiting = null;
    if (snapshot != null && !closed.getAsBoolean()) {
      write(snapshot, System.nanoTime());
    }
  }

  private void write(ServedSnapshot snapshot, long now) {
    written = true;
    lastWriteNanos = now;
    try {
      cache.write(snapshot); // after the swap: the disk must never delay serving
    } catch (IOException | RuntimeException e) {
      LOG.warn("could not write local snapshot of {}: {}", filter, e.toString());
    }
  }
}
