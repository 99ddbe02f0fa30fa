package io.bloomoperator.snapshot;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Builds and checks payload files for readers that serve a filter from a memory-mapped file ({@link
 * MappedBloomFilterBits}) instead of a {@code long[]}: the payload is streamed to disk one verified
 * chunk at a time (so the heap holds one chunk, never the filter), deltas are applied in the file,
 * and a file is mapped for serving only after its SHA-256 matched the manifest.
 *
 * <p>The file is the payload byte for byte as the manifest's digest covers it (Guava: header and
 * big-endian words; split-block: Parquet's bitset), so the same file is the reader's local
 * snapshot. Errors writing or reading the file are {@link LocalDiskException}s; the caller picks
 * the file's name and permissions, writes it under a temporary name and renames it when complete.
 */
public final class SnapshotFiles {

  private static final int COPY_BUFFER_BYTES = 1 << 20;

  private SnapshotFiles() {}

  /**
   * Writes {@code manifest}'s base payload into the empty {@code out}, chunk by chunk: each chunk's
   * size and SHA-256 are checked before a byte of it is written, the header against the manifest's
   * geometry, and finally the SHA-256 of everything written against the base's digest.
   *
   * @throws SnapshotVerificationException if a chunk is missing or any check fails
   * @throws LocalDiskException if {@code out} cannot be written
   * @throws IOException whatever {@code source} throws
   */
  public static void writeBase(
      Manifest manifest, SnapshotDecoder.ChunkSource source, FileChannel out)
      throws SnapshotVerificationException, IOException {
    manifest.validate();
    byte[] header = expectedHeader(manifest);
    MessageDigest chunkDigest = Sha256.newDigest();
    MessageDigest total = Sha256.newDigest();
    List<Manifest.ChunkRef> refs = manifest.chunks();
    long written = 0;
    long expected = manifest.filterFormat().payloadBytes(manifest.numBits());
    for (int i = 0; i < refs.size(); i++) {
      Manifest.ChunkRef ref = refs.get(i);
      byte[] data = source.load(i, ref);
      String where = "chunk " + i + " ('" + ref.name() + "')";
      ChunkCheck.requireSize(ref, data, where, i);
      // As in the heap decoder: the payload's digest runs on another core while this one checks
      // the chunk's own digest and writes it (SHA-256 twice is most of a load); joined before the
      // next chunk, so at most one chunk is in flight. Bytes reach the file only after their
      // chunk's digest matched; the file is used only after the payload's digest matched too.
      CompletableFuture<Void> totalDone =
          CompletableFuture.runAsync(() -> total.update(data), SnapshotDecoder.DIGESTS);
      try {
        ChunkCheck.requireDigest(ref, data, where, i, chunkDigest);
        for (int b = 0; b < data.length && written + b < header.length; b++) {
          if (data[b] != header[(int) written + b]) {
            throw new SnapshotVerificationException(
                where + ": the payload header does not match the manifest's geometry", i);
          }
        }
        if (written + data.length > expected) {
          throw new SnapshotVerificationException(
              "payload is longer than the " + expected + " bytes the manifest's geometry needs", i);
        }
        writeFully(out, ByteBuffer.wrap(data), written);
      } finally {
        totalDone.join();
      }
      written += data.length;
    }
    if (written != expected) {
      throw new SnapshotVerificationException(
          "payload is " + written + " bytes, the manifest's geometry needs " + expected);
    }
    String actual = Sha256.hex(total);
    if (!actual.equalsIgnoreCase(manifest.baseSha256())) {
      throw new SnapshotVerificationException(
          "payload sha256 mismatch: manifest says "
              + manifest.baseSha256()
              + ", computed "
              + actual
              + " over all "
              + refs.size()
              + " chunks");
    }
  }

  /**
   * Copies the first {@code size} bytes of {@code from} (a payload file verified earlier) into the
   * empty {@code out}, computing their SHA-256 on the way.
   *
   * @return whether the copy's digest is {@code sha256}: false if the file changed since it was
   *     verified (the copy must then not be used)
   * @throws LocalDiskException if either file cannot be read or written
   */
  public static boolean copyIfIntact(FileChannel from, long size, String sha256, FileChannel out)
      throws LocalDiskException {
    MessageDigest digest = Sha256.newDigest();
    ByteBuffer buffer = ByteBuffer.allocate(COPY_BUFFER_BYTES);
    long position = 0;
    try {
      if (from.size() != size) {
        return false;
      }
      while (position < size) {
        buffer.clear().limit((int) Math.min(buffer.capacity(), size - position));
        int n = from.read(buffer, position);
        if (n < 0) {
          return false;
        }
        buffer.flip();
        digest.update(buffer.duplicate());
        writeFully(out, buffer, position);
        position += n;
      }
    } catch (LocalDiskException e) {
      throw e;
    } catch (IOException e) {
      throw new LocalDiskException("could not read the served payload file: " + e, e);
    }
    return Sha256.hex(digest).equalsIgnoreCase(sha256);
  }

  /**
   * Applies {@code deltas} (of {@code manifest}'s chain, in order) to the payload in {@code file}
   * in place, each delta chunk verified before it is used, and flushes the file. The caller checks
   * the result's digest ({@link #mapVerified}).
   *
   * @throws SnapshotVerificationException if a delta chunk is missing, fails its checks or does not
   *     fit the geometry
   * @throws LocalDiskException if the file cannot be mapped or written
   * @throws IOException whatever {@code source} throws
   */
  public static void applyDeltas(
      Manifest manifest,
      List<Manifest.Delta> deltas,
      FileChannel file,
      SnapshotDecoder.ChunkSource source)
      throws SnapshotVerificationException, IOException {
    if (deltas.isEmpty()) {
      return;
    }
    int header = manifest.filterFormat().headerBytes();
    long wordBytes = (long) manifest.numLongs() * Long.BYTES;
    // Bit b of a word is one byte of it: which one depends on the word order of the layout.
    boolean bigEndian = SnapshotEncoder.wordOrder(manifest.filterFormat()) == ByteOrder.BIG_ENDIAN;
    MappedByteBuffer[] segments;
    try {
      if (file.size() != header + wordBytes) {
        throw new LocalDiskException(
            "payload file is " + file.size() + " bytes, expected " + (header + wordBytes), null);
      }
      int count =
          (int)
              ((wordBytes + MappedBloomFilterBits.MAX_SEGMENT_BYTES - 1)
                  / MappedBloomFilterBits.MAX_SEGMENT_BYTES);
      segments = new MappedByteBuffer[count];
      for (int s = 0; s < count; s++) {
        long start = (long) s * MappedBloomFilterBits.MAX_SEGMENT_BYTES;
        segments[s] =
            file.map(
                FileChannel.MapMode.READ_WRITE,
                header + start,
                Math.min(MappedBloomFilterBits.MAX_SEGMENT_BYTES, wordBytes - start));
      }
    } catch (LocalDiskException e) {
      throw e;
    } catch (IOException e) {
      throw new LocalDiskException("could not map the payload file for writing: " + e, e);
    }
    int shift = Integer.numberOfTrailingZeros(MappedBloomFilterBits.MAX_SEGMENT_BYTES);
    long mask = MappedBloomFilterBits.MAX_SEGMENT_BYTES - 1L;
    for (Manifest.Delta delta : deltas) {
      SnapshotDelta.apply(
          position -> {
            int bit = (int) (position & 63);
            long offset = ((position >>> 6) << 3) + (bigEndian ? 7 - (bit >>> 3) : bit >>> 3);
            MappedByteBuffer segment = segments[(int) (offset >>> shift)];
            int index = (int) (offset & mask);
            segment.put(index, (byte) (segment.get(index) ^ (1 << (bit & 7))));
          },
          manifest.numLongs(),
          manifest.numHashFunctions(),
          delta,
          source);
    }
    try {
      for (MappedByteBuffer segment : segments) {
        segment.force();
      }
    } catch (RuntimeException e) {
      throw new LocalDiskException("could not write the payload file: " + e, e);
    }
  }

  /**
   * Maps the payload in {@code file} read-only and checks it against {@code manifest}: size and
   * header against the geometry, SHA-256 of the mapped bytes against {@code sha256} (the
   * manifest's, or a delta's). Only a file that passes is returned for serving.
   *
   * @throws SnapshotVerificationException if a check fails
   * @throws LocalDiskException if the file cannot be read or mapped
   */
  public static MappedBloomFilterBits mapVerified(
      Manifest manifest, FileChannel file, String sha256)
      throws SnapshotVerificationException, LocalDiskException {
    return mapVerified(manifest, file, sha256, MappedBloomFilterBits.MAX_SEGMENT_BYTES);
  }

  /**
   * Maps the payload {@link #writeBase} has just written into {@code file}, for an unchained
   * manifest: size and header are checked again, the digest is not computed a second time, as
   * {@code writeBase} checked it over exactly the bytes it wrote. Only for a file the caller
   * created itself, owner-only, and has not closed since.
   *
   * @throws SnapshotVerificationException if the manifest is chained, or size or header is off
   * @throws LocalDiskException if the file cannot be read or mapped
   */
  public static MappedBloomFilterBits mapWritten(Manifest manifest, FileChannel file)
      throws SnapshotVerificationException, LocalDiskException {
    if (manifest.chained()) {
      throw new SnapshotVerificationException(
          "a chained payload has deltas applied after writeBase: verify it with mapVerified");
    }
    return mapVerified(manifest, file, null, MappedBloomFilterBits.MAX_SEGMENT_BYTES);
  }

  /** With {@code sha256} null, only size and header are checked. */
  static MappedBloomFilterBits mapVerified(
      Manifest manifest, FileChannel file, String sha256, int segmentBytes)
      throws SnapshotVerificationException, LocalDiskException {
    manifest.validate();
    byte[] expectedHeader = expectedHeader(manifest);
    long expectedSize = manifest.filterFormat().payloadBytes(manifest.numBits());
    MappedBloomFilterBits mapped;
    byte[] header = new byte[expectedHeader.length];
    try {
      if (file.size() != expectedSize) {
        throw new SnapshotVerificationException(
            "payload file is " + file.size() + " bytes, the manifest says " + expectedSize);
      }
      ByteBuffer headerBuffer = ByteBuffer.wrap(header);
      while (headerBuffer.hasRemaining()) {
        if (file.read(headerBuffer, headerBuffer.position()) < 0) {
          throw new SnapshotVerificationException("payload file ended inside its header");
        }
      }
      mapped =
          MappedBloomFilterBits.map(
              file,
              manifest.keyType(),
              manifest.filterFormat(),
              manifest.numHashFunctions(),
              manifest.numLongs(),
              segmentBytes);
    } catch (IOException e) {
      throw new LocalDiskException("could not read or map the payload file: " + e, e);
    }
    if (!Arrays.equals(header, expectedHeader)) {
      throw new SnapshotVerificationException(
          "payload file header does not match the manifest's geometry");
    }
    if (sha256 == null) {
      return mapped;
    }
    MessageDigest digest = Sha256.newDigest();
    digest.update(header);
    mapped.digestWords(digest);
    String actual = Sha256.hex(digest);
    if (!actual.equalsIgnoreCase(sha256)) {
      throw new SnapshotVerificationException(
          "payload file sha256 mismatch: expected " + sha256 + ", computed " + actual);
    }
    return mapped;
  }

  /** The header the payload of a manifest's geometry starts with (none for split-block). */
  private static byte[] expectedHeader(Manifest manifest) {
    if (manifest.filterFormat().headerBytes() == 0) {
      return new byte[0];
    }
    return ByteBuffer.allocate(SnapshotEncoder.HEADER_BYTES)
        .put((byte) SnapshotEncoder.STRATEGY_MURMUR128_MITZ_64)
        .put((byte) manifest.numHashFunctions())
        .putInt(manifest.numLongs())
        .array();
  }

  private static void writeFully(FileChannel out, ByteBuffer data, long position)
      throws LocalDiskException {
    try {
      long at = position;
      while (data.hasRemaining()) {
        at += out.write(data, at);
      }
    } catch (IOException e) {
      throw new LocalDiskException("could not write the payload file: " + e, e);
    }
  }
}
