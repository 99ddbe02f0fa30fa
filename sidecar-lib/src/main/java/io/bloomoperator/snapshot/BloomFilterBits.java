package io.bloomoperator.snapshot;

import java.nio.LongBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * The bits of a Bloom filter laid out exactly as Guava's {@code BloomFilter} (strategy
 * MURMUR128_MITZ_64) lays them out, so {@link SnapshotEncoder} can write them in Guava's format and Guava
 * can read them back.
 *
 * <p>Index derivation, as in Guava: hash the key with murmur3_x64_128 (seed 0) into (h1, h2); then for
 * {@code i < k} set/test bit {@code (combined & Long.MAX_VALUE) % numBits} with {@code combined = h1 + i *
 * h2}. Bit {@code b} is word {@code b >>> 6}, mask {@code 1L << b}.
 *
 * <p>Threading: the {@code put*} methods are for a single builder thread and are not atomic (unlike
 * Guava's lock-free array, which pays for CAS on every put). The {@code mightContain*} methods only read,
 * so any number of threads may call them concurrently once the filter is safely published (a filter from
 * {@link SnapshotDecoder} is fully built before its constructor returns, so its final fields publish it).
 *
 * <p>Every filter has one {@link KeyType}; asking about a key of the other type throws instead of
 * answering from hashes of the wrong bytes.
 */
public final class BloomFilterBits {

  private final long[] words;
  private final long numBits;
  private final int numHashFunctions;
  private final KeyType keyType;
  /**
   * floor((2^64 - 1) / numBits): lets {@link #indexOf} replace Guava's 64-bit division (tens of
   * cycles, k times per key) by a multiplication, with bit-for-bit the same result.
   */
  private final long reciprocal;

  // One consumer per operation, created once: the hash functions call back into these, which keeps the
  // per-key path allocation-free.
  private final Hash128Consumer setBits = this::setBits;
  private final Hash128Consumer testBits = this::testBits;

  private BloomFilterBits(KeyType keyType, int numHashFunctions, long[] words) {
    this.keyType = Objects.requireNonNull(keyType, "keyType");
    if (numHashFunctions < 1 || numHashFunctions > BloomFilterSizing.MAX_HASH_FUNCTIONS) {
      throw new IllegalArgumentException(
          "numHashFunctions must be in 1..255, got " + numHashFunctions);
    }
    if (words.length == 0) {
      throw new IllegalArgumentException("a filter needs at least one 64-bit word");
    }
    this.numHashFunctions = numHashFunctions;
    this.words = words;
    this.numBits = (long) words.length * Long.SIZE;
    this.reciprocal = Long.divideUnsigned(-1L, numBits);
  }

  /** An empty filter sized by {@code sizing}. */
  public static BloomFilterBits create(KeyType keyType, BloomFilterSizing sizing) {
    return create(keyType, sizing.numBits(), sizing.numHashFunctions());
  }

  /**
   * An empty filter with {@code numBits} rounded up to whole 64-bit words (as Guava does).
   *
   * @throws IllegalArgumentException if numBits is not in 1..{@link BloomFilterSizing#MAX_BITS} or
   *     numHashFunctions not in 1..255
   */
  public static BloomFilterBits create(KeyType keyType, long numBits, int numHashFunctions) {
    if (numBits < 1 || numBits > BloomFilterSizing.MAX_BITS) {
      throw new IllegalArgumentException(
          "numBits must be in 1.." + BloomFilterSizing.MAX_BITS + ", got " + numBits);
    }
    int numLongs = (int) ((numBits + Long.SIZE - 1) / Long.SIZE);
    return new BloomFilterBits(keyType, numHashFunctions, new long[numLongs]);
  }

  /** Takes ownership of {@code words} (no copy): the decoder fills the array, then hands it over. */
  static BloomFilterBits wrap(KeyType keyType, int numHashFunctions, long[] words) {
    return new BloomFilterBits(keyType, numHashFunctions, words);
  }

  /**
   * Adds a string key (hashed as Guava's UTF-8 string funnel does).
   *
   * @return true if any bit changed, i.e. the key was definitely not in the filter before
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  public boolean putString(String key) {
    requireType(KeyType.STRING);
    return Murmur3x64.hashString(key, setBits);
  }

  /**
   * Adds a long key (hashed as Guava's long funnel does).
   *
   * @return true if any bit changed
   * @throws IllegalStateException if this is not a {@link KeyType#LONG} filter
   */
  public boolean putLong(long key) {
    requireType(KeyType.LONG);
    return Murmur3x64.hashLong(key, setBits);
  }

  /**
   * False means the string key was never added; true means it probably was.
   *
   * @throws IllegalStateException if this is not a {@link KeyType#STRING} filter
   */
  public boolean mightContainString(String key) {
    requireType(KeyType.STRING);
    return Murmur3x64.hashString(key, testBits);
  }

  /**
   * False means the long key was never added; true means it probably was.
   *
   * @throws IllegalStateException if this is not a {@link KeyType#LONG} filter
   */
  public boolean mightContainLong(long key) {
    requireType(KeyType.LONG);
    return Murmur3x64.hashLong(key, testBits);
  }

  /**
   * Adds a key given as an object: a {@link CharSequence} for STRING filters, a {@link Long} (or any
   * integral {@link Number} that fits: Integer, Short, Byte) for LONG filters.
   *
   * @throws IllegalArgumentException if the object's type does not match {@link #keyType()}
   */
  public boolean put(Object key) {
    return keyType == KeyType.STRING ? putString(asString(key)) : putLong(asLong(key));
  }

  /** {@link #mightContainString} or {@link #mightContainLong}, chosen by the key's type; see {@link #put}. */
  public boolean mightContain(Object key) {
    return keyType == KeyType.STRING
        ? mightContainString(asString(key))
        : mightContainLong(asLong(key));
  }

  /** The key type this filter was built for. */
  public KeyType keyType() {
    return keyType;
  }

  /** Number of bits (always a multiple of 64). */
  public long numBits() {
    return numBits;
  }

  /** Number of 64-bit words. */
  public int numLongs() {
    return words.length;
  }

  /** k, the number of bits set per key. */
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
   * Guava's {@code expectedFpp()}: {@code (bitCount / numBits)^k}, the chance a random absent key hits
   * only set bits given the bits actually set.
   */
  public double currentFpp() {
    return Math.pow((double) bitCount() / numBits, numHashFunctions);
  }

  /** A read-only view of the words, in order, for the encoder. No copy is made. */
  public LongBuffer wordsView() {
    return LongBuffer.wrap(words).asReadOnlyBuffer();
  }

  /** The backing words, not copied: for {@link SnapshotEncoder}'s bulk transfer only. */
  long[] words() {
    return words;
  }

  /** Filters are equal when key type, k and every bit match. */
  @Override
  public boolean equals(Object o) {
    return o instanceof BloomFilterBits other
        && keyType == other.keyType
        && numHashFunctions == other.numHashFunctions
        && Arrays.equals(words, other.words);
  }

  @Override
  public int hashCode() {
    return Objects.hash(keyType, numHashFunctions, Arrays.hashCode(words));
  }

  @Override
  public String toString() {
    return "BloomFilterBits{keyType=" + keyType + ", numBits=" + numBits + ", numHashFunctions="
        + numHashFunctions + "}";
  }

  private boolean setBits(long h1, long h2) {
    final long[] w = words;
    final long bitSize = numBits;
    boolean changed = false;
    long combined = h1;
    for (int i = 0; i < numHashFunctions; i++) {
      long index = indexOf(combined & Long.MAX_VALUE);
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

  private boolean testBits(long h1, long h2) {
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

  /**
   * {@code x % numBits} for {@code 0 <= x < 2^63}, by Barrett reduction. The estimated quotient
   * {@code floor(x * reciprocal / 2^64)} is never above the true one and at most one below it
   * ({@code x / 2^64 < 1/2}), so one conditional subtraction makes the remainder exact. Both
   * factors are below 2^63, so the signed high product equals the unsigned one.
   */
  private long indexOf(long x) {
    return remainder(x, numBits, reciprocal);
  }

  /** {@code x % m} given {@code reciprocal = Long.divideUnsigned(-1L, m)}; see {@link #indexOf}. */
  static long remainder(long x, long m, long reciprocal) {
    long q = Math.multiplyHigh(x, reciprocal);
    long r = x - q * m;
    return r >= m ? r - m : r;
  }

  private void requireType(KeyType expected) {
    if (keyType != expected) {
      throw new IllegalStateException("this filter holds " + keyType.crdName()
          + " keys; a " + expected.crdName() + " key cannot be added or looked up");
    }
  }

  private static String asString(Object key) {
    if (key instanceof CharSequence cs) {
      return cs.toString();
    }
    throw new IllegalArgumentException("String filter needs a CharSequence key, got " + describe(key));
  }

  private static long asLong(Object key) {
    if (key instanceof Long || key instanceof Integer || key instanceof Short || key instanceof Byte) {
      return ((Number) key).longValue();
    }
    throw new IllegalArgumentException("Long filter needs an integral key, got " + describe(key));
  }

  private static String describe(Object key) {
    return key == null ? "null" : key.getClass().getName();
  }
}
