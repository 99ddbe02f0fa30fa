package io.bloomoperator.snapshot;

/**
 * The read side of a verified Bloom filter, whatever holds its bits: a {@code long[]} on the heap
 * ({@link BloomFilterBits}) or a read-only memory-mapped file ({@link MappedBloomFilterBits}). Both
 * answer every lookup identically for the same payload. Implementations are immutable and safe for
 * any number of threads.
 */
public interface BloomLookup {

  /**
   * False means the string key was never added; true means it probably was.
   *
   * @throws RuntimeException if this is not a {@link KeyType#STRING} filter
   */
  boolean mightContainString(String key);

  /**
   * False means the long key was never added; true means it probably was.
   *
   * @throws RuntimeException if this is not a {@link KeyType#LONG} filter
   */
  boolean mightContainLong(long key);

  /**
   * Looks up {@code keys[from, from + count)}, the answer for {@code keys[from + i]} into {@code
   * results[i]}.
   *
   * @throws IndexOutOfBoundsException if the range is outside {@code keys} or {@code results} is
   *     shorter than {@code count}
   */
  void mightContainStrings(String[] keys, int from, int count, boolean[] results);

  /** {@link #mightContainStrings} for long keys. */
  void mightContainLongs(long[] keys, int from, int count, boolean[] results);

  /** The key type this filter was built for. */
  KeyType keyType();

  /** The layout of the bits. */
  FilterFormat format();

  /** Number of bits (always a multiple of 64). */
  long numBits();

  /** k, the number of bits set per key. */
  int numHashFunctions();
}
