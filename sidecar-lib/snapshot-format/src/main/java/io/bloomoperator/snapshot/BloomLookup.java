package io.bloomoperator.snapshot;

import java.nio.ByteBuffer;

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

  /**
   * The answer of {@link #mightContainString} for the string whose UTF-8 encoding is {@code
   * utf8[offset, offset + length)}, computed from those bytes as they are: no decoding, no copy,
   * nothing allocated. For callers that hold keys as bytes (a request body, a network buffer). The
   * bytes must be valid UTF-8 for the answer to be that of the decoded text; other bytes get the
   * answer for exactly those bytes (as a Guava or Parquet filter hashing them would give).
   *
   * @throws RuntimeException if this is not a {@link KeyType#STRING} filter
   * @throws IndexOutOfBoundsException if the range is outside {@code utf8}
   */
  boolean mightContainUtf8(byte[] utf8, int offset, int length);

  /**
   * {@link #mightContainUtf8(byte[], int, int)} for the bytes of {@code utf8} from its position to
   * its limit, heap or direct, read-only or not. Reads them by absolute index: the buffer's
   * position, limit, mark and byte order are left as they were.
   *
   * @throws RuntimeException if this is not a {@link KeyType#STRING} filter
   */
  boolean mightContainUtf8(ByteBuffer utf8);

  /**
   * The answer of {@link #mightContainString} for {@code key.toString()}, for keys held in a {@link
   * CharSequence} such as a {@link StringBuilder} or a {@link java.nio.CharBuffer} reused by a
   * parser: an ASCII sequence is hashed from its chars with no copy and nothing allocated; any
   * other sequence is converted to a String first (one copy, then hashed as that String is).
   *
   * @throws RuntimeException if this is not a {@link KeyType#STRING} filter
   */
  boolean mightContainChars(CharSequence key);

  /**
   * The batch form of {@link #mightContainUtf8(byte[], int, int)}: key {@code i} (for {@code 0 <= i
   * < count}) is {@code data[offsets[from + i], offsets[from + i] + lengths[from + i])}, and its
   * answer goes into {@code results[i]}. Hashes a group of keys before probing any of them, so the
   * cache misses of their probes overlap. All ranges are checked before any answer is written.
   *
   * @throws RuntimeException if this is not a {@link KeyType#STRING} filter
   * @throws IndexOutOfBoundsException if {@code [from, from + count)} is outside {@code offsets} or
   *     {@code lengths}, a key's range is outside {@code data}, or {@code results} is shorter than
   *     {@code count}
   */
  void mightContainUtf8s(
      byte[] data, int[] offsets, int[] lengths, int from, int count, boolean[] results);

  /** The key type this filter was built for. */
  KeyType keyType();

  /** The layout of the bits. */
  FilterFormat format();

  /** Number of bits (always a multiple of 64). */
  long numBits();

  /** k, the number of bits set per key. */
  int numHashFunctions();
}
