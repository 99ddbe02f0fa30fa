package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A manifest claiming a 16 GiB filter with consistent numbers: numBits at the format's maximum,
 * totalBytes = 6 + numBits / 8, chunk sizes adding up, canonical chunk names. Its chunk 0 is real
 * (digest matching) and its header announces the 2^31-1 words, so a reader that believes the
 * manifest allocates 16 GiB right after reading chunk 0.
 */
final class HostileManifest {

  /** Chunk 0: the header announcing Integer.MAX_VALUE words, then zeros. */
  static final byte[] CHUNK0 = chunk0();

  private HostileManifest() {}

  static Manifest claiming16GiB(String filter, long version) {
    long numBits = BloomFilterSizing.MAX_BITS;
    long totalBytes = 6 + numBits / 8;
    List<Manifest.ChunkRef> chunks = new ArrayList<>();
    chunks.add(
        new Manifest.ChunkRef(
            SnapshotNames.chunkName(filter, version, 0), CHUNK0.length, sha256(CHUNK0)));
    long left = totalBytes - CHUNK0.length;
    for (int i = 1; left > 0; i++) {
      int bytes = (int) Math.min(Integer.MAX_VALUE, left);
      chunks.add(
          new Manifest.ChunkRef(
              SnapshotNames.chunkName(filter, version, i), bytes, "0".repeat(64)));
      left -= bytes;
    }
    return new Manifest(
        Manifest.FORMAT,
        version,
        filter,
        KeyType.STRING,
        numBits,
        3,
        1_000,
        0.01,
        totalBytes,
        "0".repeat(64),
        "2026-11-30T00:00:00Z",
        chunks);
  }

  private static byte[] chunk0() {
    byte[] chunk = new byte[1024];
    ByteBuffer.wrap(chunk).put((byte) 1).put((byte) 3).putInt(Integer.MAX_VALUE);
    return chunk;
  }

  private static String sha256(byte[] data) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
