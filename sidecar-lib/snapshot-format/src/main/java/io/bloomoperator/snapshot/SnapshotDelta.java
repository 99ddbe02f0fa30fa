package io.bloomoperator.snapshot;

import java.io.IOException;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * The difference between two payloads of the same geometry, as the bit positions that differ (the
 * XOR of the two bit arrays), encoded for sparse differences: a refresh that adds and removes a few
 * thousand keys flips a few bits per key, so a delta costs about two bytes per flipped bit instead
 * of the whole bit array.
 *
 * <p>Encoding ({@code guava-bloomfilter-chain-v1}, big-endian like the payload):
 *
 * <pre>
 *   byte   encoding = 1 (sorted bit positions, gap-coded)
 *   byte   numHashFunctions   (must match the manifest)
 *   int    numLongs           (must match the manifest)
 *   long   n, the number of changed bits
 *   n unsigned LEB128 varints: the first changed bit position, then for each next one
 *          (position - previous position - 1)
 * </pre>
 *
 * <p>The same encoding serves both layouts ({@link FilterFormat}); the manifest's format id says
 * which one the bits belong to, and a delta never crosses layouts. Bit {@code p} is bit {@code p
 * mod 64} of word {@code p / 64}: in the Guava layout as in the payload, in the split-block layout
 * bit {@code p mod 32} of Parquet's 32-bit word {@code p / 32}. Positions are strictly increasing
 * and below numBits; a reader refuses anything else, and bytes after the last varint, before any
 * bit of the result is served.
 */
public final class SnapshotDelta {

  /** Bytes before the first varint. */
  public static final int HEADER_BYTES = 14;

  /** The only encoding: gap-coded sorted bit positions. */
  public static final int ENCODING_BIT_POSITIONS = 1;

  private SnapshotDelta() {}

  /**
   * What {@link #encode} wrote.
   *
   * @param totalBytes size of the encoding
   * @param changedBits how many bits differ
   * @param chunks per-chunk sizes and digests, in order
   */
  public record Result(
      long totalBytes, long changedBits, List<SnapshotEncoder.ChunkDigest> chunks) {
    public Result {
      chunks = List.copyOf(chunks);
    }
  }

  /**
   * The size {@link #encode} would write for the delta from {@code from} to {@code to}, or -1 as
   * soon as it exceeds {@code maxBytes}: one pass over both arrays, nothing allocated, so a writer
   * decides between a delta and a whole snapshot before it creates a chunk.
   *
   * @throws IllegalArgumentException if the two filters differ in key type or geometry
   */
  public static long encodedSize(BloomFilterBits from, BloomFilterBits to, long maxBytes) {
    requireSameGeometry(from, to);
    long[] a = from.words();
    long[] b = to.words();
    long size = HEADER_BYTES;
    long previous = -1;
    for (int i = 0; i < a.length; i++) {
      long diff = a[i] ^ b[i];
      while (diff != 0) {
        long position = ((long) i << 6) + Long.numberOfTrailingZeros(diff);
        size += varLongSize(position - previous - 1);
        previous = position;
        diff &= diff - 1;
      }
      if (size > maxBytes) {
        return -1;
      }
    }
    return size;
  }

  /**
   * Writes the delta from {@code from} to {@code to} into chunks of {@code chunkSize} bytes.
   *
   * @throws IOException whatever the consumer throws; encoding stops there
   * @throws IllegalArgumentException if the two filters differ in key type or geometry
   */
  public static Result encode(
      BloomFilterBits from,
      BloomFilterBits to,
      int chunkSize,
      SnapshotEncoder.ChunkConsumer consumer)
      throws IOException {
    requireSameGeometry(from, to);
    long[] a = from.words();
    long[] b = to.words();
    long changed = 0;
    for (int i = 0; i < a.length; i++) {
      changed += Long.bitCount(a[i] ^ b[i]);
    }
    ChunkWriter out = new ChunkWriter(chunkSize, consumer);
    out.putByte(ENCODING_BIT_POSITIONS);
    out.putByte(to.numHashFunctions());
    out.putInt(to.numLongs());
    out.putLong(changed);
    long previous = -1;
    for (int i = 0; i < a.length; i++) {
      long diff = a[i] ^ b[i];
      while (diff != 0) {
        long position = ((long) i << 6) + Long.numberOfTrailingZeros(diff);
        out.putVarLong(position - previous - 1);
        previous = position;
        diff &= diff - 1;
      }
    }
    out.flush();
    return new Result(out.totalBytes(), changed, out.chunks());
  }

  /**
   * Applies {@code delta}'s chunks, each checked against its size and SHA-256 before a byte of it
   * is used, to {@code words} in place. The caller owns {@code words} (a copy, never a served
   * filter) and checks the digest of the result.
   *
   * @throws SnapshotVerificationException if a chunk is missing, has the wrong size or digest, or
   *     the encoding is malformed or does not fit the geometry
   * @throws IOException whatever {@code source} throws
   */
  static void apply(
      long[] words, int numHashFunctions, Manifest.Delta delta, SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    apply(
        position -> words[(int) (position >>> 6)] ^= 1L << position,
        words.length,
        numHashFunctions,
        delta,
        source);
  }

  /**
   * As {@link #apply(long[], int, Manifest.Delta, SnapshotDecoder.ChunkSource)}, flipping each bit
   * position (bit {@code p mod 64} of word {@code p / 64}) through {@code flip}: for bits that are
   * not in a {@code long[]} (a payload file).
   */
  static void apply(
      LongConsumer flip,
      int numLongs,
      int numHashFunctions,
      Manifest.Delta delta,
      SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    Parser parser = new Parser(flip, numLongs, numHashFunctions, delta);
    List<Manifest.ChunkRef> refs = delta.chunks();
    for (int i = 0; i < refs.size(); i++) {
      Manifest.ChunkRef ref = refs.get(i);
      byte[] data = source.load(i, ref);
      String where = "delta v" + delta.version() + " chunk " + i + " ('" + ref.name() + "')";
      ChunkCheck.verify(ref, data, where, i);
      try {
        parser.accept(data);
      } catch (SnapshotVerificationException e) {
        throw new SnapshotVerificationException(where + ": " + e.getMessage(), i);
      }
    }
    parser.finish();
  }

  static int varLongSize(long value) {
    return Math.max(1, (Long.SIZE - Long.numberOfLeadingZeros(value) + 6) / 7);
  }

  private static void requireSameGeometry(BloomFilterBits from, BloomFilterBits to) {
    if (from.keyType() != to.keyType()
        || from.format() != to.format()
        || from.numLongs() != to.numLongs()
        || from.numHashFunctions() != to.numHashFunctions()) {
      throw new IllegalArgumentException(
          "a delta needs two filters of the same key type and geometry, got "
              + from
              + " and "
              + to);
    }
  }

  /** Streams delta bytes, in any split, flipping bits as positions complete. */
  private static final class Parser {
    private final LongConsumer flip;
    private final int numLongs;
    private final int numHashFunctions;
    private final Manifest.Delta delta;
    private final long numBits;

    private final byte[] header = new byte[HEADER_BYTES];
    private int headerFilled;
    private long remaining; // positions still to read, from the header
    private long previous = -1;
    private long value; // varint being assembled
    private int shift;

    Parser(LongConsumer flip, int numLongs, int numHashFunctions, Manifest.Delta delta) {
      this.flip = flip;
      this.numLongs = numLongs;
      this.numHashFunctions = numHashFunctions;
      this.delta = delta;
      this.numBits = (long) numLongs * Long.SIZE;
    }

    void accept(byte[] data) throws SnapshotVerificationException {
      int pos = 0;
      while (headerFilled < HEADER_BYTES && pos < data.length) {
        header[headerFilled++] = data[pos++];
        if (headerFilled == HEADER_BYTES) {
          checkHeader();
        }
      }
      for (; pos < data.length; pos++) {
        if (remaining == 0) {
          throw new SnapshotVerificationException(
              "bytes after the last of its " + delta.changedBits() + " bit positions");
        }
        int b = data[pos] & 0xFF;
        if (shift == 63 && (b & 0x7E) != 0) {
          throw new SnapshotVerificationException("varint overflows 64 bits");
        }
        value |= (long) (b & 0x7F) << shift;
        if ((b & 0x80) != 0) {
          shift += 7;
          if (shift > 63) {
            throw new SnapshotVerificationException("varint longer than 10 bytes");
          }
          continue;
        }
        // Positions left after the previous one: previous + 1 .. numBits - 1. Plain signed
        // arithmetic (previous < numBits <= 2^37, so no overflow); a varint with the top bit set
        // is negative as a long and refused like any gap too large. An unsigned comparison
        // against numBits - previous - 2 wrapped to "anything goes" after the last bit.
        long room = numBits - previous - 1;
        if (value < 0 || value >= room) {
          throw new SnapshotVerificationException(
              "bit position beyond the filter's " + numBits + " bits");
        }
        long position = previous + 1 + value;
        flip.accept(position);
        previous = position;
        remaining--;
        value = 0;
        shift = 0;
      }
    }

    void finish() throws SnapshotVerificationException {
      if (headerFilled < HEADER_BYTES) {
        throw new SnapshotVerificationException(
            "delta v" + delta.version() + " ended inside its " + HEADER_BYTES + "-byte header");
      }
      if (remaining != 0 || shift != 0) {
        throw new SnapshotVerificationException(
            "delta v"
                + delta.version()
                + " ended with "
                + remaining
                + " of its "
                + delta.changedBits()
                + " bit positions missing");
      }
    }

    private void checkHeader() throws SnapshotVerificationException {
      int encoding = header[0] & 0xFF;
      int k = header[1] & 0xFF;
      int numLongs =
          ((header[2] & 0xFF) << 24)
              | ((header[3] & 0xFF) << 16)
              | ((header[4] & 0xFF) << 8)
              | (header[5] & 0xFF);
      long count = 0;
      for (int i = 6; i < HEADER_BYTES; i++) {
        count = (count << 8) | (header[i] & 0xFF);
      }
      if (encoding != ENCODING_BIT_POSITIONS) {
        throw new SnapshotVerificationException(
            "delta encoding is " + encoding + ", expected " + ENCODING_BIT_POSITIONS);
      }
      if (k != numHashFunctions || numLongs != this.numLongs) {
        throw new SnapshotVerificationException(
            "delta header says k="
                + k
                + ", "
                + numLongs
                + " words; the manifest says k="
                + numHashFunctions
                + ", "
                + this.numLongs
                + " words");
      }
      if (count != delta.changedBits()) {
        throw new SnapshotVerificationException(
            "delta header says "
                + count
                + " changed bits, the manifest says "
                + delta.changedBits());
      }
      remaining = count;
    }
  }
}
