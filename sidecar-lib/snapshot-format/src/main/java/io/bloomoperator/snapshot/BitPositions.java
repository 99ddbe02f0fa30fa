package io.bloomoperator.snapshot;

import java.util.Objects;

/**
 * The bit positions a key sets in a filter of one geometry, numbered as {@link BloomFilterBits}
 * numbers its bits (bit {@code p} is word {@code p >>> 6}, mask {@code 1L << p}), in either layout;
 * and a filter with some of its bits cleared. For a writer that keeps something per bit beside the
 * filter (the operator's counting shadow for stream deletions, which counts how many keys set each
 * bit): it must find exactly the bits the builder sets, so the positions come from the same hashes
 * and the same index derivation as {@link BloomFilterBits.Builder}, in this package.
 *
 * <p>Added for counting deletions (issue 29); nothing existing changed: the wire format, the
 * builders and the lookups are as they were. An instance is immutable and may be shared by threads.
 */
public final class BitPositions {

  private final FilterFormat format;
  private final long numBits;
  private final int numHashFunctions;
  private final long numBlocks;
  private final long reciprocal;

  private BitPositions(FilterFormat format, long numBits, int numHashFunctions) {
    this.format = format;
    this.numBits = numBits;
    this.numHashFunctions = numHashFunctions;
    this.numBlocks = numBits / 256;
    this.reciprocal = Long.divideUnsigned(-1L, numBits);
  }

  /** The positions in filters of {@code bits}' layout and geometry. */
  public static BitPositions of(BloomFilterBits bits) {
    return new BitPositions(bits.format(), bits.numBits(), bits.numHashFunctions());
  }

  /**
   * The positions in filters of this layout and geometry (as {@link BloomFilterBits.Builder}
   * reports them).
   *
   * @throws IllegalArgumentException if the geometry is not one the layout has
   */
  public static BitPositions of(FilterFormat format, long numBits, int numHashFunctions) {
    Objects.requireNonNull(format, "format");
    if (numBits < 64 || numBits % 64 != 0 || numBits > BloomFilterSizing.MAX_BITS) {
      throw new IllegalArgumentException("not a filter's number of bits: " + numBits);
    }
    if (format == FilterFormat.SPLIT_BLOCK
        ? numBits % 256 != 0 || numHashFunctions != FilterFormat.SPLIT_BLOCK_BITS_PER_KEY
        : numHashFunctions < 1 || numHashFunctions > 255) {
      throw new IllegalArgumentException("not a " + format.crdName() + " geometry");
    }
    return new BitPositions(format, numBits, numHashFunctions);
  }

  /** How many positions a key has: k (some may repeat in the Guava layout). */
  public int perKey() {
    return numHashFunctions;
  }

  /** The filters' number of bits. */
  public long numBits() {
    return numBits;
  }

  /**
   * Writes the positions of a string key into {@code out[0, perKey())}.
   *
   * @throws IllegalArgumentException if {@code out} is shorter than {@link #perKey()}
   */
  public void ofString(String key, long[] out) {
    check(out);
    if (format == FilterFormat.SPLIT_BLOCK) {
      ofSplitBlockHash(Xxh64.hashString(key), out);
    } else {
      Murmur3x64.hashString(key, (h1, h2) -> guava(h1, h2, out));
    }
  }

  /** {@link #ofString} of the key whose (valid) UTF-8 encoding is {@code utf8[offset, +length)}. */
  public void ofUtf8(byte[] utf8, int offset, int length, long[] out) {
    check(out);
    if (format == FilterFormat.SPLIT_BLOCK) {
      ofSplitBlockHash(Xxh64.hashBytes(utf8, offset, length), out);
    } else {
      Murmur3x64.hashBytes(utf8, offset, length, (h1, h2) -> guava(h1, h2, out));
    }
  }

  /** Writes the positions of a long key into {@code out[0, perKey())}. */
  public void ofLong(long key, long[] out) {
    check(out);
    if (format == FilterFormat.SPLIT_BLOCK) {
      ofSplitBlockHash(Xxh64.hashLong(key), out);
    } else {
      Murmur3x64.hashLong(key, (h1, h2) -> guava(h1, h2, out));
    }
  }

  /**
   * A copy of {@code base} with the bits at {@code positions[0, count)} cleared; {@code base}
   * itself never changes (readers may be serving it).
   *
   * @throws IllegalArgumentException if a position is outside the filter
   */
  public static BloomFilterBits withCleared(BloomFilterBits base, long[] positions, int count) {
    Objects.checkFromIndexSize(0, count, positions.length);
    long[] words = base.words().clone();
    for (int i = 0; i < count; i++) {
      long p = positions[i];
      if (p < 0 || p >= base.numBits()) {
        throw new IllegalArgumentException("bit " + p + " is outside the filter");
      }
      words[(int) (p >>> 6)] &= ~(1L << p);
    }
    return BloomFilterBits.wrap(base.keyType(), base.format(), base.numHashFunctions(), words);
  }

  /** Guava's derivation, as {@link BloomFilterBits.Builder} sets the bits. */
  private boolean guava(long h1, long h2, long[] out) {
    long combined = h1;
    for (int i = 0; i < numHashFunctions; i++) {
      out[i] = BloomFilterBits.remainder(combined & Long.MAX_VALUE, numBits, reciprocal);
      combined += h2;
    }
    return true;
  }

  /**
   * The eight bits {@link SplitBlockBits#put} sets for {@code hash}, found by letting it set them
   * in a one-block scratch array (block 0 of 1) and offsetting them to the key's real block: the
   * very code the builder runs, so the two cannot drift apart.
   */
  private void ofSplitBlockHash(long hash, long[] out) {
    long[] scratch = new long[4];
    SplitBlockBits.put(scratch, 1, hash);
    long base = (long) SplitBlockBits.blockBase(hash, numBlocks) * Long.SIZE;
    int n = 0;
    for (int w = 0; w < 4; w++) {
      long bits = scratch[w];
      while (bits != 0) {
        out[n++] = base + (long) w * Long.SIZE + Long.numberOfTrailingZeros(bits);
        bits &= bits - 1;
      }
    }
    // Each long holds one bit of each of two salts, in different halves: always eight.
  }

  private void check(long[] out) {
    if (out.length < numHashFunctions) {
      throw new IllegalArgumentException("room for " + numHashFunctions + " positions needed");
    }
  }
}
