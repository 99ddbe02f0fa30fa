package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * What the reading threads of one partitioned read hand to the build's thread: their items (line
 * blocks, batches of keys) through a queue of at most one item per reader, each reader's end, and
 * the first failure. The build's thread alone feeds the build's sink ({@link #drain}), as a read on
 * one thread does. A failure or {@link #stop} ends every reader at its next hand-over at the
 * latest, so none blocks on a queue that nobody drains any more.
 *
 * @param <T> what the readers hand over
 */
final class PartitionHandOver<T> {

  /** Hands one item to the build's sink, on the build's thread. */
  @FunctionalInterface
  interface Replay<T> {
    void replay(T item) throws SourceException;
  }

  /** The read was stopped: the reading thread ends quietly. */
  static final class Stopped extends RuntimeException {
    Stopped() {
      super(null, null, false, false);
    }
  }

  /** Ends the queue for one reader. */
  private static final Object END = new Object();

  /** Longest a blocked hand-over or drain goes without looking whether the read was stopped. */
  private static final long LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

  private final int readers;
  private final BlockingQueue<Object> queue;
  private final AtomicReference<SourceException> failure = new AtomicReference<>();
  private volatile boolean stopped;

  PartitionHandOver(int readers) {
    this.readers = readers;
    this.queue = new ArrayBlockingQueue<>(readers);
  }

  /**
   * Hands {@code item} over, waiting while the queue is full; on a reading thread.
   *
   * @throws Stopped when the read was stopped
   */
  void put(T item) {
    offer(item);
  }

  /** This reader has handed over everything; on a reading thread. */
  void ended() {
    offer(END);
  }

  /** Records the read's failure, unless it was stopped already, and stops it. */
  void fail(SourceException e) {
    if (!stopped) {
      failure.compareAndSet(null, e);
    }
    stop();
  }

  /** Stops the read: readers end at their next hand-over, the drain with the failure. */
  void stop() {
    stopped = true;
  }

  boolean stopped() {
    return stopped;
  }

  /**
   * Feeds every item to {@code replay} on the calling thread until every reader has ended.
   *
   * @param deadline {@link System#nanoTime()} after which the read fails with {@code timeout}
   * @throws SourceException the first reader's failure, the sink's, {@code timeout}, or that the
   *     read was stopped
   */
  void drain(Replay<T> replay, long deadline, Supplier<SourceException> timeout)
      throws SourceException {
    int ended = 0;
    while (ended < readers) {
      throwIfFailed();
      if (stopped) {
        throw new SourceException(Reasons.SOURCE_UNREADABLE, "the read was stopped");
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw timeout.get();
      }
      Object item;
      try {
        item = queue.poll(Math.min(left, LOOK_NANOS), TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new SourceException(Reasons.SOURCE_UNREADABLE, "the read was interrupted");
      }
      if (item == END) {
        ended++;
      } else if (item != null) {
        @SuppressWarnings("unchecked") // only put() adds items other than END
        T handed = (T) item;
        replay.replay(handed);
      }
    }
    throwIfFailed();
  }

  private void throwIfFailed() throws SourceException {
    SourceException failed = failure.get();
    if (failed != null) {
      throw failed;
    }
  }

  private void offer(Object item) {
    if (stopped) {
      throw new Stopped();
    }
    try {
      while (!queue.offer(item, LOOK_NANOS, TimeUnit.NANOSECONDS)) {
        if (stopped) {
          throw new Stopped();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Stopped();
    }
  }
}
