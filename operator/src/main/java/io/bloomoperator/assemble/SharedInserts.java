package io.bloomoperator.assemble;

import io.bloomoperator.source.LineParser;

/**
 * How the threads of one build insert keys once a helper inserts too (after the reader's first
 * hand-over): each thread through a {@link Lane} of its own, which a layout implements with what
 * keeps the bits those of one thread. The split-block layout routes hashes to the owner of their
 * block range ({@link BlockRangeInserts}: plain writes); the Guava layout, whose bits land anywhere
 * in the array, ORs atomically ({@link AtomicInserts}).
 */
interface SharedInserts {

  /**
   * A way in for the calling thread alone; at most one per thread of the build, since what a lane
   * holds counts against {@link #peakHeldBytes()}'s bound.
   */
  Lane lane();

  /**
   * Sets the bits of every key put through a lane and flushed; on the reader, once every helper's
   * lane is flushed. Those writes happen-before the return (also when, as in {@link
   * BlockRangeInserts}, flushing already set them all: this is where the reader is sure of it).
   *
   * @throws ParallelFill.Interrupted if interrupted while another thread still writes
   */
  void finish();

  /** Keys (put through lanes, then flushed and finished) whose bits were all set already. */
  long unchanged();

  /** The most bytes held at once for keys hashed but not yet in the filter. */
  long peakHeldBytes();

  /** One thread's way in: not thread-safe. */
  interface Lane extends LineParser.KeyConsumer {

    /**
     * Hands over every key this lane holds, without waiting for any thread: after it, the keys put
     * so far reach the filter by {@link SharedInserts#finish()}. A thread flushes its lane before
     * it reports a batch done, also when the batch failed (so that nothing stays held).
     */
    void flush();
  }
}
