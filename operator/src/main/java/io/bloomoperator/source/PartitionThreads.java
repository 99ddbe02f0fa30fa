package io.bloomoperator.source;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The reading threads of one partitioned read and the connection share they read on: the share goes
 * back to its {@link PartitionShares} table when the last of them has ended (each closes its
 * connection before it ends), not when the build stops waiting for them. A thread the read's stop
 * cannot end at once (a driver call that ignores the abort) thus keeps its connection counted, and
 * a namespace cannot open more connections than its share by starting new reads beside threads that
 * outlived the last one.
 */
final class PartitionThreads {

  private final PartitionShares.Held share;
  private final Thread[] threads;
  private final long joinMillis;
  private final AtomicInteger running;
  private int started;
  private boolean joined;

  /**
   * @param share given back once every one of the {@code count} threads has ended (or was never
   *     started)
   * @param joinMillis how long {@link #join} waits for them
   */
  PartitionThreads(PartitionShares.Held share, int count, long joinMillis) {
    this.share = share;
    this.threads = new Thread[count];
    this.joinMillis = joinMillis;
    this.running = new AtomicInteger(count);
  }

  /** Starts the next thread, a daemon named {@code name}, running {@code work}. */
  void start(Runnable work, String name) {
    Thread t =
        new Thread(
            () -> {
              try {
                work.run();
              } finally {
                ended();
              }
            },
            name);
    t.setDaemon(true);
    threads[started] = t;
    t.start();
    started++;
  }

  /**
   * Counts the threads never started as ended, then waits up to the join bound for the others.
   * Those still running afterwards keep the share until they end.
   */
  void join() {
    if (!joined) {
      joined = true;
      for (int i = started; i < threads.length; i++) {
        ended();
      }
    }
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(joinMillis);
    for (int i = 0; i < started; i++) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        threads[i].join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Threads not ended yet (started or not). */
  int running() {
    return running.get();
  }

  private void ended() {
    if (running.decrementAndGet() == 0) {
      share.close();
    }
  }
}
