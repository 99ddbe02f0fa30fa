package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * How the reading threads of one partitioned read (a jdbc source's connections, {@link
 * PartitionedRead}; an http source's URLs, {@link HttpPartitionedRead}) put their keys into the
 * build ({@link KeyLanes}). Each reading thread writes through a {@link Feed} of its own: until the
 * build's lanes are out it hands its keys themselves to the build's thread ({@link KeyBatch}es of
 * values, {@link LineBlock}s as the source made them); from then on it parses, hashes and inserts
 * them through a lane of its own and hands over only their counts, every {@value KeyBatch#MAX_KEYS}
 * keys. The build's thread ({@link #drain}) replays what it is handed into the build's sink, asks
 * the sink for lanes once after the first replay (the sink has allocated its filter by then, or may
 * now) and publishes them to the feeds, and merges the counts in the order they come: the
 * malformed-key limit, progress and the build guard's stall check all run there, as for a read on
 * one thread.
 *
 * <p><b>Bounds.</b> The queue holds at most one item per reader (a batch, a block, counts or the
 * reader's end), so a reader that is ahead waits; a feed with a lane hands over only counts. The
 * drain fails at its deadline. A failure (the first is kept and thrown; a message the reader chose,
 * never the source's own text) or {@link #stop} ends every reader at its next key or hand-over at
 * the latest, so none blocks on a queue that nobody drains any more, and none puts another key.
 */
final class PartitionHandOver {

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

  /** The build's lanes once its thread has asked for them (null: none yet, or none at all). */
  private volatile KeyLanes lanes;

  PartitionHandOver(int readers) {
    this.readers = readers;
    this.queue = new ArrayBlockingQueue<>(readers);
  }

  /** A feed for the calling reading thread alone. */
  Feed feed() {
    return new Feed();
  }

  /**
   * This reader has handed over everything (after its feed's {@link Feed#end()}); on a reading
   * thread.
   *
   * @throws Stopped when the read was stopped
   */
  void ended() {
    put(END);
  }

  /** Records the read's failure, unless it was stopped already, and stops it. */
  void fail(SourceException e) {
    if (!stopped) {
      failure.compareAndSet(null, e);
    }
    stop();
  }

  /** Stops the read: readers end at their next key or hand-over, the drain with the failure. */
  void stop() {
    stopped = true;
  }

  boolean stopped() {
    return stopped;
  }

  /**
   * Feeds {@code sink} on the calling thread (the build's) until every reader has ended: replays
   * batches and blocks into it, publishes its lanes after the first, merges counts into them.
   *
   * @param deadline {@link System#nanoTime()} after which the read fails with {@code timeout}
   * @throws SourceException the first reader's failure, the sink's or a merge's (malformed-key
   *     limit, a stopped build), {@code timeout}, or that the read was stopped
   */
  void drain(KeySink sink, long deadline, Supplier<SourceException> timeout)
      throws SourceException {
    int ended = 0;
    boolean asked = false;
    KeyLanes given = null;
    while (ended < readers) {
      throwIfFailed();
      if (stopped) {
        // A cancel: the build stopped the read, as a dropped connection ends a single one.
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
      if (item == null) {
        continue;
      }
      if (item == END) {
        ended++;
      } else if (item instanceof LineParser.Counts counts) {
        // Only a feed with a lane hands counts over, and lanes go out only after `given` is set.
        given.merge(counts);
      } else {
        if (item instanceof KeyBatch batch) {
          batch.replay(sink);
        } else {
          sink.lines((LineBlock) item);
        }
        if (!asked) {
          asked = true;
          given = sink.lanes();
          lanes = given;
        }
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

  /** Hands {@code item} over, waiting while the queue is full; on a reading thread. */
  private void put(Object item) {
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

  /**
   * One reading thread's keys on their way into the build, as rows ({@link #value}, {@link
   * #nullValue}) or lines ({@link #lines}, {@link #line}): in batches or blocks to the build's
   * thread until the build's lanes are out, then through a lane of its own, which applies the line
   * rules and the parse per key type exactly as the build's thread does, its counts handed over
   * every {@value KeyBatch#MAX_KEYS} keys (lines and rows alike). Not thread-safe. Every call
   * throws {@link Stopped} once the read was stopped, so the thread puts no further key.
   */
  final class Feed implements KeySink {

    /** Values not handed over yet, while there is no lane; null when none are waiting. */
    private KeyBatch batch;

    private KeyLanes.Lane lane;
    private int uncounted;

    private Feed() {}

    @Override
    public void line(String rawLine) throws SourceException {
      if (laneOrStopped()) {
        lane.line(rawLine);
        counted(1);
      } else {
        lines(LineBlock.of(rawLine));
      }
    }

    @Override
    public void lines(LineBlock block) throws SourceException {
      if (laneOrStopped()) {
        lane.lines(block);
        counted(block.count());
        return;
      }
      // Values batched before stay ahead of the block.
      handBatch();
      put(block);
      laneIfOut();
    }

    @Override
    public void value(String key) throws SourceException {
      into().value(key);
      taken();
    }

    @Override
    public void value(long key) throws SourceException {
      into().value(key);
      taken();
    }

    @Override
    public void nullValue() {
      into().nullValue();
      taken();
    }

    /**
     * After this thread's last key: the keys it holds go to the build (its lane flushed before its
     * last counts are handed over, so the build finds every key once all readers have ended). Then
     * {@link PartitionHandOver#ended()}.
     */
    void end() {
      handBatch();
      if (lane != null) {
        lane.flush();
        put(lane.take());
      }
    }

    /** Whether this thread has a lane; throws {@link Stopped} once the read was stopped. */
    private boolean laneOrStopped() {
      if (stopped) {
        throw new Stopped();
      }
      return lane != null;
    }

    /** Where the next value goes: this thread's lane once it has one, else the batch filling. */
    private KeySink into() {
      if (laneOrStopped()) {
        return lane;
      }
      if (batch == null) {
        batch = new KeyBatch();
      }
      return batch;
    }

    /** After a value: counts it, or hands its batch over when full. */
    private void taken() {
      if (lane != null) {
        counted(1);
      } else if (batch.full()) {
        handBatch();
        laneIfOut();
      }
    }

    private void handBatch() {
      if (batch != null && !batch.isEmpty()) {
        put(batch);
      }
      // Never filled again: the build's thread replays it.
      batch = null;
    }

    /** Takes a lane once the build has published its lanes; checked after each hand-over. */
    private void laneIfOut() {
      KeyLanes out = lanes;
      if (out != null) {
        lane = out.lane();
      }
    }

    private void counted(int keys) {
      uncounted += keys;
      if (uncounted >= KeyBatch.MAX_KEYS) {
        uncounted = 0;
        put(lane.take());
      }
    }
  }
}
