package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.SplitBlockBits;
import java.util.ArrayDeque;

/**
 * The split-block layout's build, on any number of threads, without atomic instructions: each
 * thread parses and hashes its keys (the costly part: UTF-8 and XXH64), routes each 64-bit hash to
 * the {@link BlockRanges range} of its block in a buffer of its own, and hands full buffers to that
 * range; a range's buffers are applied with plain writes ({@link
 * BloomFilterBits.Builder#putHashes}) by the one thread that holds the range's claim. Two threads
 * never write the same block at once, so the words are those of a one-thread build, byte for byte
 * (OR is commutative, and each key still sets only its own block's bits). On one thread too (one
 * range): 1,024 inserts in a row, none waiting for the previous one's cache miss, run faster than
 * setting each key's bits right after hashing it (docs/benchmarks.md).
 *
 * <p>Who owns a range: whichever thread claims it, not a fixed thread. The thread that hands a
 * buffer to an unclaimed range claims it and applies its queue; if another thread holds the claim,
 * the buffer waits in the queue and that thread applies it before it lets go. A fixed owner would
 * be the reader for one of the ranges, and the reader spends most of its time reading the source:
 * the others would wait for it. No thread ever waits for a claim while it holds one, and applying a
 * queue waits for nothing, so the hand-off cannot deadlock.
 *
 * <p>The reading threads of a source that reads on several ({@link
 * io.bloomoperator.source.KeyLanes}, a partitioned jdbc read's connections) insert the same way,
 * each through a lane of its own: they hash and route their own keys, and apply a range's queue
 * whenever they find it unclaimed, like any thread of the build. The ranges stay the build's
 * threads: they bound how many threads write bits at once, not how many hash.
 *
 * <p>Bounded in bytes per build slot: at most {@code maxBuffers} = ranges × (lanes + 1) buffers of
 * {@link #BUFFER_HASHES} hashes (8 KiB), lanes being the build's threads or, when a source's
 * reading threads take lanes too, all the lanes taken; allocated as needed and recycled. With
 * ranges ≤ threads a build holds at most threads × (threads + 1) × 8 KiB of hashes: 48 KiB at 2
 * threads, 160 KiB at 4, 33 MiB at the limit of 64; each reading thread of the source adds ranges ×
 * 8 KiB (16 KiB at 2 threads: 128 KiB for the 2 threads and 5 connections of a partitioned read at
 * the default namespace share) ({@link #peakHeldBytes()}). Why that many suffice: a lane holds at
 * most one buffer per range, and one fewer while it asks for a new one, so at most lanes × ranges −
 * 1 are held by lanes when a thread asks; at least ranges + 1 are then free, queued or being
 * applied. A thread that finds none free applies an unclaimed queue itself, or waits for a claimed
 * one to be applied (which frees buffers and wakes it). A lane whose thread ended without flushing
 * (a failed read: the build fails too) keeps its buffers counted, so the others still find theirs.
 *
 * <p>Memory visibility: a range's words are written only under its claim, taken and let go under
 * this object's monitor, so each claimant sees the previous one's writes, and {@link #finish()}
 * (the reader, after every helper's lane was flushed) sees them all. The reader uses a lane from
 * its first key ({@link ParallelFill.Inserters#partitioned}), so no write bypasses the claims.
 */
final class BlockRangeInserts implements SharedInserts {

  /** Hashes per buffer: a hand-over (two monitor entries) costs under a nanosecond per key. */
  static final int BUFFER_HASHES = 1024;

  private final BloomFilterBits.Builder bits;
  private final BlockRanges ranges;
  private final int threads;

  // Guarded by this.
  private final ArrayDeque<Hashes>[] queued;
  private final boolean[] claimed;
  private final ArrayDeque<Hashes> free = new ArrayDeque<>();
  private int lanes;
  private int maxBuffers;
  private int allocated;
  private int peakAllocated;
  private int waiting;
  private long unchanged;

  /**
   * @param bits a split-block builder; its words are written only through this object once a lane
   *     is in use, until {@link #finish()}
   * @param threads the build's threads (each with one lane): the ranges, and the lanes the buffers
   *     are sized for until more are taken
   */
  @SuppressWarnings("unchecked")
  BlockRangeInserts(BloomFilterBits.Builder bits, int threads) {
    this.bits = bits;
    this.ranges = new BlockRanges(bits.numBlocks(), threads);
    this.threads = threads;
    this.maxBuffers = ranges.count() * (threads + 1);
    this.queued = new ArrayDeque[ranges.count()];
    for (int r = 0; r < queued.length; r++) {
      queued[r] = new ArrayDeque<>();
    }
    this.claimed = new boolean[ranges.count()];
  }

  /** A lane; past the build's threads, each raises the buffers allowed by one per range. */
  @Override
  public synchronized Lane lane() {
    lanes++;
    maxBuffers = ranges.count() * (Math.max(threads, lanes) + 1);
    return new RangeLane();
  }

  @Override
  public void finish() {
    for (int r = 0; r < queued.length; r++) {
      synchronized (this) {
        while (claimed[r]) {
          await();
        }
        if (queued[r].isEmpty()) {
          continue;
        }
        claimed[r] = true;
      }
      apply(r);
    }
  }

  @Override
  public synchronized long unchanged() {
    return unchanged;
  }

  /** The most hash buffers allocated at once, in bytes: at most ranges × (lanes + 1) of them. */
  @Override
  public synchronized long peakHeldBytes() {
    return (long) peakAllocated * BUFFER_HASHES * Long.BYTES;
  }

  /** Queues a buffer for its range and applies the range's queue if no thread holds its claim. */
  private void submit(Hashes buffer, int range) {
    synchronized (this) {
      queued[range].addLast(buffer);
      if (claimed[range]) {
        return; // its claimant applies it before letting go
      }
      claimed[range] = true;
    }
    apply(range);
  }

  /**
   * Applies range {@code range}'s queue until it is empty, then lets the claim go; the caller holds
   * the claim. Each buffer is freed as soon as it is applied, so a waiting thread goes on at once.
   */
  private void apply(int range) {
    Hashes done = null;
    int same = 0;
    try {
      while (true) {
        Hashes next;
        synchronized (this) {
          if (done != null) {
            recycle(done, same);
            done = null;
          }
          next = queued[range].pollFirst();
          if (next == null) {
            claimed[range] = false;
            wake();
            return;
          }
        }
        same = bits.putHashes(next.hashes, 0, next.count);
        done = next;
      }
    } catch (RuntimeException e) {
      synchronized (this) {
        claimed[range] = false;
        wake();
      }
      throw e;
    }
  }

  /** Back to the free list, its keys' unchanged count added; under the monitor. */
  private void recycle(Hashes buffer, int same) {
    unchanged += same;
    buffer.count = 0;
    free.addLast(buffer);
    wake();
  }

  /**
   * An empty buffer for a lane: a free one, a new one while under {@code maxBuffers}, else the
   * first one this thread frees by applying an unclaimed queue, else the first one another thread
   * frees.
   */
  private Hashes take() {
    while (true) {
      int range = -1;
      synchronized (this) {
        Hashes buffer = free.pollFirst();
        if (buffer != null) {
          return buffer;
        }
        if (allocated < maxBuffers) {
          allocated++;
          peakAllocated = Math.max(peakAllocated, allocated);
          return new Hashes();
        }
        for (int r = 0; r < queued.length && range < 0; r++) {
          if (!claimed[r] && !queued[r].isEmpty()) {
            claimed[r] = true;
            range = r;
          }
        }
        if (range < 0) {
          await(); // every queued buffer is being applied by its claimant, who wakes us
          continue;
        }
      }
      apply(range);
    }
  }

  /** Waits on the monitor (held) for a claim to be let go or a buffer freed. */
  private void await() {
    waiting++;
    try {
      wait();
    } catch (InterruptedException e) {
      throw new ParallelFill.Interrupted(e);
    } finally {
      waiting--;
    }
  }

  /** Wakes the threads waiting for a buffer or a claim; under the monitor. */
  private void wake() {
    if (waiting > 0) {
      notifyAll();
    }
  }

  /** A buffer of hashes bound for one range. */
  private static final class Hashes {
    final long[] hashes = new long[BUFFER_HASHES];
    int count;
  }

  /** One thread's buffers, one per range, taken when the range's first key comes. */
  private final class RangeLane implements Lane {
    private final Hashes[] current = new Hashes[queued.length];

    @Override
    public void putString(String key) {
      route(SplitBlockBits.hashString(key));
    }

    @Override
    public void putLong(long key) {
      route(SplitBlockBits.hashLong(key));
    }

    @Override
    public void putUtf8(byte[] utf8, int offset, int length) {
      route(SplitBlockBits.hashUtf8(utf8, offset, length));
    }

    private void route(long hash) {
      int range = ranges.rangeOf(hash);
      Hashes buffer = current[range];
      if (buffer == null) {
        buffer = take();
        current[range] = buffer;
      }
      buffer.hashes[buffer.count++] = hash;
      if (buffer.count == BUFFER_HASHES) {
        // Handed over before the next is taken: a lane asking for a buffer holds one fewer than
        // ranges, which is what keeps maxBuffers enough (see the class comment).
        current[range] = null;
        submit(buffer, range);
      }
    }

    @Override
    public void flush() {
      for (int r = 0; r < current.length; r++) {
        Hashes buffer = current[r];
        if (buffer != null) {
          current[r] = null;
          submit(buffer, r);
        }
      }
    }
  }
}
