package io.bloomoperator.snapshot;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * A chunk-sized buffer that hands itself to the consumer whenever it fills up, with each chunk's
 * digest and the digest of everything written: the one way snapshot bytes (whole payloads and
 * deltas alike) are cut into chunks.
 */
final class ChunkWriter {
  private final byte[] buffer;
  private final ByteBuffer view; // big-endian, as DataOutputStream writes
  private final SnapshotEncoder.ChunkConsumer consumer;
  private final MessageDigest chunkDigest = Sha256.newDigest();
  private final MessageDigest totalDigest = Sha256.newDigest();
  private final List<SnapshotEncoder.ChunkDigest> chunks = new ArrayList<>();
  private long totalBytes;

  ChunkWriter(int chunkSize, SnapshotEncoder.ChunkConsumer consumer) {
    SnapshotEncoder.requirePositive(chunkSize);
    this.buffer = new byte[chunkSize];
    this.view = ByteBuffer.wrap(buffer);
    this.consumer = consumer;
  }

  void putByte(int b) throws IOException {
    if (!view.hasRemaining()) {
      flush();
    }
    view.put((byte) b);
  }

  void putInt(int value) throws IOException {
    for (int shift = 24; shift >= 0; shift -= 8) {
      putByte(value >>> shift);
    }
  }

  void putLong(long value) throws IOException {
    for (int shift = 56; shift >= 0; shift -= 8) {
      putByte((int) (value >>> shift));
    }
  }

  /** An unsigned LEB128 varint: 7 bits per byte, low groups first, high bit = more follows. */
  void putVarLong(long value) throws IOException {
    long rest = value;
    while ((rest & ~0x7FL) != 0) {
      putByte((int) ((rest & 0x7F) | 0x80));
      rest >>>= 7;
    }
    putByte((int) rest);
  }

  /**
   * The words big-endian (Guava's payload) or little-endian (the split-block payload: Parquet's
   * 32-bit little-endian words, two per long with the first in the low half).
   */
  void putWords(long[] words, ByteOrder order) throws IOException {
    int next = 0;
    while (next < words.length) {
      if (!view.hasRemaining()) {
        flush();
      }
      int room = view.remaining();
      if (room >= Long.BYTES) {
        // Bulk: a LongBuffer view starting at the current position copies (and byte-swaps) whole
        // words in one intrinsic call instead of eight single-byte puts per word.
        int count = Math.min(room / Long.BYTES, words.length - next);
        view.order(order).asLongBuffer().put(words, next, count);
        view.order(ByteOrder.BIG_ENDIAN);
        view.position(view.position() + count * Long.BYTES);
        next += count;
      } else {
        // Fewer than 8 bytes left in this chunk: this word straddles the boundary.
        long word = words[next++];
        putLong(order == ByteOrder.BIG_ENDIAN ? word : Long.reverseBytes(word));
      }
    }
  }

  void flush() throws IOException {
    int length = view.position();
    if (length == 0) {
      return;
    }
    chunkDigest.update(buffer, 0, length);
    totalDigest.update(buffer, 0, length);
    String sha = Sha256.hex(chunkDigest);
    int index = chunks.size();
    consumer.accept(index, buffer, length, sha);
    chunks.add(new SnapshotEncoder.ChunkDigest(index, length, sha));
    totalBytes += length;
    view.clear();
  }

  long totalBytes() {
    return totalBytes;
  }

  /** Lower-case hex SHA-256 of everything flushed; call once, after the last flush. */
  String totalSha256() {
    return Sha256.hex(totalDigest);
  }

  List<SnapshotEncoder.ChunkDigest> chunks() {
    return chunks;
  }
}
