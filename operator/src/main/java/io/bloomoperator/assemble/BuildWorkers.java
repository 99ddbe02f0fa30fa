package io.bloomoperator.assemble;

import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads that hash keys and set bits for the builds of one operator, shared by every build. A
 * build uses {@link #threadsPerBuild()} threads: its own (which reads the source, and hashes
 * whenever the others are busy) plus up to {@code threadsPerBuild - 1} helpers from a pool of
 * {@code helpersPerBuild × builds} threads. The operator sizes the pool for its build slots, and a
 * build uses helpers only while it holds one, so every slot's build gets its full share and the
 * threads hashing at once stay at most slots × {@code threadsPerBuild}, whatever the tenants do; a
 * namespace's share is bounded by the slots it may hold. Should the pool ever be busy, a build does
 * not wait for it: its own thread does the work. A source that reads on several threads ({@link
 * io.bloomoperator.source.KeyLanes}: a partitioned jdbc read) hashes on those threads too; they are
 * bounded by the source's own shares (jdbc: the partition connection shares), not by this pool.
 */
public final class BuildWorkers {

  private static final AtomicInteger THREADS = new AtomicInteger();

  private final int threadsPerBuild;
  private final ThreadPoolExecutor pool;

  private BuildWorkers(int threadsPerBuild, int builds) {
    if (threadsPerBuild < 1 || builds < 1) {
      throw new IllegalArgumentException("threads per build and builds must be positive");
    }
    this.threadsPerBuild = threadsPerBuild;
    int size = (int) Math.min(1024, (long) (threadsPerBuild - 1) * builds);
    if (size == 0) {
      pool = null;
      return;
    }
    pool =
        new ThreadPoolExecutor(
            size,
            size,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread thread = new Thread(r, "bloom-build-worker-" + THREADS.incrementAndGet());
              thread.setDaemon(true);
              return thread;
            });
    // Idle between builds: no thread is kept for a build that may not come.
    pool.allowCoreThreadTimeOut(true);
  }

  /**
   * Workers for {@code builds} builds at once of {@code threadsPerBuild} threads each (the build's
   * own thread included).
   */
  public static BuildWorkers of(int threadsPerBuild, int builds) {
    return new BuildWorkers(threadsPerBuild, builds);
  }

  /** Every build on its own thread only. */
  public static BuildWorkers singleThreaded() {
    return new BuildWorkers(1, 1);
  }

  /** One build at a time (the CLI) on every CPU the JVM may use, at most {@code max}. */
  public static BuildWorkers allProcessors(int max) {
    return new BuildWorkers(
        Math.max(1, Math.min(max, Runtime.getRuntime().availableProcessors())), 1);
  }

  /** Threads one build uses, its own included. */
  public int threadsPerBuild() {
    return threadsPerBuild;
  }

  Future<?> submit(Runnable helper) {
    return pool.submit(helper);
  }

  /** Takes a helper that has not started out of the queue (its build is over). */
  void withdraw(Future<?> helper) {
    helper.cancel(false);
    if (helper instanceof Runnable queued) {
      pool.remove(queued);
    }
  }
}
