package io.bloomoperator.source;

/**
 * Ways into a build for a source that reads on several threads at once (a partitioned jdbc read's
 * connections, {@link PartitionedRead}; any source whose parts are read in parallel): each reading
 * thread parses, hashes and inserts its own keys through a {@link Lane} of its own, and hands only
 * their counts ({@link LineParser.Counts}) to the thread that called {@link KeySource#readKeys}
 * (the build's thread), which passes them to {@link #merge}. The filter is bit for bit the one the
 * same keys make through the sink on one thread (every insert is an OR, and the build's layout
 * keeps each lane's writes those of one thread: block ranges owned by one claimant, or atomic ORs);
 * the counts are sums; the malformed-key limit, the build's progress and its stall check follow the
 * merged counts, so they are seen, and fail the read, on the build's thread.
 *
 * <p>What a source does with it:
 *
 * <ol>
 *   <li>Asks for it ({@link KeySink#lanes()}) on the build's thread, after it has given the sink
 *       its first rows there: the build allocates its filter (and waits for its memory) at the
 *       first key, never while the source is still connecting. Null means the sink takes keys on
 *       the build's thread only: the source hands them over (as {@link PartitionedRead} does in
 *       {@link KeyBatch}es).
 *   <li>Hands it to its reading threads through a happens-before edge (a volatile field, a queue);
 *       each takes one lane ({@link #lane()}) and uses it alone. What a lane holds of hashes is
 *       bounded per lane by the build (docs/security.md), so a source takes at most one per reading
 *       thread and its reading threads are bounded (a partitioned read: by its connection share).
 *   <li>Every few thousand keys a reading thread hands {@link Lane#take()} to the build's thread,
 *       which merges it; a merge that throws (malformed-key limit, build stopped) fails the read.
 *   <li>A reading thread done with its part calls {@link Lane#flush()}, then hands its last counts
 *       over; {@link KeySource#readKeys} returns only after every reading thread has (flush
 *       happens-before that return, through the hand-over). On a failure or a cancel it stops every
 *       reading thread and throws; a thread that fails need not flush (the build fails with it),
 *       and none may put a key once the read has thrown.
 * </ol>
 */
public interface KeyLanes {

  /** What a sink that wraps another does with the counts of its lanes, before they are merged. */
  @FunctionalInterface
  interface BeforeMerge {
    void counts(LineParser.Counts counts) throws SourceException;
  }

  /**
   * {@code lanes} (null: none) with {@code before} run on each counts before they are merged: for a
   * sink that wraps another and counts, or refuses, what passes through it.
   */
  static KeyLanes beforeMerge(KeyLanes lanes, BeforeMerge before) {
    if (lanes == null) {
      return null;
    }
    return new KeyLanes() {
      @Override
      public Lane lane() {
        return lanes.lane();
      }

      @Override
      public void merge(LineParser.Counts counts) throws SourceException {
        before.counts(counts);
        lanes.merge(counts);
      }
    };
  }

  /** A lane for the calling thread alone; one per reading thread. */
  Lane lane();

  /**
   * On the build's thread: counts a lane took, in the order they are handed over.
   *
   * @throws SourceException when the malformed keys pass the build's limit, or the build was
   *     stopped
   */
  void merge(LineParser.Counts counts) throws SourceException;

  /**
   * One reading thread's way into the build: what the sink does with keys (the line rules, the
   * parse per key type), done on this thread, inserted into the filter from here. Not thread-safe.
   * Its calls never fail for a malformed key (those are counted and judged at {@link #merge}).
   */
  interface Lane extends KeySink {

    /** What this lane took since the last call: to be handed to the build's thread for merge. */
    LineParser.Counts take();

    /**
     * Hands over every key this lane holds: after it, the keys put so far reach the filter by the
     * end of the build. Call once, when the thread has put its last key.
     */
    void flush();
  }
}
