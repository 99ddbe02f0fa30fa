package io.bloomoperator.snapshot;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * A read-only split-block Bloom filter laid out exactly as Apache Parquet specifies it, so readers
 * of Parquet Bloom filters in other languages can read its bit array.
 *
 * <p>The layout: {@code z} blocks of eight 32-bit little-endian words. A key's XXH64 hash (seed 0;
 * of the 8 little-endian bytes of a long, of the UTF-8 bytes of a string) picks block {@code ((hash
 * >>> 32) * z) >>> 32}; its low 32 bits, multiplied by eight fixed odd salts, pick one bit in each
 * word ({@code (key * salt[i]) >>> 27}). A lookup therefore touches one block: one cache line,
 * where Guava's layout touches up to k. The serial form ({@link #toByteArray()}) is the bit array
 * alone, exactly Parquet's bitset; the number of blocks is its length / 32.
 *
 * <p>Differences from Parquet's own writers: any number of blocks (not only powers of two; the
 * block index formula is the same) and up to {@link SplitBlockSizing#MAX_BLOCKS} of them (Parquet
 * stops at 128 MiB).
 *
 * <p>Thread-safe: immutable once built.
 */
public final class SplitBlockBits {

  /** The eight salts of the Parquet specification. */
  private static final int[] SALT = {
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31
  };

  private static final int S0 = SALT[0];
  private static final int S1 = SALT[1];
  private static final int S2 = SALT[2];
  private static final int S3 = SALT[3];
  private static final int S4 = SALT[4];
  private static final int S5 = SALT[5];
  private static final int S6 = SALT[6];
  private static final int S7 = SALT[7];

  private static final VarHandle WORDS = MethodHandles.arrayElementVarHandle(long[].class);

  /** Keys hashed before their probes in a batch; 64 hashes are 512 bytes, in L1. */
  private static final int CHUNK = 64;

  /** The hashes of a batch's chunk in flight: one array per thread, holding no filter. */
  private static final ThreadLocal<long[]> HASHES =
      ThreadLocal.withInitial(() -> new long[CHUNK + 1]); // + 1: see probeAll

  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  private final KeyType keyType;
  private final long numBlocks;

  /** Four longs per block; word 2i of the block is the low half of long i (little-endian). */
  private final long[] words;

  private SplitBlockBits(KeyType keyType, long[] words) {
    this.keyType = keyType;
    this.words = words;
    this.numBlocks = words.length / 4;
  }

  /** A read-only view of {@code words} (four per block), which the caller no longer changes. */
  static SplitBlockBits view(KeyType keyType, long[] words) {
    return new SplitBlockBits(keyType, words);
  }

  /**
   * Sets the bits of a key's hash in {@code words} (four per block, {@code numBlocks} blocks).
   *
   * @return whether any bit changed
   */
  static boolean put(long[] words, long numBlocks, long hash) {
    int base = blockBase(hash, numBlocks);
    int key = (int) hash;
    long m0 = pair(key, S0, S1);
    long m1 = pair(key, S2, S3);
    long m2 = pair(key, S4, S5);
    long m3 = pair(key, S6, S7);
    long w0 = words[base];
    long w1 = words[base + 1];
    long w2 = words[base + 2];
    long w3 = words[base + 3];
    words[base] = w0 | m0;
    words[base + 1] = w1 | m1;
    words[base + 2] = w2 | m2;
    words[base + 3] = w3 | m3;
    return ((w0 & m0) ^ m0 | (w1 & m1) ^ m1 | (w2 & m2) ^ m2 | (w3 & m3) ^ m3) != 0;
  }

  /** A builder for an empty filter of {@code sizing.numBlocks()} blocks. */
  public static Builder builder(KeyType keyType, SplitBlockSizing sizing) {
    return builder(keyType, sizing.numBlocks());
  }

  /** A builder for an empty filter of {@code numBlocks} blocks. */
  public static Builder builder(KeyType keyType, long numBlocks) {
    Objects.requireNonNull(keyType, "keyType");
    if (numBlocks < 1 || numBlocks > SplitBlockSizing.MAX_BLOCKS) {
      throw new IllegalArgumentException(
          "numBlocks must be in [1, " + SplitBlockSizing.MAX_BLOCKS + "], was " + numBlocks);
    }
    return new Builder(keyType, new long[(int) numBlocks * 4]);
  }

  /**
   * Reads a bit array in the serial form of {@link #toByteArray()} (Parquet's bitset).
   *
   * @throws IllegalArgumentException if its length is not a positive multiple of 32 bytes
   */
  public static SplitBlockBits fromByteArray(KeyType keyType, byte[] bitset) {
    Objects.requireNonNull(keyType, "keyType");
    if (bitset.length == 0 || bitset.length % SplitBlockSizing.BYTES_PER_BLOCK != 0) {
      throw new IllegalArgumentException(
          "a split-block bit array holds whole 32-byte blocks, was " + bitset.length + " bytes");
    }
    long[] words = new long[bitset.length / 8];
    for (int i = 0; i < words.length; i++) {
      words[i] = (long) LONG_LE.get(bitset, i * 8);
    }
    return new SplitBlockBits(keyType, words);
  }

  /** The hash of a string key, as Parquet hashes a UTF-8 BYTE_ARRAY value. */
  public static long hashString(String key) {
    return Xxh64.hashString(key);
  }

  /**
   * The hash of a string key given as its UTF-8 encoding {@code utf8[offset, offset + length)}: the
   * same as {@link #hashString} of the decoded text.
   */
  public static long hashUtf8(byte[] utf8, int offset, int length) {
    return Xxh64.hashBytes(utf8, offset, length);
  }

  /**
   * The hash of a string key given as its UTF-8 encoding in {@code utf8[offset, offset + length)},
   * absolute indexes: the same as {@link #hashUtf8(byte[], int, int)} of those bytes; the buffer's
   * position, limit and byte order are neither used nor changed.
   *
   * @throws IndexOutOfBoundsException if the range is outside the buffer's capacity
   */
  public static long hashUtf8(ByteBuffer utf8, int offset, int length) {
    return Xxh64.hashBuffer(utf8, offset, length);
  }

  /**
   * The hash of a string key held in any char sequence: the same as {@link #hashString} of {@code
   * key.toString()}. An ASCII sequence is hashed from its chars without allocating; any other is
   * copied to a String and encoded first.
   */
  public static long hashChars(CharSequence key) {
    return Xxh64.hashChars(key);
  }

  /** The hash of a long key, as Parquet hashes an INT64 value. */
  public static long hashLong(long key) {
    return Xxh64.hashLong(key);
  }

  /** False if {@code key} was definitely never added; true if it might have been. */
  public boolean mightContainString(String key) {
    requireType(KeyType.STRING);
    return mightContainHash(Xxh64.hashString(key));
  }

  /** False if {@code key} was definitely never added; true if it might have been. */
  public boolean mightContainLong(long key) {
    requireType(KeyType.LONG);
    return mightContainHash(Xxh64.hashLong(key));
  }

  /** Probes with a hash from {@link #hashString} or {@link #hashLong}. */
  public boolean mightContainHash(long hash) {
    int base = blockBase(hash, numBlocks);
    int key = (int) hash;
    // Branch-free: the eight bit tests of one block combine into one comparison.
    long m0 = pair(key, S0, S1);
    long m1 = pair(key, S2, S3);
    long m2 = pair(key, S4, S5);
    long m3 = pair(key, S6, S7);
    long[] w = words;
    return ((w[base] & m0) ^ m0
            | (w[base + 1] & m1) ^ m1
            | (w[base + 2] & m2) ^ m2
            | (w[base + 3] & m3) ^ m3)
        == 0;
  }

  /**
   * Looks up {@code keys[from, from + count)}, the answer for {@code keys[from + i]} into {@code
   * results[i]}: hashes up to {@value #CHUNK} keys, then probes them all, so the probes' cache
   * misses overlap (the probe loop is short enough for the CPU to have many in flight; hashing
   * between probes would fill its instruction window while the first miss is still waiting). Keeps
   * a {@value #CHUNK}-long scratch array per thread for the hashes, created at the thread's first
   * batch; allocates nothing afterwards.
   */
  public void mightContainLongs(long[] keys, int from, int count, boolean[] results) {
    requireType(KeyType.LONG);
    Objects.checkFromIndexSize(from, count, keys.length);
    Objects.checkFromIndexSize(0, count, results.length);
    long[] hashes = HASHES.get();
    for (int done = 0; done < count; done += CHUNK) {
      int m = Math.min(CHUNK, count - done);
      for (int j = 0, k = from + done; j < m; j++, k++) {
        hashes[j] = Xxh64.hashLong(keys[k]);
      }
      probeAll(hashes, m, results, done);
    }
  }

  /** {@link #mightContainLongs} for string keys. */
  public void mightContainStrings(String[] keys, int from, int count, boolean[] results) {
    requireType(KeyType.STRING);
    Objects.checkFromIndexSize(from, count, keys.length);
    Objects.checkFromIndexSize(0, count, results.length);
    long[] hashes = HASHES.get();
    for (int done = 0; done < count; done += CHUNK) {
      int m = Math.min(CHUNK, count - done);
      for (int j = 0, k = from + done; j < m; j++, k++) {
        hashes[j] = Xxh64.hashString(keys[k]);
      }
      probeAll(hashes, m, results, done);
    }
  }

  /**
   * False if the string key whose UTF-8 encoding is {@code utf8[offset, offset + length)} was
   * definitely never added; true if it might have been. Hashes the bytes as they are (no copy).
   */
  public boolean mightContainUtf8(byte[] utf8, int offset, int length) {
    requireType(KeyType.STRING);
    return mightContainHash(Xxh64.hashBytes(utf8, offset, length));
  }

  /**
   * {@link #mightContainStrings} for keys given as UTF-8 byte ranges of {@code data}: key {@code i}
   * is {@code data[offsets[from + i], offsets[from + i] + lengths[from + i])}. Every range is
   * checked before any answer is written.
   */
  public void mightContainUtf8s(
      byte[] data, int[] offsets, int[] lengths, int from, int count, boolean[] results) {
    requireType(KeyType.STRING);
    checkUtf8Ranges(data, offsets, lengths, from, count, results);
    long[] hashes = HASHES.get();
    for (int done = 0; done < count; done += CHUNK) {
      int m = Math.min(CHUNK, count - done);
      for (int j = 0, k = from + done; j < m; j++, k++) {
        hashes[j] = Xxh64.hashBytes(data, offsets[k], lengths[k]);
      }
      probeAll(hashes, m, results, done);
    }
  }

  /**
   * Checks a batch of byte-range keys before any answer is written, so a bad range never leaves
   * {@code results} half filled.
   */
  static void checkUtf8Ranges(
      byte[] data, int[] offsets, int[] lengths, int from, int count, boolean[] results) {
    Objects.checkFromIndexSize(from, count, offsets.length);
    Objects.checkFromIndexSize(from, count, lengths.length);
    Objects.checkFromIndexSize(0, count, results.length);
    int size = data.length;
    for (int i = from, end = from + count; i < end; i++) {
      Objects.checkFromIndexSize(offsets[i], lengths[i], size);
    }
  }

  /**
   * The probes of {@code hashes[0, m)} into {@code results[r, r + m)}, after all the hashes, in two
   * passes. The first only loads one word of each key's block: a loop of a few instructions per
   * key, so the CPU has as many of those misses in flight as it can track (a full probe is ~40
   * instructions, which would fill its instruction window after a few keys). The second probes the
   * blocks, by then in the cache. Java has no prefetch instruction; this load is one.
   */
  private void probeAll(long[] hashes, int m, boolean[] results, int r) {
    final long[] w = words;
    final long blocks = numBlocks;
    long touched = 0;
    for (int j = 0; j < m; j++) {
      touched += w[blockBase(hashes[j], blocks)];
    }
    // Stored where the JIT cannot prove it unused, so the loads above are not removed.
    hashes[CHUNK] = touched;
    for (int j = 0; j < m; j++) {
      results[r + j] = mightContainHash(hashes[j]);
    }
  }

  public KeyType keyType() {
    return keyType;
  }

  public long numBlocks() {
    return numBlocks;
  }

  /** The size of the serial form in bytes. */
  public long numBytes() {
    return numBlocks * SplitBlockSizing.BYTES_PER_BLOCK;
  }

  /** The number of bits set. */
  public long bitCount() {
    long count = 0;
    for (long word : words) {
      count += Long.bitCount(word);
    }
    return count;
  }

  /** The serial form: the bit array, 32-bit words little-endian (Parquet's bitset). */
  public byte[] toByteArray() {
    byte[] out = new byte[Math.toIntExact(numBytes())];
    for (int i = 0; i < words.length; i++) {
      LONG_LE.set(out, i * 8, words[i]);
    }
    return out;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SplitBlockBits other
        && keyType == other.keyType
        && Arrays.equals(words, other.words);
  }

  @Override
  public int hashCode() {
    return 31 * keyType.hashCode() + Arrays.hashCode(words);
  }

  @Override
  public String toString() {
    return "SplitBlockBits[" + keyType + ", " + numBlocks + " blocks]";
  }

  /**
   * The block a key's hash (from {@link #hashString}, {@link #hashUtf8} or {@link #hashLong}) sets
   * its bits in, among {@code numBlocks}: Parquet's {@code ((hash >>> 32) * z) >>> 32}. It depends
   * on the top 32 bits of the hash only and grows with them, so keys can be routed by block to
   * whoever owns a contiguous range of blocks before any bit is set.
   */
  public static int blockOf(long hash, long numBlocks) {
    return blockBase(hash, numBlocks) >>> 2;
  }

  /** The index of the block's first long: Parquet's {@code ((hash >>> 32) * z) >>> 32}, times 4. */
  static int blockBase(long hash, long numBlocks) {
    // Both factors are below 2^32, so the 64-bit product is exact.
    return (int) (((hash >>> 32) * numBlocks) >>> 32) << 2;
  }

  /**
   * Whether a block's four longs {@code w0..w3} hold all eight bits of the key {@code (int) hash}:
   * the probe of {@link #mightContainHash}, for callers that read the block from elsewhere (a
   * memory-mapped file).
   */
  static boolean blockHolds(int key, long w0, long w1, long w2, long w3) {
    long m0 = pair(key, S0, S1);
    long m1 = pair(key, S2, S3);
    long m2 = pair(key, S4, S5);
    long m3 = pair(key, S6, S7);
    return ((w0 & m0) ^ m0 | (w1 & m1) ^ m1 | (w2 & m2) ^ m2 | (w3 & m3) ^ m3) == 0;
  }

  /** The bits two salts pick in one long: word 2i in the low half, word 2i + 1 in the high half. */
  static long pair(int key, int lowSalt, int highSalt) {
    return (1L << ((key * lowSalt) >>> 27)) | (1L << (((key * highSalt) >>> 27) + 32));
  }

  private void requireType(KeyType expected) {
    requireType(keyType, expected);
  }

  private static void requireType(KeyType keyType, KeyType expected) {
    if (keyType != expected) {
      throw new IllegalArgumentException(
          "this filter holds " + keyType + " keys, not " + expected + " keys");
    }
  }

  /** Adds keys to a filter under construction; not thread-safe. */
  public static final class Builder {

    private final KeyType keyType;
    private final long numBlocks;
    private long[] words;

    private Builder(KeyType keyType, long[] words) {
      this.keyType = keyType;
      this.words = words;
      this.numBlocks = words.length / 4;
    }

    /** Adds a string key. */
    public void putString(String key) {
      requireType(keyType, KeyType.STRING);
      putHash(Xxh64.hashString(key));
    }

    /** Adds a long key. */
    public void putLong(long key) {
      requireType(keyType, KeyType.LONG);
      putHash(Xxh64.hashLong(key));
    }

    /** Adds a key by its hash from {@link #hashString} or {@link #hashLong}. */
    public void putHash(long hash) {
      if (words == null) {
        throw new IllegalStateException("already built");
      }
      put(words, numBlocks, hash);
    }

    /**
     * A view of this builder that any number of threads may add keys through at once, until {@link
     * #build()}: each of a key's four words is updated with an atomic OR, so the result is bit for
     * bit that of adding the keys one by one, in any order. The caller makes every thread's puts
     * happen-before {@link #build()}.
     */
    public KeyInserter concurrent() {
      if (words == null) {
        throw new IllegalStateException("already built");
      }
      return concurrent(keyType, words, numBlocks);
    }

    /**
     * An inserter that any number of threads may use at once on the split-block words {@code w}
     * (atomic ORs): also how {@link BloomFilterBits.Builder#concurrent()} fills the split-block
     * layout.
     */
    static KeyInserter concurrent(KeyType keyType, long[] w, long blocks) {
      return new KeyInserter() {
        @Override
        public boolean putString(String key) {
          requireType(keyType, KeyType.STRING);
          return putHashAtomically(w, blocks, Xxh64.hashString(key));
        }

        @Override
        public boolean putUtf8(byte[] utf8, int offset, int length) {
          requireType(keyType, KeyType.STRING);
          return putHashAtomically(w, blocks, Xxh64.hashBytes(utf8, offset, length));
        }

        @Override
        public boolean putLong(long key) {
          requireType(keyType, KeyType.LONG);
          return putHashAtomically(w, blocks, Xxh64.hashLong(key));
        }
      };
    }

    private static boolean putHashAtomically(long[] w, long numBlocks, long hash) {
      int base = blockBase(hash, numBlocks);
      int key = (int) hash;
      return orAtomically(w, base, pair(key, S0, S1))
          | orAtomically(w, base + 1, pair(key, S2, S3))
          | orAtomically(w, base + 2, pair(key, S4, S5))
          | orAtomically(w, base + 3, pair(key, S6, S7));
    }

    /** ORs {@code mask} into {@code w[i]}; true if that changed a bit. */
    private static boolean orAtomically(long[] w, int i, long mask) {
      // A set bit stays set, so bits seen set need no atomic update.
      return (w[i] & mask) != mask && ((long) WORDS.getAndBitwiseOr(w, i, mask) & mask) != mask;
    }

    /**
     * The filter; the builder cannot be used afterwards (the words are handed over, not copied).
     */
    public SplitBlockBits build() {
      if (words == null) {
        throw new IllegalStateException("already built");
      }
      SplitBlockBits bits = new SplitBlockBits(keyType, words);
      words = null;
      return bits;
    }
  }
}
