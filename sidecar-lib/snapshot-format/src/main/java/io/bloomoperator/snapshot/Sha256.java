package io.bloomoperator.snapshot;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * SHA-256 helpers; every Java runtime must provide SHA-256, so its absence is a bug, not an input.
 */
final class Sha256 {

  private static final HexFormat HEX = HexFormat.of();

  private Sha256() {}

  static MessageDigest newDigest() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by the Java SE specification", e);
    }
  }

  /** Lower-case hex of the digest; resets it. */
  static String hex(MessageDigest digest) {
    return HEX.formatHex(digest.digest());
  }

  static String hex(byte[] data, int offset, int length) {
    MessageDigest digest = newDigest();
    digest.update(data, offset, length);
    return hex(digest);
  }

  /** Whether {@code s} looks like a SHA-256 hex digest (64 hex digits, either case). */
  static boolean isHex64(String s) {
    if (s == null || s.length() != 64) {
      return false;
    }
    for (int i = 0; i < 64; i++) {
      char c = s.charAt(i);
      // Not Character.digit: that also accepts non-ASCII digits, which no hex encoder produces.
      boolean hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!hex) {
        return false;
      }
    }
    return true;
  }
}
