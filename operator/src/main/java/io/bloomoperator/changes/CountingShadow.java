package io.bloomoperator.changes;

import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A 4-bit counter per bit of one published filter ({@code spec.changes.deletions: Counting}): how
 * many key occurrences set the bit, and beside them the {@link KeyFingerprints multiset of the keys
 * counted}. A delete event of a counted key decrements its k counters, and a bit whose counter
 * reaches 0 is cleared in the next stream delta, so a deleted key leaves the filter without a full
 * build while readers still receive a plain Bloom filter.
 *
 * <p><b>The invariant.</b> For every key, the decrements applied to its bit positions never exceed
 * the increments made for that key: a delete is applied only while the key's fingerprint has an
 * occurrence left ({@link Outcome#UNCOUNTED} otherwise: it changes nothing and waits for the next
 * full build). A counter is a sum over keys, so it never drops below what the other keys
 * contributed, and no live key loses a bit. A fingerprint that matches by collision (keyed, so not
 * chosen: n/2^64 a delete) must also find all k counters above 0.
 *
 * <p>Both live in memory-mapped files ({@link CountingShadows} sizes and bounds them), never on the
 * Java heap. Counters and fingerprints are updated with compare-and-set, so a full build's threads
 * may count at once.
 *
 * <p><b>Saturation.</b> A counter that reaches {@link #SATURATED} (15 occurrences on one bit), and
 * a fingerprint count at {@link KeyFingerprints#SATURATED}, stay there: their true count is no
 * longer known. A saturated counter keeps its bit set until the next full build (a false positive
 * only); a delete of a key whose count is saturated waits for the next full build.
 *
 * <p><b>One row per ID.</b> A delete is matched to its key, not to the row it came from. An ID the
 * full build reads in more than one row is pinned (its fingerprint saturated at once), so its
 * deletes wait for the next full build; see {@link #counting}. What stays is stated in
 * docs/changes.md: an ID in two rows, one deleted shortly before the scan, the other live.
 *
 * <p><b>Exactly once.</b> The shadow records the stream position up to which it applied events
 * ({@link #applied}); a delete read again at or before it is skipped ({@link Outcome#SKIPPED}). A
 * delete event sent twice (at a new offset) finds its key's occurrence taken by the first. A delete
 * whose record breaks the ordering rule ({@link Deletion#ordered}) waits ({@link
 * Outcome#UNORDERED}). Adds are counted every time they are read (at least once): an add counted
 * twice keeps its bits set after its delete, a false positive until the next full build.
 *
 * <p>Instances are used by one reconcile at a time after the build; only {@link #counting} is used
 * by several build threads at once.
 */
public final class CountingShadow implements AutoCloseable {

  /** A counter at this value is saturated: never incremented or decremented again. */
  public static final int SATURATED = 15;

  /** What a delete event did. */
  public enum Outcome {
    /** Its counters were decremented (and the bits at 0 are to be cleared). */
    REMOVED,
    /** At or before the position the shadow has applied: already applied once. */
    SKIPPED,
    /**
     * No occurrence of the key is counted (never counted, deleted as often as counted, a saturated
     * count, or a fingerprint collision the counters refute): nothing changed; the next full build
     * applies it.
     */
    UNCOUNTED,
    /** The record breaks the ordering rule: nothing changed; the next full build applies it. */
    UNORDERED
  }

  /**
   * A delete event as the stream read it.
   *
   * @param key the key, as text (a Long key as its decimal digits)
   * @param partition the stream partition it was read from
   * @param offset its offset in that partition
   * @param ordered whether the stream can show that every event of this key is in this partition
   *     (Kafka: the record's key is the key's UTF-8 bytes and its partition the one Kafka's default
   *     partitioner chooses for it), so it cannot overtake an add of the key the scan reflects
   * @param addsBefore how many of the batch's adds came before it, in stream order
   */
  public record Deletion(String key, int partition, long offset, boolean ordered, int addsBefore) {}

  /**
   * What a batch did to the shadow.
   *
   * @param stopped null, or why the shadow stopped counting (its fingerprint table is at its
   *     bound): the batch's deletes are not to be published, and the shadow is to be dropped
   */
  public record Applied(long removed, long waiting, long skipped, String stopped) {}

  private final MappedFile counters;
  private final KeyFingerprints fingerprints;
  private final BitPositions positions;
  private final KeyType keyType;
  private final int maxPending;

  private StreamPosition applied;
  private int partitions;
  private String publishedSha256;
  private volatile String stopped;

  /** Bits whose counter reached 0 since the last publish that included its clears. */
  private long[] pending = new long[16];

  private int pendingCount;

  /** Bytes of the counters of {@code numBits} filter bits: a half byte each, whole ints. */
  public static long counterBytes(long numBits) {
    return (numBits + 7) / 8 * 4;
  }

  /** Bytes a shadow of {@code numBits} filter bits for a build of {@code keys} keys takes. */
  public static long bytesFor(long numBits, long keys) {
    return counterBytes(numBits) + KeyFingerprints.bytesFor(keys);
  }

  /**
   * A zeroed shadow in {@code counts} and {@code prints} (created, or truncated), for filters of
   * {@code positions}' geometry and a build of {@code keys} keys. The caller checked {@link
   * #bytesFor} against its bounds.
   *
   * @param maxPending bits to clear remembered across failed publishes; beyond it a bit stays set
   *     until the next full build (a false positive, never a false negative)
   */
  static CountingShadow create(
      Path counts,
      Path prints,
      BitPositions positions,
      KeyType keyType,
      long keys,
      int maxPending,
      SecureRandom random)
      throws IOException {
    return create(counts, prints, positions, keyType, keys, maxPending, random, -1L);
  }

  /** The same with fingerprints cut to {@code mask} ({@link KeyFingerprints}: tests only). */
  static CountingShadow create(
      Path counts,
      Path prints,
      BitPositions positions,
      KeyType keyType,
      long keys,
      int maxPending,
      SecureRandom random,
      long mask)
      throws IOException {
    MappedFile counters = MappedFile.create(counts, counterBytes(positions.numBits()));
    try {
      return new CountingShadow(
          counters,
          KeyFingerprints.create(prints, keys, random, mask),
          positions,
          keyType,
          maxPending);
    } catch (IOException | RuntimeException e) {
      counters.close();
      throw e;
    }
  }

  private CountingShadow(
      MappedFile counters,
      KeyFingerprints fingerprints,
      BitPositions positions,
      KeyType keyType,
      int maxPending) {
    this.counters = counters;
    this.fingerprints = fingerprints;
    this.positions = positions;
    this.keyType = keyType;
    this.maxPending = maxPending;
  }

  /** The files' size. */
  public long bytes() {
    return counters.bytes() + fingerprints.bytes();
  }

  /** Null, or why this shadow stopped counting (its deletes wait for the next full build). */
  public String stopped() {
    return stopped;
  }

  /**
   * {@code inner} (a build's inserter), also counting every key it is given in this shadow: safe
   * for as many threads at once as {@code inner} is. The filter's bits are exactly {@code inner}'s.
   */
  public KeyInserter counting(KeyInserter inner) {
    // Each thread's own positions array: the inserter may be shared by a build's helpers, and a
    // new array per key would be a build's only per-key allocation besides the key itself.
    ThreadLocal<long[]> scratch = ThreadLocal.withInitial(() -> new long[positions.perKey()]);
    return new KeyInserter() {
      @Override
      public boolean putString(String key) {
        boolean changed = inner.putString(key);
        long[] at = scratch.get();
        positions.ofString(key, at);
        countBuilt(at, fingerprintOf(key));
        return changed;
      }

      @Override
      public boolean putUtf8(byte[] utf8, int offset, int length) {
        boolean changed = inner.putUtf8(utf8, offset, length);
        long[] at = scratch.get();
        positions.ofUtf8(utf8, offset, length, at);
        countBuilt(at, fingerprints.of(utf8, offset, length));
        return changed;
      }

      @Override
      public boolean putLong(long key) {
        boolean changed = inner.putLong(key);
        long[] at = scratch.get();
        positions.ofLong(key, at);
        countBuilt(at, fingerprints.of(key));
        return changed;
      }
    };
  }

  /**
   * From now on, follows the version of payload {@code publishedSha256}, consistent with the stream
   * at {@code position}.
   */
  synchronized void follow(StreamPosition position, String publishedSha256) {
    this.applied = position;
    this.partitions = position.offsets().size();
    this.publishedSha256 = publishedSha256;
  }

  /** The stream's partitions when the full build recorded its position (0: none listed). */
  public synchronized int partitions() {
    return partitions;
  }

  /** Whether this shadow follows the version of payload {@code sha256}: only then may it apply. */
  public synchronized boolean follows(String sha256) {
    return publishedSha256 != null && publishedSha256.equals(sha256);
  }

  /** The position up to which events have been applied (every partition's next offset). */
  public synchronized StreamPosition applied() {
    return applied;
  }

  /**
   * Applies one batch read from the published position, in stream order: adds counted, deletes
   * decided one by one ({@link Outcome}), then the applied position moved to {@code next}. Once
   * {@link #stopped}, nothing more is applied.
   */
  public synchronized Applied apply(
      List<String> adds, List<Deletion> deletions, StreamPosition next) {
    long removed = 0;
    long waiting = 0;
    long skipped = 0;
    int added = 0;
    long[] at = new long[positions.perKey()];
    for (Deletion deletion : deletions) {
      for (; added < Math.min(deletion.addsBefore(), adds.size()); added++) {
        add(adds.get(added), at);
      }
      if (stopped != null) {
        return new Applied(0, 0, 0, stopped);
      }
      switch (remove(deletion, at)) {
        case REMOVED -> removed++;
        case SKIPPED -> skipped++;
        case UNCOUNTED, UNORDERED -> waiting++;
      }
    }
    for (; added < adds.size(); added++) {
      add(adds.get(added), at);
    }
    if (stopped != null) {
      return new Applied(0, 0, 0, stopped);
    }
    applied = furthest(applied, next);
    return new Applied(removed, waiting, skipped, null);
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
    return (counters.getInt((position >>> 3) << 2) >>> ((int) (position & 7) << 2)) & 0xF;
  }

  /** The occurrences of {@code key} (as text) counted and not deleted; -1: none ever counted. */
  int occurrences(String key) {
    long slot = fingerprints.find(fingerprintOf(key));
    return slot < 0 ? -1 : fingerprints.count(slot);
  }

  /** Counts one occurrence of {@code key} (as text). */
  void add(String key, long[] at) {
    positionsOf(key, at);
    count(at, fingerprintOf(key));
  }

  /**
   * A key the full build read: counted, and pinned when the build reads it again. The shadow's
   * exactness rests on one row per ID: a delete is matched to its key, not to its row. With an ID
   * in two rows, a delete of one row (or the same delete delivered twice) would take the other
   * row's occurrence and clear a live ID; so a repeated ID's deletes wait for the next full build.
   */
  private void countBuilt(long[] at, long fingerprint) {
    count(at, fingerprint, true);
  }

  private void count(long[] at, long fingerprint) {
    count(at, fingerprint, false);
  }

  private void count(long[] at, long fingerprint, boolean pinRepeats) {
    if (!(pinRepeats
        ? fingerprints.addPinningRepeats(fingerprint)
        : fingerprints.add(fingerprint))) {
      // Its delete would find no fingerprint and wait, which is safe; but a shadow that cannot
      // record new keys any more stops, so the status says deletes wait instead of hiding it.
      stopped =
          "the counting shadow's key fingerprints are at their bound ("
              + fingerprints.maxKeys()
              + " distinct keys: the full build's count and a quarter more)";
    }
    for (long p : at) {
      increment(p);
    }
  }

  private Outcome remove(Deletion deletion, long[] at) {
    if (applied != null && deletion.offset() < applied.of(deletion.partition())) {
      return Outcome.SKIPPED;
    }
    if (!deletion.ordered()) {
      return Outcome.UNORDERED;
    }
    long slot = fingerprints.find(fingerprintOf(deletion.key()));
    if (slot < 0) {
      return Outcome.UNCOUNTED;
    }
    int count = fingerprints.count(slot);
    if (count == 0 || count == KeyFingerprints.SATURATED) {
      return Outcome.UNCOUNTED;
    }
    positionsOf(deletion.key(), at);
    for (long p : at) {
      if (counter(p) == 0) {
        return Outcome.UNCOUNTED; // a fingerprint collision: this key set no bit
      }
    }
    fingerprints.take(slot);
    for (long p : at) {
      if (decrement(p)) {
        remember(p);
      }
    }
    return Outcome.REMOVED;
  }

  private long fingerprintOf(String key) {
    if (keyType == KeyType.LONG) {
      return fingerprints.of(Long.parseLong(key));
    }
    byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
    return fingerprints.of(utf8, 0, utf8.length);
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

  private void increment(long position) {
    long at = (position >>> 3) << 2;
    int shift = (int) (position & 7) << 2;
    while (true) {
      int word = counters.getInt(at);
      if (((word >>> shift) & 0xF) == SATURATED || counters.casInt(at, word, word + (1 << shift))) {
        return;
      }
    }
  }

  /** Decrements the counter unless it is 0 or saturated; whether it reached 0. */
  private boolean decrement(long position) {
    long at = (position >>> 3) << 2;
    int shift = (int) (position & 7) << 2;
    while (true) {
      int word = counters.getInt(at);
      int counter = (word >>> shift) & 0xF;
      if (counter == 0 || counter == SATURATED) {
        return false;
      }
      if (counters.casInt(at, word, word - (1 << shift))) {
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

  /** Closes and deletes both files. */
  @Override
  public void close() {
    counters.close();
    fingerprints.close();
  }
}
