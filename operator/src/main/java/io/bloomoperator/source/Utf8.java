package io.bloomoperator.source;

/** UTF-8 facts about text and bytes, found without encoding or decoding. */
final class Utf8 {

  private Utf8() {}

  /**
   * The number of bytes {@code text} takes in UTF-8 (an unpaired surrogate counts as the 3 bytes of
   * its replacement character), or some number above {@code limit} as soon as it is clear that the
   * length is above it.
   */
  static long length(String text, long limit) {
    if ((long) text.length() > limit) {
      return text.length(); // every char takes at least one byte
    }
    long bytes = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
      if (bytes > limit) {
        return bytes;
      }
    }
    return bytes;
  }

  /**
   * Whether {@code b[from, to)} is well-formed UTF-8 (Unicode's table 3-7: no overlong forms, no
   * surrogates, nothing above U+10FFFF), i.e. exactly when decoding it replaces nothing, so its
   * {@code String}'s UTF-8 encoding is these bytes again.
   */
  static boolean isWellFormed(byte[] b, int from, int to) {
    int i = from;
    while (i < to) {
      int c = b[i];
      if (c >= 0) {
        i++;
        continue;
      }
      c &= 0xff;
      if (c < 0xc2) {
        return false; // a continuation byte, or the lead of an overlong 2-byte form
      }
      if (c < 0xe0) {
        if (i + 1 >= to || !continuation(b[i + 1])) {
          return false;
        }
        i += 2;
        continue;
      }
      if (c < 0xf0) {
        if (i + 2 >= to) {
          return false;
        }
        int c1 = b[i + 1] & 0xff;
        // E0 needs A0..BF (else overlong); ED needs 80..9F (else a surrogate).
        int low = c == 0xe0 ? 0xa0 : 0x80;
        int high = c == 0xed ? 0x9f : 0xbf;
        if (c1 < low || c1 > high || !continuation(b[i + 2])) {
          return false;
        }
        i += 3;
        continue;
      }
      if (c > 0xf4 || i + 3 >= to) {
        return false;
      }
      int c1 = b[i + 1] & 0xff;
      // F0 needs 90..BF (else overlong); F4 needs 80..8F (else above U+10FFFF).
      int low = c == 0xf0 ? 0x90 : 0x80;
      int high = c == 0xf4 ? 0x8f : 0xbf;
      if (c1 < low || c1 > high || !continuation(b[i + 2]) || !continuation(b[i + 3])) {
        return false;
      }
      i += 4;
    }
    return true;
  }

  private static boolean continuation(byte b) {
    return (b & 0xc0) == 0x80;
  }
}
