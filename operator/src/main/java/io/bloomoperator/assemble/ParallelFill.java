package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.KeyLanes;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineBlock;
import io.bloomoperator.source.LineParser;
import io.bloomoperator.source.SourceException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The sink of one build's fill: the source's thread (the reader) hands over {@link LineBlock}s,
 * which the reader and up to {@link BuildWorkers#threadsPerBuild()} − 1 helpers parse, hash and
 * insert at once; keys that come one by one ({@link #line}, {@link #value}) are parsed on the
 * reader.
 *
 * <p>Same result as one thread: the bits, because every insert is an OR and each thread inserts
 * through a {@link SharedInserts.Lane} that keeps them those of one thread (split-block: hashes
 * routed to the owner of their block range, plain writes, {@link BlockRangeInserts}; Guava layout:
 * atomic ORs, {@link AtomicInserts}); the counts, malformed-key limit and positions, because each
 * block's {@link LineParser.Tally} is merged into one {@link LineParser} by the reader in source
 * order; progress, reported at the same key counts from the merged total.
 *
 * <p>Blocks go to the helpers in batches ({@link BlockBatch}) of at least 2,048 lines or 1 MiB,
 * whichever comes first: alone, a small block (a client that returns a few KiB per read and reports
 * nothing more available, so the source hands over every read) would cost more to hand over than to
 * parse, and the reader would do all the work. At most {@code 2 × threads} batches are in flight
 * (handed over, not yet merged); when that many are, the reader parses one itself or waits for the
 * oldest, so a fast source cannot pile up blocks. The source data one build holds is thus bounded
 * in bytes, whatever the length of its lines and however many lines a block has: at most {@code 2 ×
 * threads} batches (those in flight and the one gathering) of under 1 MiB + one block each, plus
 * the block the source is filling. A block of an http body takes at most 512 KiB (256 KiB of text,
 * or twice {@code BLOOM_HTTP_MAX_LINE_BYTES} if more, and at most 256 KiB of line offsets), so with
 * 2 threads a build holds under 4 × 1.5 + 0.5 = 6.5 MiB ({@link #peakHeldBytes()}). Counting
 * batches in lines only, 2,048 lines of 64 KiB made a batch of 256 MiB. Keys hashed but not yet in
 * the split-block filter add at most threads × (threads + 1) × 8 KiB of hash buffers (48 KiB at 2
 * threads, {@link #peakHashBytes()}, {@link BlockRangeInserts}); the Guava layout holds none.
 *
 * <p>A source that reads on several threads ({@link KeyLanes}, e.g. a partitioned jdbc read) asks
 * for {@link #lanes()}: each of its reading threads then parses, hashes and inserts its own keys
 * through a lane of the shared way, like a helper, and the reader merges their counts ({@link
 * LineParser#merge(LineParser.Counts)}) as they are handed to it. Split-block: each reading thread
 * routes its hashes to the claimant of their block range; its lane adds at most ranges × 8 KiB to
 * the hashes held ({@link BlockRangeInserts}). Guava layout: atomic ORs, the reader's own plain
 * writes ending first.
 *
 * <p>The filter is allocated ({@link Target#open()}) by the reader at the first key, as a build on
 * one thread does; helpers start then. {@link #close()} ends them before the build returns, also
 * when it fails, so a build never leaves threads working behind it; a source's reading threads are
 * the source's to end before its read returns ({@link KeyLanes}), and a lane refuses to hand over
 * counts once the fill is closed.
 */
public final class ParallelFill implements KeySink, AutoCloseable {

  /** Allocates the filter (after its reservation) and gives the ways to insert into it. */
  @FunctionalInterface
  interface Target {
    Inserters open() throws InterruptedException;
  }

  /**
   * Two ways into one filter: {@code exclusive} for one thread alone (plain writes), {@code shared}
   * for all the build's threads at once (and a multi-threaded source's, {@link #lanes()}), a {@link
   * SharedInserts.Lane} each, safe however many there are. The reader uses {@code exclusive} until
   * it first hands a block to a helper; the hand-over (a queue) makes its writes visible to the
   * helpers, and from then on every thread uses its lane, the reader too (its rows as well as the
   * blocks it parses). A source that sends keys one by one (JDBC rows) never hands a block over, so
   * its whole build runs on plain writes. {@code exclusive} is null when the shared way writes
   * plainly already ({@link #partitioned}): the reader then uses a lane from its first key.
   */
  record Inserters(KeyInserter exclusive, SharedInserts shared) {
    /**
     * {@code shared} safe for all threads at once (atomic ORs, which cost a locked instruction per
     * word and keep a key's cache misses from overlapping).
     */
    Inserters(KeyInserter exclusive, KeyInserter shared) {
      this(exclusive, new AtomicInserts(shared));
    }

    /** One inserter that is safe for every thread. */
    static Inserters of(KeyInserter safeForAll) {
      return new Inserters(safeForAll, safeForAll);
    }

    /**
     * Every thread, the reader from its first key, through {@code plain}, which costs one thread
     * nothing over plain writes ({@link BlockRangeInserts}: its buffered hashes even let one
     * thread's cache misses overlap).
     */
    static Inserters partitioned(SharedInserts plain) {
      return new Inserters(null, plain);
    }
  }

  /** Carries an interruption out of a sink call, which cannot throw it. */
  static final class Interrupted extends RuntimeException {
    Interrupted(InterruptedException cause) {
      super(cause);
    }
  }

  private static final Pending STOP = new Pending(new BlockBatch());

  private final KeyType keyType;
  private final Target target;
  private final BuildWorkers workers;
  private final FilterBuilder.Progress progress;
  private final LineParser parser;
  private final int maxPending;
  private final ArrayDeque<Pending> pending = new ArrayDeque<>();
  private final LinkedBlockingQueue<Pending> unclaimed = new LinkedBlockingQueue<>();
  private final List<Future<?>> helpers = new ArrayList<>();

  /** Blocks in source order not yet handed over, until they are worth a hand-over. */
  private BlockBatch batch = new BlockBatch();

  /** Bytes of the blocks this fill holds (gathering and in flight), and the most it held. */
  private long held;

  private long peakHeld;

  /**
   * Whether the reader inserts through a lane of the shared way: from its first hand-over, or from
   * its first key when there is no exclusive way.
   */
  private boolean readerShares;

  private final Object lock = new Object();
  private boolean closed;
  private int running;

  /** Set by {@link #close()}: a source's lane that is still used after it fails its next take. */
  private volatile boolean ended;

  /**
   * What the reader inserts through: the exclusive way, until its first hand-over, then a lane of
   * the shared way; null until the filter is allocated.
   */
  private SharedInserts.Lane inserter;

  private SharedInserts shared;
  private long inserted;
  private long unchanged;
  private SourceException failure;

  ParallelFill(
      KeyType keyType,
      long maxMalformed,
      Target target,
      BuildWorkers workers,
      FilterBuilder.Progress progress) {
    this.keyType = keyType;
    this.target = target;
    this.workers = workers;
    this.progress = progress;
    this.maxPending = 2 * workers.threadsPerBuild();
    this.parser =
        new LineParser(
            keyType,
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {
                open().putString(key);
                advance(1);
              }

              @Override
              public void putLong(long key) {
                open().putLong(key);
                advance(1);
              }

              @Override
              public void putUtf8(byte[] utf8, int offset, int length) {
                open().putUtf8(utf8, offset, length);
                advance(1);
              }
            },
            maxMalformed);
  }

  /**
   * Reads every key of {@code source} into {@code into} (which must be safe for {@link
   * BuildWorkers#threadsPerBuild()} threads when that is above 1, and for any number when the
   * source reads on several threads, {@link KeyLanes}), whatever the filter's layout; the seam a
   * layout plugs into.
   *
   * @return the counts (keys, malformed, nulls) of the read
   * @throws SourceException when the source fails or holds too many malformed keys
   */
  public static LineParser insertAll(
      KeySource source, KeyType keyType, long maxMalformed, KeyInserter into, BuildWorkers workers)
      throws SourceException {
    try (ParallelFill fill =
        new ParallelFill(keyType, maxMalformed, () -> Inserters.of(into), workers, k -> {})) {
      try {
        source.readKeys(fill);
        fill.finish();
      } catch (SourceException e) {
        throw fill.settle(e);
      }
      return fill.parser();
    }
  }

  @Override
  public void line(String rawLine) throws SourceException {
    flushBatch();
    parser.line(rawLine);
  }

  @Override
  public void value(String key) throws SourceException {
    flushBatch();
    parser.value(key);
  }

  @Override
  public void value(long key) throws SourceException {
    flushBatch();
    parser.value(key);
  }

  @Override
  public void nullValue() {
    // Only counted: its order among the lines gathering in the batch changes nothing.
    parser.nullValue();
  }

  @Override
  public void lines(LineBlock block) throws SourceException {
    if (inserter == null || helpers.isEmpty()) {
      // Before the first key (which allocates the filter) and without helpers: on this thread.
      parser.lines(block);
      return;
    }
    held += batch.add(block);
    peakHeld = Math.max(peakHeld, held);
    if (!batch.full()) {
      return;
    }
    Pending added = new Pending(batch);
    batch = new BlockBatch();
    pending.addLast(added);
    if (!readerShares) {
      // From now on a helper may insert too; the reader's plain writes so far reach it through
      // the queue below.
      readerShares = true;
      inserter.flush();
      inserter = shared.lane();
    }
    unclaimed.add(added);
    mergeDone();
    while (pending.size() >= maxPending) {
      workOrWait();
    }
  }

  /**
   * Lanes for the reading threads of a source that reads on several ({@link KeyLanes}); on the
   * reader, once the source has given it its first rows. Allocates the filter if no key came yet
   * (the rows were NULLs). The reader's own inserts move to a lane of the shared way first: in the
   * Guava layout it wrote plainly until now, and from here other threads OR atomically into the
   * same words; the source hands the lanes to its threads through a happens-before edge, which
   * makes those plain writes visible to them.
   */
  @Override
  public KeyLanes lanes() {
    open();
    if (!readerShares) {
      readerShares = true;
      inserter.flush();
      inserter = shared.lane();
    }
    return new KeyLanes() {
      @Override
      public Lane lane() {
        if (ended) {
          throw new IllegalStateException("the build is over");
        }
        return new SourceLane(shared.lane());
      }

      @Override
      public void merge(LineParser.Counts counts) throws SourceException {
        try {
          parser.merge(counts);
        } catch (SourceException e) {
          failure = e;
          throw e;
        }
        advance(counts.keys());
      }
    };
  }

  /**
   * A reading thread's lane: the line rules and the parse per key type on that thread, with no
   * malformed-key limit of its own (the reader's parser judges the merged counts), into a lane of
   * the shared way.
   */
  private final class SourceLane implements KeyLanes.Lane {
    private final SharedInserts.Lane into;
    private final LineParser parser;

    SourceLane(SharedInserts.Lane into) {
      this.into = into;
      this.parser = new LineParser(keyType, into, Long.MAX_VALUE);
    }

    @Override
    public void line(String rawLine) throws SourceException {
      parser.line(rawLine);
    }

    @Override
    public void lines(LineBlock block) throws SourceException {
      parser.lines(block);
    }

    @Override
    public void value(String key) throws SourceException {
      parser.value(key);
    }

    @Override
    public void value(long key) throws SourceException {
      parser.value(key);
    }

    @Override
    public void nullValue() {
      parser.nullValue();
    }

    @Override
    public LineParser.Counts take() {
      if (ended) {
        throw new IllegalStateException("the build is over");
      }
      return parser.take();
    }

    @Override
    public void flush() {
      into.flush();
    }
  }

  /**
   * Merges every block still in flight; call when the source has ended.
   *
   * @throws SourceException when their malformed lines pass the limit
   */
  void finish() throws SourceException {
    flushBatch();
    while (!pending.isEmpty()) {
      workOrWait();
    }
    if (inserter != null) {
      inserter.flush();
    }
    if (readerShares) {
      shared.finish();
    }
  }

  /** Parses the blocks still gathering on this thread, after those in flight (source order). */
  private void flushBatch() throws SourceException {
    if (batch.isEmpty()) {
      return;
    }
    Pending last = new Pending(batch);
    batch = new BlockBatch();
    pending.addLast(last);
    insert(last, inserter);
    mergeDone();
  }

  /**
   * The failure to report when the source failed with {@code e}: an earlier block's malformed-key
   * failure, as on one thread (where it would have stopped the read first), else {@code e}.
   */
  SourceException settle(SourceException e) {
    if (e == failure) {
      return e;
    }
    try {
      finish();
    } catch (SourceException earlier) {
      return earlier;
    }
    return e;
  }

  LineParser parser() {
    return parser;
  }

  /**
   * The most bytes of source data (blocks gathering and in flight, see {@link BlockBatch}) this
   * fill held at once: at most {@code 2 × threads × (1 MiB + one block)}.
   */
  long peakHeldBytes() {
    return peakHeld;
  }

  /**
   * The most bytes of hashes this fill held at once on their way to the filter's threads (see
   * {@link SharedInserts#peakHeldBytes()}); 0 if no block was handed over.
   */
  long peakHashBytes() {
    return shared == null ? 0 : shared.peakHeldBytes();
  }

  /** Keys whose bits were all set already; complete after {@link #finish()}. */
  long unchanged() {
    return unchanged + (shared == null ? 0 : shared.unchanged());
  }

  /** Whether the filter was allocated (the source held a key). */
  boolean opened() {
    return inserter != null;
  }

  /** Ends the helpers (those under way finish their block) and waits until none runs. */
  @Override
  public void close() {
    ended = true;
    synchronized (lock) {
      closed = true;
    }
    for (Future<?> helper : helpers) {
      workers.withdraw(helper);
    }
    unclaimed.clear();
    for (int i = 0; i < helpers.size(); i++) {
      unclaimed.add(STOP);
    }
    boolean interrupted = false;
    synchronized (lock) {
      while (running > 0) {
        try {
          lock.wait();
        } catch (InterruptedException e) {
          interrupted = true; // the helpers still hold the array: wait for them anyway
        }
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private SharedInserts.Lane open() {
    if (inserter == null) {
      try {
        Inserters ways = target.open();
        shared = ways.shared();
        readerShares = ways.exclusive() == null;
        // Plain writes while the reader alone inserts; its unchanged count is handed on at each
        // batch it parses, at the hand-over (before its lane changes) and at finish().
        inserter =
            readerShares
                ? shared.lane()
                : new ExclusiveLane(ways.exclusive(), same -> unchanged += same);
      } catch (InterruptedException e) {
        throw new Interrupted(e);
      }
      for (int i = 1; i < workers.threadsPerBuild(); i++) {
        helpers.add(workers.submit(this::help));
      }
    }
    return inserter;
  }

  private void help() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      running++;
    }
    try {
      // Taken once: a lane is this thread's for the build (what it may hold is bounded per lane).
      SharedInserts.Lane lane = shared.lane();
      while (true) {
        Pending next = unclaimed.take();
        if (next == STOP) {
          return;
        }
        insert(next, lane);
      }
    } catch (InterruptedException e) {
      // the pool is shutting down; the reader does the rest
    } finally {
      synchronized (lock) {
        running--;
        lock.notifyAll();
      }
    }
  }

  /** Parses one block, if one is waiting, or waits for the oldest; then merges what is done. */
  private void workOrWait() throws SourceException {
    Pending mine = unclaimed.poll();
    if (mine != null) {
      insert(mine, inserter);
    } else {
      try {
        pending.peekFirst().done.await();
      } catch (InterruptedException e) {
        throw new Interrupted(e);
      }
    }
    mergeDone();
  }

  private void mergeDone() throws SourceException {
    Pending head;
    while ((head = pending.peekFirst()) != null && head.done.getCount() == 0) {
      pending.removeFirst();
      held -= head.bytes;
      if (head.error != null) {
        throw head.error;
      }
      for (int i = 0; i < head.blocks.size(); i++) {
        try {
          parser.merge(head.blocks.get(i), head.tallies[i]);
        } catch (SourceException e) {
          failure = e;
          throw e;
        }
        advance(head.tallies[i].keys());
      }
    }
  }

  /**
   * Any thread: parses a batch of blocks into the filter through {@code lane}, flushed before the
   * batch is reported done (so that {@link #finish()} finds every key handed over), also when it
   * failed.
   */
  private void insert(Pending block, SharedInserts.Lane lane) {
    try {
      for (int i = 0; i < block.blocks.size(); i++) {
        block.tallies[i] = LineParser.parse(block.blocks.get(i), keyType, lane);
      }
    } catch (RuntimeException e) {
      block.error = e;
    } finally {
      try {
        lane.flush();
      } catch (RuntimeException e) {
        if (block.error == null) {
          block.error = e;
        }
      }
      block.done.countDown();
    }
  }

  /** Reports progress at every multiple of {@link FilterBuilder#PROGRESS_EVERY} passed. */
  private void advance(long keys) {
    long before = inserted;
    inserted += keys;
    for (long at = (before / FilterBuilder.PROGRESS_EVERY + 1) * FilterBuilder.PROGRESS_EVERY;
        at <= inserted;
        at += FilterBuilder.PROGRESS_EVERY) {
      progress.keysRead(at);
    }
  }

  /**
   * Blocks handed over together, in source order; the other fields are written before {@code done}
   * opens and read after.
   */
  private static final class Pending {
    final List<LineBlock> blocks;
    final long bytes;
    final LineParser.Tally[] tallies;
    final CountDownLatch done = new CountDownLatch(1);
    RuntimeException error;

    Pending(BlockBatch batch) {
      this.blocks = batch.blocks();
      this.bytes = batch.bytes();
      this.tallies = new LineParser.Tally[blocks.size()];
    }
  }
}
