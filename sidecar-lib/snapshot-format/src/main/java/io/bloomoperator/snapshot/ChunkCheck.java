package io.bloomoperator.snapshot;

import java.security.MessageDigest;

/** The check every chunk passes before a byte of it is used: present, announced size, SHA-256. */
final class ChunkCheck {

  private ChunkCheck() {}

  static void verify(Manifest.ChunkRef ref, byte[] data, String where, int index)
      throws SnapshotVerificationException {
    verify(ref, data, where, index, Sha256.newDigest());
  }

  /** As above, reusing {@code digest} (left reset). */
  static void verify(
      Manifest.ChunkRef ref, byte[] data, String where, int index, MessageDigest digest)
      throws SnapshotVerificationException {
    requireSize(ref, data, where, index);
    requireDigest(ref, data, where, index, digest);
  }

  /** The chunk exists and has the announced size. */
  static void requireSize(Manifest.ChunkRef ref, byte[] data, String where, int index)
      throws SnapshotVerificationException {
    if (data == null) {
      throw new SnapshotVerificationException(where + " is missing", index);
    }
    if (data.length != ref.bytes()) {
      throw new SnapshotVerificationException(
          where + ": size mismatch: manifest says " + ref.bytes() + " bytes, got " + data.length,
          index);
    }
  }

  /** The chunk's SHA-256 is the announced one; {@code digest} is left reset. */
  static void requireDigest(
      Manifest.ChunkRef ref, byte[] data, String where, int index, MessageDigest digest)
      throws SnapshotVerificationException {
    digest.update(data);
    String actual = Sha256.hex(digest);
    if (!actual.equalsIgnoreCase(ref.sha256())) {
      throw new SnapshotVerificationException(
          where + ": sha256 mismatch: manifest says " + ref.sha256() + ", computed " + actual,
          index);
    }
  }
}
