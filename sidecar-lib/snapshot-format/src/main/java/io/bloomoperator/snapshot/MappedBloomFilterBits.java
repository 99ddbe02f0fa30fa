package io.bloomoperator.snapshot;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.util.Objects;

/**
 * A read-only Bloom filter served from a memory-mapped payload file, answering exactly as {@link
 * BloomFilterBits} answers for the same payload, in both layouts: the Guava layout (a 6-byte
 * header, then big-endian 64-bit words) and the split-block layout (Parquet's little-endian 32-bit
 * words, read as little-endian longs). Its bits live in the page cache, not on the Java heap: the
 * kernel may evict pages it needs and reads them back on the next lookup that touches them.
 *
 * <p>Java 17 maps at most 2 GiB per buffer, so the words are mapped in segments of at most 1 GiB,
 * each a whole number of words, so no word straddles two segments.
 *
 * <p>Created only by {@link SnapshotFiles}, after the file's digest matched its manifest. The
 * mapping stays valid after the file is renamed or deleted; the JVM unmaps it when this object is
 * garbage collected (Java 17 has no safe explicit unmap: a lookup still reading an old version
 * would crash the JVM), and the kernel frees the file's blocks and page cache then.
 *
 * <p>Immutable as far as this process is concerned; any number of threads may look up at once. It
 * cannot stop someone with write access to the file from changing it: the reader writes it
 * owner-only into its own directory, and re-verifies it before using it again (a delta update
 * copies it while checking its digest; a restart checks it before mapping).
 */
public final class MappedBloomFilterBits implements BloomLookup {

  /** The largest segment mapped: 1 GiB, a whole number of words and far below Java 17's 2 GiB. */
  static final int MAX_SEGMENT_BYTES = 1 << 30;

  private final KeyType keyType;
  private final FilterFormat format;
  private final int numHashFunctions;
  private final int numLongs;
  private final long numBits;
  private final long numBlocks;
  private final long reciprocal;
  private final ByteBuffer[] segments;
  private final int wordShift; // words per segment = 1 << wordShift
  private final long wordMask;
  private final Hash128Consumer testBits = this::testBits;

  private MappedBloomFilterBits(
      KeyType keyType,
      FilterFormat format,
      int numHashFunctions,
      int numLongs,
      ByteBuffer[] segments,
      int segmentBytes) {
    this.keyType = keyType;
    this.format = format;
    this.numHashFunctions = numHashFunctions;
    this.numLongs = numLongs;
    this.numBits = (long) numLongs * Long.SIZE;
    this.numBlocks = numLongs / 4;
    this.reciprocal = Long.divideUnsigned(-1L, numBits);
    this.segments = segments;
    this.wordShift = Integer.numberOfTrailingZeros(segmentBytes / Long.BYTES);
    this.wordMask = (1L << wordShift) - 1;
  }

  /**
   * Maps the words of a payload file read-only. Checks nothing but the file's size: {@link
   * SnapshotFiles} verifies header and digest.
   *
   * @param segmentBytes a power of two, at least 8 and at most {@link #MAX_SEGMENT_BYTES} (smaller
   *     only in tests, to cross segment boundaries with small files)
   */
  static MappedBloomFilterBits map(
      FileChannel file,
      KeyType keyType,
      FilterFormat format,
      int numHashFunctions,
      int numLongs,
      int segmentBytes)
      throws IOException {
    Objects.requireNonNull(keyType, "keyType");
    if (Integer.bitCount(segmentBytes) != 1
        || segmentBytes < Long.BYTES
        || segmentBytes > MAX_SEGMENT_BYTES) {
      throw new IllegalArgumentException("segmentBytes must be a power of two in 8..2^30");
    }
    long wordBytes = (long) numLongs * Long.BYTES;
    long header = format.headerBytes();
    if (file.size() != header + wordBytes) {
      throw new IOException("file is " + file.size() + " bytes, expected " + (header + wordBytes));
    }
    int count = (int) ((wordBytes + segmentBytes - 1) / segmentBytes);
    ByteBuffer[] segments = new ByteBuffer[count];
    for (int s = 0; s < count; s++) {
      long start = (long) s * segmentBytes;
      long size = Math.min(segmentBytes, wordBytes - start);
      segments[s] =
          file.map(FileChannel.MapMode.READ_ONLY, header + start, size)
              .order(SnapshotEncoder.wordOrder(format));
    }
    return new MappedBloomFilterBits(
        keyType, format, numHashFunctions, numLongs, segments, segmentBytes);
  }

  /** Feeds the mapped words, in file order, to {@code digest} (after the caller's header). */
  void digestWords(MessageDigest digest) {
    for (ByteBuffer segment : segments) {
      digest.update(segment.duplicate().clear());
    }
  }

  private long word(long index) {
    return segments[(int) (index >>> wordShift)].getLong((int) ((index & wordMask) << 3));
  }

  @Override
  public boolean mightContainString(String key) {
    requireType(KeyType.STRING);
    return format == FilterFormat.SPLIT_BLOCK
        ? splitBlockHas(Xxh64.hashString(key))
        : Murmur3x64.hashString(key, testBits);
  }

  @Override
  public boolean mightContainLong(long key) {
    requireType(KeyType.LONG);
    return format == FilterFormat.SPLIT_BLOCK
        ? splitBlockHas(Xxh64.hashLong(key))
        : Murmur3x64.hashLong(key, testBits);
  }

  @Override
  public boolean mightContainUtf8(byte[] utf8, int offset, int length) {
    requireType(KeyType.STRING);
    return format == FilterFormat.SPLIT_BLOCK
        ? splitBlockHas(Xxh64.hashBytes(utf8, offset, length))
        : Murmur3x64.hashBytes(utf8, offset, length, testBits);
  }

  @Override
  public boolean mightContainUtf8(ByteBuffer utf8) {
    requireType(KeyType.STRING);
    int offset = utf8.position();
    int length = utf8.limit() - offset;
    return format == FilterFormat.SPLIT_BLOCK
        ? splitBlockHas(Xxh64.hashBuffer(utf8, offset, length))
        : Murmur3x64.hashBuffer(utf8, offset, length, testBits);
  }

  @Override
  public boolean mightContainChars(CharSequence key) {
    requireType(KeyType.STRING);
    return format == FilterFormat.SPLIT_BLOCK
        ? splitBlockHas(Xxh64.hashChars(key))
        : Murmur3x64.hashChars(key, testBits);
  }

  /** One key after the other, as {@link #mightContainStrings}. */
  @Override
  public void mightContainUtf8s(
      byte[] data, int[] offsets, int[] lengths, int from, int count, boolean[] results) {
    requireType(KeyType.STRING);
    SplitBlockBits.checkUtf8Ranges(data, offsets, lengths, from, count, results);
    for (int i = 0; i < count; i++) {
      results[i] = mightContainUtf8(data, offsets[from + i], lengths[from + i]);
    }
  }

  /** One key after the other: a page fault, not a cache miss, is what a cold mapping costs. */
  @Override
  public void mightContainStrings(String[] keys, int from, int count, boolean[] results) {
    Objects.checkFromIndexSize(from, count, keys.length);
    Objects.checkFromIndexSize(0, count, results.length);
    for (int i = 0; i < count; i++) {
      results[i] = mightContainString(keys[from + i]);
    }
  }

  @Override
  public void mightContainLongs(long[] keys, int from, int count, boolean[] results) {
    Objects.checkFromIndexSize(from, count, keys.length);
    Objects.checkFromIndexSize(0, count, results.length);
    for (int i = 0; i < count; i++) {
      results[i] = mightContainLong(keys[from + i]);
    }
  }

  @Override
  public KeyType keyType() {
    return keyType;
  }

  @Override
  public FilterFormat format() {
    return format;
  }

  @Override
  public long numBits() {
    return numBits;
  }

  @Override
  public int numHashFunctions() {
    return numHashFunctions;
  }

  /** Number of 64-bit words. */
  public int numLongs() {
    return numLongs;
  }

  @Override
  public String toString() {
    return "MappedBloomFilterBits{keyType="
        + keyType
        + ", format="
        + format.crdName()
        + ", numBits="
        + numBits
        + ", segments="
        + segments.length
        + "}";
  }

  private boolean splitBlockHas(long hash) {
    long base = SplitBlockBits.blockBase(hash, numBlocks);
    return SplitBlockBits.blockHolds(
        (int) hash, word(base), word(base + 1), word(base + 2), word(base + 3));
  }

  /** Probes loaded before any of them is tested, after the first {@link #FIRST_GROUP}. */
  private static final int GROUP = 8;

  /** The first probes loaded together: as many as {@link BloomFilterBits#testBits} loads first. */
  private static final int FIRST_GROUP = 2;

  /**
   * Guava's probe on the mapped words, with {@link BloomFilterBits#testBits}'s answer. The words of
   * a group of probes are all loaded before any is tested (their misses are combined without a
   * branch), so the CPU has the whole group's page-cache misses in flight at once: each probe of a
   * mapped word costs a bounds check and a byte swap besides the load, and a chain of tests, one
   * per probe, kept those misses apart. The first group is two probes, as on the heap, so a key
   * that is absent still stops after at most two loads, mostly; a present key (k = 7) pays two
   * rounds of misses instead of up to seven.
   */
  private boolean testBits(long h1, long h2) {
    long combined = h1;
    long missing = 0;
    int i = 0;
    int groupEnd = Math.min(FIRST_GROUP, numHashFunctions);
    while (true) {
      for (; i < groupEnd; i++) {
        long index = BloomFilterBits.remainder(combined & Long.MAX_VALUE, numBits, reciprocal);
        missing |= ~word(index >>> 6) & (1L << index);
        combined += h2;
      }
      if (missing != 0) {
        return false;
      }
      if (i == numHashFunctions) {
        return true;
      }
      groupEnd = Math.min(numHashFunctions, i + GROUP);
    }
  }

  private void requireType(KeyType expected) {
    if (keyType != expected) {
      throw new IllegalStateException(
          "this filter holds "
              + keyType.crdName()
              + " keys; a "
              + expected.crdName()
              + " key cannot be looked up");
    }
  }
}
