package io.bloomoperator.snapshot;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * A read-only Bloom filter laid out exactly as Guava's {@code BloomFilter} (strategy
 * MURMUR128_MITZ_64) lays it out, so {@link SnapshotEncoder} can write it in Guava's format and
 * Guava can read it back. Filled by a {@link Builder}, or read back by {@link SnapshotDecoder}.
 *
 * <p>Index derivation, as in Guava: hash the key with murmur3_x64_128 (seed 0) into (h1, h2); then
 * for {@code i < k} set/test bit {@code (combined & Long.MAX_VALUE) % numBits} with {@code combined
 * = h1 + i * h2}. Bit {@code b} is word {@code b >>> 6}, mask {@code 1L << b}.
 *
 * <p>No method of its own changes a bit: the words are written before the instance exists (by the
 * builder or the decoder, which hand them over), and afterwards only by {@link
 * InPlaceDeltas#setBits}, which a reader uses to add a stream delta to the filter it serves: it
 * only turns bits on, with atomic ORs, so a lookup sees each bit either before or after, never a
 * bit turned off. Its final fields publish it safely, so any number of threads may call the {@code
 * mightContain*} methods concurrently, without locks. {@link #equals}, {@link #hashCode} and {@link
 * #bitCount} read the words as they are at that moment.
 *
 * <p>Every filter has one {@link KeyType}; asking about a key of the other type throws instead of
 * answering from hashes of the wrong bytes.
 *
 * <p>A filter in the {@link FilterFormat#SPLIT_BLOCK} layout keeps the same word array, read as
 * Parquet's blocks (four words per 32-byte block, see {@link SplitBlockBits}); k is then 8 and
 * numBits a multiple of 256. Everything that treats the bits as an array (deltas, digests, the
 * encoder) works unchanged for both layouts.
 */
public final class BloomFilterBits implements BloomLookup {

  private final long[] words;
  private final long numBits;
  private final int numHashFunctions;
  private final KeyType keyType;
  private final FilterFormat format;

  /** The split-block view of {@link #words}, or null in the Guava layout. */
  private final SplitBlockBits blocked;

  /**
   * floor((2^64 - 1) / numBits): lets {@link #remainder} replace Guava's 64-bit division (tens of
   * cycles, k times per key) by a multiplication, with bit-for-bit the same result.
   */
  private final long reciprocal;

  // Created once: the hash functions call back into it, which keeps the lookup path
  // allocation-free.
  private final Hash128Consumer testBits = this::testBits;

  private BloomFilterBits(
      KeyType keyType, FilterFormat format, int numHashFunctions, long[] words) {
    this.keyType = keyType;
    this.format = format;
    this.blocked = format == FilterFormat.SPLIT_BLOCK ? SplitBlockBits.view(keyType, words) : null;
    this.numHashFunctions = numHashFunctions;
    this.words = words;
    this.numBits = (long) words.length * Long.SIZE;
    this.reciprocal = Long.divideUnsigned(-1L, numBits);
  }

  /** A builder of an empty filter sized by {@code sizing}. */
  public static Builder builder(KeyType keyType, BloomFilterSizing sizing) {
    return builder(keyType, sizing.numBits(), sizing.numHashFunctions());
  }

  /**
   * A builder of an empty filter with {@code numBits} rounded up to whole 64-bit words (as Guava
   * does).
   *
   * @throws IllegalArgumentException if numBits is not in 1..{@link BloomFilterSizing#MAX_BITS} or
   *     numHashFunctions not in 1..255
   */
  public static Builder builder(KeyType keyType, long numBits, int numHashFunctions) {
    if (numBits < 1 || numBits > BloomFilterSizing.MAX_BITS) {
      throw new IllegalArgumentException(
          "numBits must be in 1.." + BloomFilterSizing.MAX_BITS + ", got " + numBits);
    }
    int numLongs = (int) ((numBits + Long.SIZE - 1) / Long.SIZE);
    return new Builder(keyType, FilterFormat.GUAVA, numHashFunctions, new long[numLongs]);
  }

  /** A builder of an empty split-block filter ({@link FilterFormat#SPLIT_BLOCK}) of that size. */
  public static Builder builder(KeyType keyType, SplitBlockSizing sizing) {
    return splitBlockBuilder(keyType, sizing.numBlocks());
  }

  /**
   * A builder of an empty split-block filter ({@link FilterFormat#SPLIT_BLOCK}) of {@code
   * numBlocks} 32-byte blocks.
   *
   * @throws IllegalArgumentException if numBlocks is not in 1..{@link SplitBlockSizing#MAX_BLOCKS}
   */
  public static Builder splitBlockBuilder(KeyType keyType, long numBlocks) {
    if (numBlocks < 1 || numBlocks > SplitBlockSizing.MAX_BLOCKS) {
      throw new IllegalArgumentException(
          "numBlocks must be in 1.." + SplitBlockSizing.MAX_BLOCKS + ", got " + numBlocks);
    }
    return new Builder(
        keyType,
        FilterFormat.SPLIT_BLOCK,
        FilterFormat.SPLIT_BLOCK_BITS_PER_KEY,
        new long[(int) numBlocks * 4]);
  }

  /**
   * A builder that starts from a copy of {@code base}'s bits (same key type and geometry), for
   * adding keys to a filter already built; {@code base} itself never changes.
   */
  public static Builder builder(BloomFilterBits base) {
    return new Builder(base.keyType, base.format, base.numHashFunctions, base.words.clone());
  }

  /**
   * Takes ownership of {@code words} (no copy): the decoder fills the array, then hands it over.
   */
  static BloomFilterBits wrap(
      KeyType keyType, FilterFormat format, int numHashFunctions, long[] words) {
    checkGeometry(keyType, format, numHashFunctions, words);
    return new BloomFilterBits(keyType, format, numHashFunctions, words);
  }

  /**
   * False means the string key was never added; true means it probably was.
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  @Override
  public boolean mightContainString(String key) {
    requireType(keyType, KeyType.STRING);
    SplitBlockBits split = blocked;
    return split != null
        ? split.mightContainHash(Xxh64.hashString(key))
        : Murmur3x64.hashString(key, testBits);
  }

  /**
   * False means the long key was never added; true means it probably was.
   *
   * @throws IllegalStateException if this is not a {@link KeyType#LONG} filter
   */
  @Override
  public boolean mightContainLong(long key) {
    requireType(keyType, KeyType.LONG);
    SplitBlockBits split = blocked;
    return split != null
        ? split.mightContainHash(Xxh64.hashLong(key))
        : Murmur3x64.hashLong(key, testBits);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  @Override
  public boolean mightContainUtf8(byte[] utf8, int offset, int length) {
    requireType(keyType, KeyType.STRING);
    SplitBlockBits split = blocked;
    return split != null
        ? split.mightContainHash(Xxh64.hashBytes(utf8, offset, length))
        : Murmur3x64.hashBytes(utf8, offset, length, testBits);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  @Override
  public boolean mightContainUtf8(ByteBuffer utf8) {
    requireType(keyType, KeyType.STRING);
    int offset = utf8.position();
    int length = utf8.limit() - offset;
    SplitBlockBits split = blocked;
    return split != null
        ? split.mightContainHash(Xxh64.hashBuffer(utf8, offset, length))
        : Murmur3x64.hashBuffer(utf8, offset, length, testBits);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  @Override
  public boolean mightContainChars(CharSequence key) {
    requireType(keyType, KeyType.STRING);
    SplitBlockBits split = blocked;
    return split != null
        ? split.mightContainHash(Xxh64.hashChars(key))
        : Murmur3x64.hashChars(key, testBits);
  }

  /**
   * {@inheritDoc}
   *
   * <p>Allocates nothing once the calling thread has its scratch object (created at its first
   * batch: the split-block layout's 64 hashes in flight, the Guava layout's group of 4).
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  @Override
  public void mightContainUtf8s(
      byte[] data, int[] offsets, int[] lengths, int from, int count, boolean[] results) {
    requireType(keyType, KeyType.STRING);
    if (blocked != null) {
      blocked.mightContainUtf8s(data, offsets, lengths, from, count, results);
    } else {
      GuavaBatch.utf8s(this, data, offsets, lengths, from, count, results);
    }
  }

  /**
   * Looks up {@code keys[from, from + count)}, the answer for {@code keys[from + i]} into {@code
   * results[i]}: hashes a group of keys before probing any of them, so their cache misses overlap.
   * Allocates nothing once the calling thread has its scratch object (created at its first batch:
   * the split-block layout's 64 hashes in flight, the Guava layout's group of 4).
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   * @throws IndexOutOfBoundsException if the range is outside {@code keys} or {@code results} is
   *     shorter than {@code count}
   */
  @Override
  public void mightContainStrings(String[] keys, int from, int count, boolean[] results) {
    requireType(keyType, KeyType.STRING);
    if (blocked != null) {
      blocked.mightContainStrings(keys, from, count, results);
    } else {
      GuavaBatch.strings(this, keys, from, count, results);
    }
  }

  /**
   * {@link #mightContainStrings} for long keys.
   *
   * @throws IllegalStateException if this is not a {@link KeyType#LONG} filter
   * @throws IndexOutOfBoundsException as {@link #mightContainStrings}
   */
  @Override
  public void mightContainLongs(long[] keys, int from, int count, boolean[] results) {
    requireType(keyType, KeyType.LONG);
    if (blocked != null) {
      blocked.mightContainLongs(keys, from, count, results);
    } else {
      GuavaBatch.longs(this, keys, from, count, results);
    }
  }

  /**
   * {@link #mightContainString} or {@link #mightContainLong}, chosen by the key's type: a {@link
   * CharSequence} for STRING filters, a {@link Long} (or any integral {@link Number} that fits:
   * Integer, Short, Byte) for LONG filters.
   *
   * @throws IllegalArgumentException if the object's type does not match {@link #keyType()}
   */
  public boolean mightContain(Object key) {
    return keyType == KeyType.STRING
        ? mightContainString(asString(key))
        : mightContainLong(asLong(key));
  }

  /** The key type this filter was built for. */
  @Override
  public KeyType keyType() {
    return keyType;
  }

  /** Number of bits (always a multiple of 64). */
  @Override
  public long numBits() {
    return numBits;
  }

  /** The layout of the bits. */
  @Override
  public FilterFormat format() {
    return format;
  }

  /** Number of 64-bit words. */
  public int numLongs() {
    return words.length;
  }

  /** k, the number of bits set per key. */
  @Override
  public int numHashFunctions() {
    return numHashFunctions;
  }

  /** Number of set bits (a full scan; meant for status reporting, not the hot path). */
  public long bitCount() {
    long count = 0;
    for (long word : words) {
      count += Long.bitCount(word);
    }
    return count;
  }

  /**
   * Guava's {@code expectedFpp()}: {@code (bitCount / numBits)^k}, the chance a random absent key
   * hits only set bits given the bits actually set.
   */
  public double currentFpp() {
    // For split-block filters the same formula with k = 8 (one bit per 32-bit word) slightly
    // underestimates, as it ignores that some blocks are fuller than others.
    return Math.pow((double) bitCount() / numBits, numHashFunctions);
  }

  /** The backing words, not copied: for {@link SnapshotEncoder}'s bulk transfer only. */
  long[] words() {
    return words;
  }

  /** Filters are equal when key type, layout, k and every bit match. */
  @Override
  public boolean equals(Object o) {
    return o instanceof BloomFilterBits other
        && keyType == other.keyType
        && format == other.format
        && numHashFunctions == other.numHashFunctions
        && Arrays.equals(words, other.words);
  }

  @Override
  public int hashCode() {
    return Objects.hash(keyType, format, numHashFunctions, Arrays.hashCode(words));
  }

  @Override
  public String toString() {
    return "BloomFilterBits{keyType="
        + keyType
        + ", format="
        + format.crdName()
        + ", numBits="
        + numBits
        + ", numHashFunctions="
        + numHashFunctions
        + "}";
  }

  /** Guava's probe for a Murmur3 hash (h1, h2). */
  boolean testBits(long h1, long h2) {
    // The first two probes are loaded before either is tested, so their cache misses overlap
    // (most of a lookup's time at 10M keys); then early exit, like Guava, for the rest.
    final long[] w = words;
    long combined = h1;
    long i0 = indexOf(combined & Long.MAX_VALUE);
    combined += h2;
    if (numHashFunctions == 1) {
      return (w[(int) (i0 >>> 6)] & (1L << i0)) != 0;
    }
    long i1 = indexOf(combined & Long.MAX_VALUE);
    long w0 = w[(int) (i0 >>> 6)];
    long w1 = w[(int) (i1 >>> 6)];
    if ((w0 & (1L << i0)) == 0 | (w1 & (1L << i1)) == 0) {
      return false;
    }
    combined += h2;
    for (int i = 2; i < numHashFunctions; i++) {
      long index = indexOf(combined & Long.MAX_VALUE);
      if ((w[(int) (index >>> 6)] & (1L << index)) == 0) {
        return false;
      }
      combined += h2;
    }
    return true;
  }

  long indexOf(long x) {
    return remainder(x, numBits, reciprocal);
  }

  /**
   * {@code x % m} for {@code 0 <= x < 2^63}, given {@code reciprocal = Long.divideUnsigned(-1L,
   * m)}, by Barrett reduction. The estimated quotient {@code floor(x * reciprocal / 2^64)} is never
   * above the true one and at most one below it ({@code x / 2^64 < 1/2}), so one conditional
   * subtraction makes the remainder exact. Both factors are below 2^63, so the signed high product
   * equals the unsigned one.
   */
  static long remainder(long x, long m, long reciprocal) {
    long q = Math.multiplyHigh(x, reciprocal);
    long r = x - q * m;
    return r >= m ? r - m : r;
  }

  private static void checkGeometry(
      KeyType keyType, FilterFormat format, int numHashFunctions, long[] words) {
    Objects.requireNonNull(keyType, "keyType");
    Objects.requireNonNull(format, "format");
    if (format == FilterFormat.SPLIT_BLOCK
        && (numHashFunctions != FilterFormat.SPLIT_BLOCK_BITS_PER_KEY || words.length % 4 != 0)) {
      throw new IllegalArgumentException(
          "a split-block filter has k = 8 and whole 32-byte blocks, got k = "
              + numHashFunctions
              + " and "
              + words.length
              + " words");
    }
    if (numHashFunctions < 1 || numHashFunctions > BloomFilterSizing.MAX_HASH_FUNCTIONS) {
      throw new IllegalArgumentException(
          "numHashFunctions must be in 1..255, got " + numHashFunctions);
    }
    if (words.length == 0) {
      throw new IllegalArgumentException("a filter needs at least one 64-bit word");
    }
  }

  private static void requireType(KeyType keyType, KeyType expected) {
    if (keyType != expected) {
      throw new IllegalStateException(
          "this filter holds "
              + keyType.crdName()
              + " keys; a "
              + expected.crdName()
              + " key cannot be added or looked up");
    }
  }

  private static String asString(Object key) {
    if (key instanceof CharSequence cs) {
      return cs.toString();
    }
    throw new IllegalArgumentException(
        "String filter needs a CharSequence key, got " + describe(key));
  }

  private static long asLong(Object key) {
    if (key instanceof Long
        || key instanceof Integer
        || key instanceof Short
        || key instanceof Byte) {
      return ((Number) key).longValue();
    }
    throw new IllegalArgumentException("Long filter needs an integral key, got " + describe(key));
  }

  private static String describe(Object key) {
    return key == null ? "null" : key.getClass().getName();
  }

  /**
   * Fills a filter key by key, then hands it over as a read-only {@link BloomFilterBits}. For one
   * thread: {@code put*} are not atomic (unlike Guava's lock-free array, which pays for a CAS on
   * every put). After {@link #build()} the builder refuses further keys, so the filter it returned
   * can never change.
   */
  public static final class Builder implements KeyInserter {

    private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

    private final KeyType keyType;
    private final FilterFormat format;
    private final int numHashFunctions;
    private final long numBits;
    private final long numBlocks;
    private final long reciprocal;
    private long[] words; // null once built
    private final Hash128Consumer setBits = this::setBits;

    private Builder(KeyType keyType, FilterFormat format, int numHashFunctions, long[] words) {
      checkGeometry(keyType, format, numHashFunctions, words);
      this.keyType = keyType;
      this.format = format;
      this.numBlocks = words.length / 4;
      this.numHashFunctions = numHashFunctions;
      this.words = words;
      this.numBits = (long) words.length * Long.SIZE;
      this.reciprocal = Long.divideUnsigned(-1L, numBits);
    }

    /**
     * Adds a string key (hashed as Guava's UTF-8 string funnel does).
     *
     * @return true if any bit changed, i.e. the key was definitely not in the filter before
     * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter, or already
     *     built
     */
    @Override
    public boolean putString(String key) {
      requireType(keyType, KeyType.STRING);
      requireOpen();
      return format == FilterFormat.SPLIT_BLOCK
          ? SplitBlockBits.put(words, numBlocks, Xxh64.hashString(key))
          : Murmur3x64.hashString(key, setBits);
    }

    /**
     * Adds a long key (hashed as Guava's long funnel does).
     *
     * @return true if any bit changed
     * @throws IllegalStateException if this is not a {@link KeyType#LONG} filter, or already built
     */
    @Override
    public boolean putLong(long key) {
      requireType(keyType, KeyType.LONG);
      requireOpen();
      return format == FilterFormat.SPLIT_BLOCK
          ? SplitBlockBits.put(words, numBlocks, Xxh64.hashLong(key))
          : Murmur3x64.hashLong(key, setBits);
    }

    /**
     * Adds the string key whose UTF-8 encoding is {@code utf8[offset, offset + length)} (valid
     * UTF-8: the same bits as {@link #putString} of the decoded text, without decoding it).
     *
     * @return true if any bit changed
     * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter, or already
     *     built
     */
    @Override
    public boolean putUtf8(byte[] utf8, int offset, int length) {
      requireType(keyType, KeyType.STRING);
      requireOpen();
      return format == FilterFormat.SPLIT_BLOCK
          ? SplitBlockBits.put(words, numBlocks, Xxh64.hashBytes(utf8, offset, length))
          : Murmur3x64.hashBytes(utf8, offset, length, setBits);
    }

    /**
     * Split-block only: the number of 32-byte blocks, over which {@link SplitBlockBits#blockOf}
     * spreads the keys.
     *
     * @throws IllegalStateException in the Guava layout
     */
    public long numBlocks() {
      requireSplitBlock();
      return numBlocks;
    }

    /**
     * Split-block only: adds the keys whose hashes ({@link SplitBlockBits#hashString}, {@link
     * SplitBlockBits#hashUtf8}, {@link SplitBlockBits#hashLong}) are {@code hashes[from, from +
     * count)}, with plain writes to the four words of each key's block ({@link
     * SplitBlockBits#blockOf}) and nothing else. Several threads may therefore call this at once,
     * without atomic instructions, as long as no two of them hold hashes of the same block at the
     * same time (each owns its own range of blocks, say); the caller makes every call happen-before
     * {@link #build()}. The bits are those of adding the keys one by one, in any order.
     *
     * @return how many of the keys changed no bit (all their bits were set already)
     * @throws IllegalStateException in the Guava layout, or if already built
     */
    public int putHashes(long[] hashes, int from, int count) {
      requireSplitBlock();
      requireOpen();
      Objects.checkFromIndexSize(from, count, hashes.length);
      final long[] w = words;
      final long blocks = numBlocks;
      int unchanged = 0;
      for (int i = from, end = from + count; i < end; i++) {
        if (!SplitBlockBits.put(w, blocks, hashes[i])) {
          unchanged++;
        }
      }
      return unchanged;
    }

    /**
     * A view of this builder that any number of threads may add keys through at once, until {@link
     * #build()}: each bit is set with an atomic OR, so the words are the same whatever the order or
     * interleaving of the keys (OR is commutative), bit for bit those of adding them one by one.
     * The caller makes every thread's puts happen-before {@link #build()} (e.g. by joining them).
     * "Changed" answers are per put and may differ from a one-thread build when two threads add
     * keys sharing a bit at the same moment.
     */
    public KeyInserter concurrent() {
      requireOpen();
      final long[] w = words;
      if (format == FilterFormat.SPLIT_BLOCK) {
        return SplitBlockBits.Builder.concurrent(keyType, w, numBlocks);
      }
      final Hash128Consumer setAtomically = (h1, h2) -> setBitsAtomically(w, h1, h2);
      return new KeyInserter() {
        @Override
        public boolean putString(String key) {
          requireType(keyType, KeyType.STRING);
          return Murmur3x64.hashString(key, setAtomically);
        }

        @Override
        public boolean putUtf8(byte[] utf8, int offset, int length) {
          requireType(keyType, KeyType.STRING);
          return Murmur3x64.hashBytes(utf8, offset, length, setAtomically);
        }

        @Override
        public boolean putLong(long key) {
          requireType(keyType, KeyType.LONG);
          return Murmur3x64.hashLong(key, setAtomically);
        }
      };
    }

    /**
     * Adds a key given as an object: a {@link CharSequence} for STRING filters, a {@link Long} (or
     * any integral {@link Number} that fits: Integer, Short, Byte) for LONG filters.
     *
     * @return true if any bit changed
     * @throws IllegalArgumentException if the object's type does not match {@link #keyType()}
     * @throws IllegalStateException if already built
     */
    public boolean put(Object key) {
      return keyType == KeyType.STRING ? putString(asString(key)) : putLong(asLong(key));
    }

    /** The key type of the filter being built. */
    public KeyType keyType() {
      return keyType;
    }

    /** Number of bits (always a multiple of 64). */
    public long numBits() {
      return numBits;
    }

    /** The layout of the filter being built. */
    public FilterFormat format() {
      return format;
    }

    /** k, the number of bits set per key. */
    public int numHashFunctions() {
      return numHashFunctions;
    }

    /**
     * The filter with every key added so far. Hands the bits over without copying them (a filter
     * may be hundreds of megabytes), which is why this builder takes no keys afterwards.
     *
     * @throws IllegalStateException if already built
     */
    public BloomFilterBits build() {
      requireOpen();
      long[] built = words;
      words = null;
      return new BloomFilterBits(keyType, format, numHashFunctions, built);
    }

    private void requireSplitBlock() {
      if (format != FilterFormat.SPLIT_BLOCK) {
        throw new IllegalStateException(
            "only a split-block filter has blocks; this one is " + format.crdName());
      }
    }

    private void requireOpen() {
      if (words == null) {
        throw new IllegalStateException("this filter was already built; it takes no more keys");
      }
    }

    private boolean setBitsAtomically(long[] w, long h1, long h2) {
      boolean changed = false;
      long combined = h1;
      for (int i = 0; i < numHashFunctions; i++) {
        long index = remainder(combined & Long.MAX_VALUE, numBits, reciprocal);
        int wordIndex = (int) (index >>> 6);
        long mask = 1L << index;
        // A plain read first: a bit once set stays set, so a set bit seen is really set and needs
        // no atomic update (most of them, once the filter fills); an unset one seen may be stale,
        // which the atomic OR settles.
        if ((w[wordIndex] & mask) == 0
            && ((long) WORDS.getAndBitwiseOr(w, wordIndex, mask) & mask) == 0) {
          changed = true;
        }
        combined += h2;
      }
      return changed;
    }

    private boolean setBits(long h1, long h2) {
      final long[] w = words;
      boolean changed = false;
      long combined = h1;
      for (int i = 0; i < numHashFunctions; i++) {
        long index = remainder(combined & Long.MAX_VALUE, numBits, reciprocal);
        int wordIndex = (int) (index >>> 6);
        long mask = 1L << index; // Java masks the shift count to index & 63
        long old = w[wordIndex];
        if ((old & mask) == 0) {
          w[wordIndex] = old | mask;
          changed = true;
        }
        combined += h2;
      }
      return changed;
    }
  }
}
