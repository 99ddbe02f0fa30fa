package io.bloomoperator.source;

/** The UTF-8 length of text, counted without encoding it. */
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
}
