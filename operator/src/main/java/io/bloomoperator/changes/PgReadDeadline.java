package io.bloomoperator.changes;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * One deadline over a whole PostgreSQL stream call (connecting, the checks, the slot, decoding):
 * the time the call may hold its reconcile thread, which every namespace shares. Each connection
 * the call makes or uses hands over an action closing its sockets ({@link #add}); when the deadline
 * passes they are all run, so whatever the call is blocked on (a connect or login to a server that
 * accepts and never answers, a statement or a message that never comes) fails at once, rather than
 * at the end of each step's own timeout in turn.
 */
final class PgReadDeadline implements AutoCloseable {

  /** One timer for every stream: its task only closes sockets, which does not block. */
  private static final ScheduledThreadPoolExecutor TIMER = timer();

  private final long at;
  private final List<Runnable> aborts = new CopyOnWriteArrayList<>();
  private final ScheduledFuture<?> task;
  private volatile boolean passed;
  private boolean closed;

  PgReadDeadline(Duration within) {
    this.at = System.nanoTime() + within.toNanos();
    this.task = TIMER.schedule(this::pass, within.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Runs {@code abort} when the deadline passes (at once, when it has). */
  void add(Runnable abort) {
    aborts.add(abort);
    if (passed) {
      abort.run();
    }
  }

  /** Whether the deadline passed (and the call's connections were closed). */
  boolean passed() {
    return passed;
  }

  /** {@link System#nanoTime()} at the deadline. */
  long at() {
    return at;
  }

  private synchronized void pass() {
    if (closed) {
      return;
    }
    passed = true;
    for (Runnable abort : aborts) {
      try {
        abort.run();
      } catch (RuntimeException ignored) {
        // Each abort only closes sockets; one failing does not keep the others open.
      }
    }
  }

  /** Ends the deadline: nothing is closed after this returns (see {@link #passed()} for before). */
  @Override
  public synchronized void close() {
    closed = true;
    task.cancel(false);
  }

  private static ScheduledThreadPoolExecutor timer() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread thread = new Thread(r, "pg-stream-deadline");
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }
}
