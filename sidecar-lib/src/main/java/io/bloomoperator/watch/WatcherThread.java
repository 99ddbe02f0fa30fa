package io.bloomoperator.watch;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one background thread of a watcher. Every state change (manifest events, loads, retries,
 * informer restarts, resyncs) runs here, one after the other, so that state needs no locks and two
 * loads never race. A daemon thread: a forgotten {@code close()} must not keep the application
 * alive.
 */
final class WatcherThread {

  private static final Logger LOG = LoggerFactory.getLogger(WatcherThread.class);

  private final ScheduledExecutorService executor;
  private volatile Thread thread;

  WatcherThread(String name) {
    ScheduledThreadPoolExecutor pool =
        new ScheduledThreadPoolExecutor(
            1,
            runnable -> {
              Thread created = new Thread(runnable, name);
              created.setDaemon(true);
              thread = created;
              return created;
            });
    pool.setRemoveOnCancelPolicy(true); // cancelled retries must not pile up
    this.executor = pool;
  }

  /** Runs {@code task} soon; silently dropped once the watcher is closed. */
  void execute(Runnable task) {
    try {
      executor.execute(guarded(task));
    } catch (RejectedExecutionException e) {
      LOG.trace("watcher closed, dropping task");
    }
  }

  /** Runs {@code task} after a delay; null once the watcher is closed. */
  ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
    try {
      return executor.schedule(guarded(task), delay, unit);
    } catch (RejectedExecutionException e) {
      return null;
    }
  }

  /** Runs {@code task} every {@code period} after an initial {@code period}; null once closed. */
  ScheduledFuture<?> scheduleWithFixedDelay(Runnable task, long period, TimeUnit unit) {
    try {
      return executor.scheduleWithFixedDelay(guarded(task), period, period, unit);
    } catch (RejectedExecutionException e) {
      return null;
    }
  }

  /**
   * Runs {@code task} on this thread and waits for it (close only). An interrupt of the caller does
   * not cut the wait short: close() must not leave its stop task unrun (that would leak the watch);
   * the interrupt flag is restored afterwards.
   */
  <T> T callAndWait(Callable<T> task) {
    Future<T> future;
    try {
      future = executor.submit(task);
    } catch (RejectedExecutionException e) {
      return null;
    }
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return future.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          throw new IllegalStateException("watcher task failed", e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether the caller is this thread (a listener closing its own filter, say). */
  boolean isCurrent() {
    return Thread.currentThread() == thread;
  }

  /** Stops the thread; queued and scheduled tasks are dropped. */
  void shutdown() {
    executor.shutdownNow();
  }

  // An exception escaping a periodic task would silently cancel all its future runs.
  private static Runnable guarded(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        // Never let a throwable escape: the executor would swallow it silently and cancel a
        // periodic task (the resync) for good. The current filter keeps serving either way.
        LOG.error("unexpected error in bloom filter watcher", e);
      }
    };
  }
}
