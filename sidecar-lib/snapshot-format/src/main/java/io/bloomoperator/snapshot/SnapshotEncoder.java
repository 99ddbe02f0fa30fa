package io.bloomoperator.snapshot;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.List;

/**
 * Writes a filter's payload, cut into chunks: in Guava's {@code BloomFilter.writeTo} format, or for
 * a {@link FilterFormat#SPLIT_BLOCK} filter the bit array alone as Parquet stores it (32-bit
 * little-endian words, no header).
 *
 * <p>Payload layout (big-endian, as {@code DataOutputStream} writes it):
 *
 * <pre>
 *   byte   strategy ordinal = 1 (MURMUR128_MITZ_64)
 *   byte   numHashFunctions (unsigned)
 *   int    numLongs
 *   long[] numLongs words
 * </pre>
 *
 * <p>The payload is never materialised: one chunk-sized buffer is filled with bulk transfers from
 * the filter's words, handed to the consumer, and reused, so a 100 MB filter costs one chunk of
 * extra memory. Chunk boundaries need not fall on word boundaries (the header is 6 bytes, the chunk
 * size arbitrary).
 */
public final class SnapshotEncoder {

  /** Bytes before the first word: strategy byte, k byte, int word count. */
  public static final int HEADER_BYTES = 6;

  /** Guava's {@code BloomFilterStrategies.MURMUR128_MITZ_64.ordinal()}. */
  public static final int STRATEGY_MURMUR128_MITZ_64 = 1;

  private SnapshotEncoder() {}

  /** Receives each chunk as soon as it is full (the last one may be shorter). */
  @FunctionalInterface
  public interface ChunkConsumer {

    /**
     * @param index 0-based chunk index
     * @param data a buffer that is reused for the next chunk: copy what you need to keep
     * @param length number of valid bytes in {@code data}, 1..chunkSize
     * @param sha256Hex lower-case hex SHA-256 of {@code data[0, length)}
     */
    void accept(int index, byte[] data, int length, String sha256Hex) throws IOException;
  }

  /** Size and digest of one written chunk. */
  public record ChunkDigest(int index, int bytes, String sha256) {}

  /**
   * What {@link #encode} wrote.
   *
   * @param totalBytes payload size (== {@link #payloadSize})
   * @param sha256 lower-case hex SHA-256 of the whole payload
   * @param chunkCount number of chunks handed to the consumer
   * @param chunks per-chunk sizes and digests, in order
   */
  public record Result(long totalBytes, String sha256, int chunkCount, List<ChunkDigest> chunks) {
    public Result {
      chunks = List.copyOf(chunks);
    }
  }

  /** Serialized size of {@code bits}: the layout's header bytes plus 8 per word. */
  public static long payloadSize(BloomFilterBits bits) {
    return bits.format().headerBytes() + (long) bits.numLongs() * Long.BYTES;
  }

  /** How many chunks {@link #encode} will produce for this chunk size. */
  public static int chunkCount(BloomFilterBits bits, int chunkSize) {
    requirePositive(chunkSize);
    return Math.toIntExact((payloadSize(bits) + chunkSize - 1) / chunkSize);
  }

  /**
   * Serializes {@code bits} into consecutive chunks of {@code chunkSize} bytes (the last may be
   * shorter).
   *
   * @throws IOException whatever the consumer throws; encoding stops there
   */
  public static Result encode(BloomFilterBits bits, int chunkSize, ChunkConsumer consumer)
      throws IOException {
    requirePositive(chunkSize);
    ChunkWriter out = new ChunkWriter(chunkSize, consumer);
    if (bits.format() == FilterFormat.GUAVA) {
      out.putByte(STRATEGY_MURMUR128_MITZ_64);
      out.putByte(bits.numHashFunctions());
      out.putInt(bits.numLongs());
    }
    out.putWords(bits.words(), wordOrder(bits.format()));
    out.flush();
    return new Result(out.totalBytes(), out.totalSha256(), out.chunks().size(), out.chunks());
  }

  /**
   * SHA-256 of the payload of {@code bits}, without writing it anywhere: one digest pass over a 64
   * KiB buffer (what a reader checks after applying deltas, and what a writer compares).
   */
  public static String sha256(BloomFilterBits bits) {
    MessageDigest digest = Sha256.newDigest();
    ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    if (bits.format() == FilterFormat.GUAVA) {
      buffer.put((byte) STRATEGY_MURMUR128_MITZ_64).put((byte) bits.numHashFunctions());
      buffer.putInt(bits.numLongs());
    }
    buffer.order(wordOrder(bits.format()));
    long[] words = bits.words();
    int next = 0;
    while (next < words.length) {
      int count = Math.min(buffer.remaining() / Long.BYTES, words.length - next);
      buffer.asLongBuffer().put(words, next, count);
      buffer.position(buffer.position() + count * Long.BYTES);
      next += count;
      digest.update(buffer.array(), 0, buffer.position());
      buffer.clear();
    }
    if (buffer.position() > 0) {
      digest.update(buffer.array(), 0, buffer.position());
    }
    return Sha256.hex(digest);
  }

  /** How a layout's payload stores its words. */
  static ByteOrder wordOrder(FilterFormat format) {
    return format == FilterFormat.GUAVA ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
  }

  /**
   * Writes the whole payload to {@code stream}: exactly as Guava's {@code writeTo} would, or
   * Parquet's bitset for a split-block filter.
   */
  public static Result writeTo(BloomFilterBits bits, OutputStream stream) throws IOException {
    return encode(bits, 64 * 1024, (index, data, length, sha) -> stream.write(data, 0, length));
  }

  /** The whole payload in one array: for tests, tools and small filters. */
  public static byte[] toByteArray(BloomFilterBits bits) {
    ByteArrayOutputStream out =
        new ByteArrayOutputStream((int) Math.min(payloadSize(bits), 1 << 30));
    try {
      writeTo(bits, out);
    } catch (IOException e) {
      throw new UncheckedIOException("ByteArrayOutputStream does not throw", e);
    }
    return out.toByteArray();
  }

  static void requirePositive(int chunkSize) {
    if (chunkSize < 1) {
      throw new IllegalArgumentException("chunkSize must be >= 1, got " + chunkSize);
    }
  }
}
