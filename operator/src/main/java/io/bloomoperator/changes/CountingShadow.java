package io.bloomoperator.changes;

import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * A 4-bit counter per bit of one published filter ({@code spec.changes.deletions: Counting}): how
 * many key occurrences set the bit. A delete event decrements its key's k counters, and a bit whose
 * counter reaches 0 is cleared in the next stream delta, so a deleted key leaves the filter without
 * a full build while readers still receive a plain Bloom filter.
 *
 * <p>The counters live in a memory-mapped file ({@link CountingShadows} sizes and bounds it), never
 * on the Java heap: half a byte per filter bit, 100M keys at 1 % about 0.5 GB. Counters are updated
 * with compare-and-set on aligned ints, so a full build's threads may count at once.
 *
 * <p><b>Saturation.</b> A counter that reaches {@link #SATURATED} (15 occurrences on one bit) stays
 * there: it is never incremented past nor decremented from, because its true count is no longer
 * known and decrementing it could reach 0 while keys still set the bit (a false negative). Its bit
 * stays set until the next full build, which is only ever a false positive.
 *
 * <p><b>Exactly once.</b> A delete applied twice would clear bits a live key needs. The shadow
 * records the stream position up to which it has applied events ({@link #applied}); a delete at or
 * before it is skipped ({@link Outcome#SKIPPED}). A delete whose removal the full build that
 * counted the shadow may already reflect (before {@link #decrementFrom}) is not applied either
 * ({@link Outcome#DEFERRED}): it waits for the next full build, as under {@code Rebuild}. A delete
 * of a key some of whose counters are 0 is not in the filter and changes nothing ({@link
 * Outcome#ABSENT}): decrementing the others would take counts from other keys. Adds are counted
 * every time they are read (they are delivered at least once): an add counted twice keeps its bits
 * set after its delete, a false positive until the next full build, never a false negative.
 *
 * <p>Instances are used by one reconcile at a time after the build; only {@link #counting} is used
 * by several build threads at once.
 */
public final class CountingShadow implements AutoCloseable {

  /** A counter at this value is saturated: never incremented or decremented again. */
  public static final int SATURATED = 15;

  /** Each mapping covers this many bytes (a {@link MappedByteBuffer} is int-indexed). */
  private static final int REGION_BYTES = 1 << 30;

  /** Aligned 4-byte views of the mapped file: eight counters an int, updated with CAS. */
  private static final VarHandle INTS =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  /** What a delete event did. */
  public enum Outcome {
    /** Its counters were decremented (and the bits at 0 are to be cleared). */
    REMOVED,
    /** At or before the position the shadow has applied: already applied once. */
    SKIPPED,
    /**
     * Left to the next full build: the build may reflect it already, or the key was deleted since
     * the count as often as it was counted (a duplicate event; {@link DeleteLedger}).
     */
    DEFERRED,
    /** Some counter of the key is 0: the key is not in the filter; nothing changed. */
    ABSENT
  }

  /**
   * A delete event as the stream read it.
   *
   * @param key the key, as text (a Long key as its decimal digits)
   * @param partition the stream partition it was read from
   * @param offset its offset in that partition
   * @param time when the stream recorded it, or null when it did not say
   * @param addsBefore how many of the batch's adds came before it, in stream order
   */
  public record Deletion(String key, int partition, long offset, Instant time, int addsBefore) {}

  /** What a batch did to the shadow. */
  public record Applied(long removed, long deferred, long skipped, long absent) {}

  private final Path file;
  private final FileChannel channel;
  private final MappedByteBuffer[] regions;
  private final BitPositions positions;
  private final KeyType keyType;
  private final long bytes;
  private final int maxPending;
  private final DeleteLedger ledger = new DeleteLedger(DeleteLedger.DEFAULT_MAX_KEYS);

  private StreamPosition applied;
  private Instant decrementFrom;
  private String publishedSha256;

  /** Bits whose counter reached 0 since the last publish that included its clears. */
  private long[] pending = new long[16];

  private int pendingCount;

  /** Bytes a shadow of {@code numBits} filter bits takes: a half byte each. */
  public static long bytesFor(long numBits) {
    return (numBits + 1) / 2;
  }

  /**
   * A zeroed shadow in {@code file} (created, or truncated), for filters of {@code positions}'
   * geometry.
   *
   * @param maxPending bits to clear remembered across failed publishes; beyond it a bit stays set
   *     until the next full build (a false positive, never a false negative)
   */
  static CountingShadow create(Path file, BitPositions positions, KeyType keyType, int maxPending)
      throws IOException {
    long bytes = bytesFor(positions.numBits());
    FileChannel channel =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.READ,
            StandardOpenOption.WRITE);
    try {
      // A sparse file: pages are only taken as counters are written.
      channel.truncate(0);
      int count = (int) ((bytes + REGION_BYTES - 1) / REGION_BYTES);
      MappedByteBuffer[] regions = new MappedByteBuffer[count];
      for (int i = 0; i < count; i++) {
        long from = (long) i * REGION_BYTES;
        regions[i] =
            channel.map(FileChannel.MapMode.READ_WRITE, from, Math.min(REGION_BYTES, bytes - from));
      }
      return new CountingShadow(file, channel, regions, positions, keyType, bytes, maxPending);
    } catch (IOException | RuntimeException e) {
      channel.close();
      Files.deleteIfExists(file);
      throw e;
    }
  }

  private CountingShadow(
      Path file,
      FileChannel channel,
      MappedByteBuffer[] regions,
      BitPositions positions,
      KeyType keyType,
      long bytes,
      int maxPending) {
    this.file = file;
    this.channel = channel;
    this.regions = regions;
    this.positions = positions;
    this.keyType = keyType;
    this.bytes = bytes;
    this.maxPending = maxPending;
  }

  /** The file's size. */
  public long bytes() {
    return bytes;
  }

  /**
   * {@code inner} (a build's inserter), also counting every key it is given in this shadow: safe
   * for as many threads at once as {@code inner} is. The filter's bits are exactly {@code inner}'s.
   */
  public KeyInserter counting(KeyInserter inner) {
    return new KeyInserter() {
      @Override
      public boolean putString(String key) {
        boolean changed = inner.putString(key);
        long[] at = new long[positions.perKey()];
        positions.ofString(key, at);
        incrementAll(at);
        return changed;
      }

      @Override
      public boolean putUtf8(byte[] utf8, int offset, int length) {
        boolean changed = inner.putUtf8(utf8, offset, length);
        long[] at = new long[positions.perKey()];
        positions.ofUtf8(utf8, offset, length, at);
        incrementAll(at);
        return changed;
      }

      @Override
      public boolean putLong(long key) {
        boolean changed = inner.putLong(key);
        long[] at = new long[positions.perKey()];
        positions.ofLong(key, at);
        incrementAll(at);
        return changed;
      }
    };
  }

  /**
   * From now on, follows the version of payload {@code publishedSha256}, consistent with the stream
   * at {@code position}: deletes before {@code decrementFrom} (null: none, the position is exact)
   * are deferred.
   */
  synchronized void follow(StreamPosition position, Instant decrementFrom, String publishedSha256) {
    this.applied = position;
    this.decrementFrom = decrementFrom;
    this.publishedSha256 = publishedSha256;
  }

  /** Whether this shadow follows the version of payload {@code sha256}: only then may it apply. */
  public synchronized boolean follows(String sha256) {
    return publishedSha256 != null && publishedSha256.equals(sha256);
  }

  /** The position up to which events have been applied (every partition's next offset). */
  public synchronized StreamPosition applied() {
    return applied;
  }

  /** Deletes recorded before this time are left to the next full build; null: none are. */
  public synchronized Instant decrementFrom() {
    return decrementFrom;
  }

  /**
   * Applies one batch read from the published position, in stream order: adds counted, deletes
   * decided one by one ({@link Outcome}), then the applied position moved to {@code next}.
   */
  public synchronized Applied apply(
      java.util.List<String> adds, java.util.List<Deletion> deletions, StreamPosition next) {
    long removed = 0;
    long deferred = 0;
    long skipped = 0;
    long absent = 0;
    int added = 0;
    long[] at = new long[positions.perKey()];
    for (Deletion deletion : deletions) {
      for (; added < Math.min(deletion.addsBefore(), adds.size()); added++) {
        add(adds.get(added), at);
      }
      switch (remove(deletion, at)) {
        case REMOVED -> removed++;
        case DEFERRED -> deferred++;
        case SKIPPED -> skipped++;
        case ABSENT -> absent++;
      }
    }
    for (; added < adds.size(); added++) {
      add(adds.get(added), at);
    }
    applied = furthest(applied, next);
    return new Applied(removed, deferred, skipped, absent);
  }

  /**
   * The bits to clear in the next publish: those whose counter reached 0 and is 0 still, into a new
   * array of that length.
   */
  public synchronized long[] clears() {
    return Arrays.stream(pending, 0, pendingCount)
        .filter(p -> counter(p) == 0)
        .distinct()
        .toArray();
  }

  /** The version of payload {@code sha256}, with every clear so far, is published: follow it. */
  public synchronized void published(String sha256) {
    publishedSha256 = sha256;
    pendingCount = 0;
  }

  /** The counter of filter bit {@code position}. */
  public int counter(long position) {
    long at = (position >>> 3) << 2;
    int shift = (int) (position & 7) << 2;
    int word =
        (int) INTS.getVolatile(regions[(int) (at / REGION_BYTES)], (int) (at % REGION_BYTES));
    return (word >>> shift) & 0xF;
  }

  /** Counts one occurrence of {@code key} (as text). */
  void add(String key, long[] at) {
    positionsOf(key, at);
    incrementAll(at);
    ledger.added(at);
  }

  private Outcome remove(Deletion deletion, long[] at) {
    if (applied != null && deletion.offset() < applied.of(deletion.partition())) {
      return Outcome.SKIPPED;
    }
    if (decrementFrom != null
        && (deletion.time() == null || deletion.time().isBefore(decrementFrom))) {
      return Outcome.DEFERRED;
    }
    positionsOf(deletion.key(), at);
    for (long p : at) {
      if (counter(p) == 0) {
        return Outcome.ABSENT;
      }
    }
    if (!ledger.mayDelete(at)) {
      return Outcome.DEFERRED;
    }
    for (long p : at) {
      if (decrement(p)) {
        remember(p);
      }
    }
    ledger.deleted(at);
    return Outcome.REMOVED;
  }

  private void positionsOf(String key, long[] at) {
    if (keyType == KeyType.LONG) {
      positions.ofLong(Long.parseLong(key), at);
    } else {
      positions.ofString(key, at);
    }
  }

  private void remember(long position) {
    if (pendingCount == pending.length) {
      if (pending.length >= maxPending) {
        return; // its bit stays set until the next full build: a false positive only
      }
      pending = Arrays.copyOf(pending, Math.min(maxPending, pending.length * 2));
    }
    pending[pendingCount++] = position;
  }

  private void incrementAll(long[] at) {
    for (long p : at) {
      increment(p);
    }
  }

  private void increment(long position) {
    MappedByteBuffer region = regions[(int) (((position >>> 3) << 2) / REGION_BYTES)];
    int index = (int) (((position >>> 3) << 2) % REGION_BYTES);
    int shift = (int) (position & 7) << 2;
    while (true) {
      int word = (int) INTS.getVolatile(region, index);
      if (((word >>> shift) & 0xF) == SATURATED) {
        return;
      }
      if (INTS.compareAndSet(region, index, word, word + (1 << shift))) {
        return;
      }
    }
  }

  /** Decrements the counter unless it is 0 or saturated; whether it reached 0. */
  private boolean decrement(long position) {
    MappedByteBuffer region = regions[(int) (((position >>> 3) << 2) / REGION_BYTES)];
    int index = (int) (((position >>> 3) << 2) % REGION_BYTES);
    int shift = (int) (position & 7) << 2;
    while (true) {
      int word = (int) INTS.getVolatile(region, index);
      int counter = (word >>> shift) & 0xF;
      if (counter == 0 || counter == SATURATED) {
        return false;
      }
      if (INTS.compareAndSet(region, index, word, word - (1 << shift))) {
        return counter == 1;
      }
    }
  }

  /** Each partition at the later of the two offsets. */
  private static StreamPosition furthest(StreamPosition a, StreamPosition b) {
    if (a == null) {
      return b;
    }
    TreeMap<Integer, Long> offsets = new TreeMap<>(a.offsets());
    for (Map.Entry<Integer, Long> e : b.offsets().entrySet()) {
      offsets.merge(e.getKey(), e.getValue(), Math::max);
    }
    return new StreamPosition(offsets);
  }

  /** Unmaps nothing explicitly (the JVM does, once unreachable) but closes and deletes the file. */
  @Override
  public void close() {
    try {
      channel.close();
      Files.deleteIfExists(file);
    } catch (IOException e) {
      // The directory is emptied at the next start anyway.
    }
  }
}
