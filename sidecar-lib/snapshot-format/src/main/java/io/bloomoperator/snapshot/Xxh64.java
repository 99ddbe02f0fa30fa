package io.bloomoperator.snapshot;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * XXH64 with seed 0, the hash Apache Parquet's split-block Bloom filter specifies: of a long key's
 * 8 little-endian bytes, of a string key's UTF-8 bytes.
 *
 * <p>Nothing is allocated per key for longs and ASCII strings: ASCII strings are hashed straight
 * from their chars (their UTF-8 bytes are the chars); any other string is encoded with {@code
 * String.getBytes(UTF_8)} first (unpaired surrogates become '?', as in every Java writer).
 */
final class Xxh64 {

  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;
  private static final long P4 = 0x85EBCA77C2B2AE63L;
  private static final long P5 = 0x27D4EB2F165667C5L;

  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT_LE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle BUFFER_LONG_LE =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle BUFFER_INT_LE =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  /** "A char was not ASCII": never a real lane, since ASCII bytes never set bit 63. */
  private static final long NOT_ASCII = -1L;

  private Xxh64() {}

  /** The hash of a long key: its 8 bytes, little-endian (what Parquet hashes for INT64). */
  static long hashLong(long value) {
    long h = P5 + 8;
    h ^= round(0, value);
    h = Long.rotateLeft(h, 27) * P1 + P4;
    return avalanche(h);
  }

  /** The hash of {@code bytes[offset, offset + length)}. */
  static long hashBytes(byte[] bytes, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, bytes.length);
    int i = offset;
    int end = offset + length;
    long h;
    if (length >= 32) {
      long v1 = P1 + P2;
      long v2 = P2;
      long v3 = 0;
      long v4 = -P1;
      for (; end - i >= 32; i += 32) {
        v1 = round(v1, (long) LONG_LE.get(bytes, i));
        v2 = round(v2, (long) LONG_LE.get(bytes, i + 8));
        v3 = round(v3, (long) LONG_LE.get(bytes, i + 16));
        v4 = round(v4, (long) LONG_LE.get(bytes, i + 24));
      }
      h = converge(v1, v2, v3, v4);
    } else {
      h = P5;
    }
    h += length;
    for (; end - i >= 8; i += 8) {
      h ^= round(0, (long) LONG_LE.get(bytes, i));
      h = Long.rotateLeft(h, 27) * P1 + P4;
    }
    if (end - i >= 4) {
      h ^= ((int) INT_LE.get(bytes, i) & 0xFFFFFFFFL) * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      i += 4;
    }
    for (; i < end; i++) {
      h ^= (bytes[i] & 0xFFL) * P5;
      h = Long.rotateLeft(h, 11) * P1;
    }
    return avalanche(h);
  }

  /** The hash of a string's UTF-8 bytes. */
  static long hashString(String s) {
    int length = s.length();
    int i = 0;
    long h;
    if (length >= 32) {
      long v1 = P1 + P2;
      long v2 = P2;
      long v3 = 0;
      long v4 = -P1;
      for (; length - i >= 32; i += 32) {
        long a = ascii8(s, i);
        long b = ascii8(s, i + 8);
        long c = ascii8(s, i + 16);
        long d = ascii8(s, i + 24);
        if ((a | b | c | d) < 0) {
          return hashNonAscii(s);
        }
        v1 = round(v1, a);
        v2 = round(v2, b);
        v3 = round(v3, c);
        v4 = round(v4, d);
      }
      h = converge(v1, v2, v3, v4);
    } else {
      h = P5;
    }
    h += length;
    for (; length - i >= 8; i += 8) {
      long lane = ascii8(s, i);
      if (lane < 0) {
        return hashNonAscii(s);
      }
      h ^= round(0, lane);
      h = Long.rotateLeft(h, 27) * P1 + P4;
    }
    if (length - i >= 4) {
      long lane = ascii4(s, i);
      if (lane < 0) {
        return hashNonAscii(s);
      }
      h ^= lane * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      i += 4;
    }
    for (; i < length; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) {
        return hashNonAscii(s);
      }
      h ^= c * P5;
      h = Long.rotateLeft(h, 11) * P1;
    }
    return avalanche(h);
  }

  /**
   * The hash of a char sequence's UTF-8 bytes: equal to {@link #hashString} of {@code s.toString()}
   * for every sequence. ASCII sequences are read char by char, without a copy; any other is copied
   * to a String and encoded (as {@link #hashString} does for non-ASCII strings).
   */
  static long hashChars(CharSequence s) {
    if (s instanceof String string) {
      return hashString(string);
    }
    // hashString's loop over CharSequence.charAt, kept apart so that the String path's charAt
    // calls stay monomorphic: a shared loop would see every CharSequence class the program uses
    // and stop inlining them, slowing down the common String lookup.
    int length = s.length();
    int i = 0;
    long h;
    if (length >= 32) {
      long v1 = P1 + P2;
      long v2 = P2;
      long v3 = 0;
      long v4 = -P1;
      for (; length - i >= 32; i += 32) {
        long a = ascii8(s, i);
        long b = ascii8(s, i + 8);
        long c = ascii8(s, i + 16);
        long d = ascii8(s, i + 24);
        if ((a | b | c | d) < 0) {
          return hashString(s.toString());
        }
        v1 = round(v1, a);
        v2 = round(v2, b);
        v3 = round(v3, c);
        v4 = round(v4, d);
      }
      h = converge(v1, v2, v3, v4);
    } else {
      h = P5;
    }
    h += length;
    for (; length - i >= 8; i += 8) {
      long lane = ascii8(s, i);
      if (lane < 0) {
        return hashString(s.toString());
      }
      h ^= round(0, lane);
      h = Long.rotateLeft(h, 27) * P1 + P4;
    }
    if (length - i >= 4) {
      long lane = ascii4(s, i);
      if (lane < 0) {
        return hashString(s.toString());
      }
      h ^= lane * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      i += 4;
    }
    for (; i < length; i++) {
      char c = s.charAt(i);
      if (c >= 0x80) {
        return hashString(s.toString());
      }
      h ^= c * P5;
      h = Long.rotateLeft(h, 11) * P1;
    }
    return avalanche(h);
  }

  /**
   * The hash of the bytes {@code buffer[offset, offset + length)} (absolute indexes: the buffer's
   * position, limit and byte order are neither used nor changed). A heap buffer with an accessible
   * array is hashed from its array; any other (direct, read-only) through absolute reads.
   */
  static long hashBuffer(ByteBuffer buffer, int offset, int length) {
    Objects.checkFromIndexSize(offset, length, buffer.capacity());
    if (buffer.hasArray()) {
      return hashBytes(buffer.array(), buffer.arrayOffset() + offset, length);
    }
    // hashBytes over absolute ByteBuffer reads, read little-endian whatever the buffer's order.
    int i = offset;
    int end = offset + length;
    long h;
    if (length >= 32) {
      long v1 = P1 + P2;
      long v2 = P2;
      long v3 = 0;
      long v4 = -P1;
      for (; end - i >= 32; i += 32) {
        v1 = round(v1, (long) BUFFER_LONG_LE.get(buffer, i));
        v2 = round(v2, (long) BUFFER_LONG_LE.get(buffer, i + 8));
        v3 = round(v3, (long) BUFFER_LONG_LE.get(buffer, i + 16));
        v4 = round(v4, (long) BUFFER_LONG_LE.get(buffer, i + 24));
      }
      h = converge(v1, v2, v3, v4);
    } else {
      h = P5;
    }
    h += length;
    for (; end - i >= 8; i += 8) {
      h ^= round(0, (long) BUFFER_LONG_LE.get(buffer, i));
      h = Long.rotateLeft(h, 27) * P1 + P4;
    }
    if (end - i >= 4) {
      h ^= ((int) BUFFER_INT_LE.get(buffer, i) & 0xFFFFFFFFL) * P1;
      h = Long.rotateLeft(h, 23) * P2 + P3;
      i += 4;
    }
    for (; i < end; i++) {
      h ^= (buffer.get(i) & 0xFFL) * P5;
      h = Long.rotateLeft(h, 11) * P1;
    }
    return avalanche(h);
  }

  private static long hashNonAscii(String s) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    return hashBytes(utf8, 0, utf8.length);
  }

  /** Eight ASCII chars from {@code from} as little-endian bytes, or {@link #NOT_ASCII}. */
  private static long ascii8(String s, int from) {
    // Independent loads and shifts combined in a tree, not a chain: the CPU runs them in parallel.
    long c0 = s.charAt(from);
    long c1 = s.charAt(from + 1);
    long c2 = s.charAt(from + 2);
    long c3 = s.charAt(from + 3);
    long c4 = s.charAt(from + 4);
    long c5 = s.charAt(from + 5);
    long c6 = s.charAt(from + 6);
    long c7 = s.charAt(from + 7);
    if ((((c0 | c1) | (c2 | c3)) | ((c4 | c5) | (c6 | c7))) >= 0x80) {
      return NOT_ASCII;
    }
    return ((c0 | c1 << 8) | (c2 << 16 | c3 << 24))
        | ((c4 << 32 | c5 << 40) | (c6 << 48 | c7 << 56));
  }

  /** {@link #ascii8(String, int)} for any char sequence. */
  private static long ascii8(CharSequence s, int from) {
    long c0 = s.charAt(from);
    long c1 = s.charAt(from + 1);
    long c2 = s.charAt(from + 2);
    long c3 = s.charAt(from + 3);
    long c4 = s.charAt(from + 4);
    long c5 = s.charAt(from + 5);
    long c6 = s.charAt(from + 6);
    long c7 = s.charAt(from + 7);
    if ((((c0 | c1) | (c2 | c3)) | ((c4 | c5) | (c6 | c7))) >= 0x80) {
      return NOT_ASCII;
    }
    return ((c0 | c1 << 8) | (c2 << 16 | c3 << 24))
        | ((c4 << 32 | c5 << 40) | (c6 << 48 | c7 << 56));
  }

  /** {@link #ascii4(String, int)} for any char sequence. */
  private static long ascii4(CharSequence s, int from) {
    long c0 = s.charAt(from);
    long c1 = s.charAt(from + 1);
    long c2 = s.charAt(from + 2);
    long c3 = s.charAt(from + 3);
    if (((c0 | c1) | (c2 | c3)) >= 0x80) {
      return NOT_ASCII;
    }
    return (c0 | c1 << 8) | (c2 << 16 | c3 << 24);
  }

  /** Four ASCII chars from {@code from} as little-endian bytes, or {@link #NOT_ASCII}. */
  private static long ascii4(String s, int from) {
    long c0 = s.charAt(from);
    long c1 = s.charAt(from + 1);
    long c2 = s.charAt(from + 2);
    long c3 = s.charAt(from + 3);
    if (((c0 | c1) | (c2 | c3)) >= 0x80) {
      return NOT_ASCII;
    }
    return (c0 | c1 << 8) | (c2 << 16 | c3 << 24);
  }

  private static long round(long accumulator, long lane) {
    return Long.rotateLeft(accumulator + lane * P2, 31) * P1;
  }

  private static long converge(long v1, long v2, long v3, long v4) {
    long h =
        Long.rotateLeft(v1, 1)
            + Long.rotateLeft(v2, 7)
            + Long.rotateLeft(v3, 12)
            + Long.rotateLeft(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    return merge(h, v4);
  }

  private static long merge(long h, long v) {
    return (h ^ round(0, v)) * P1 + P4;
  }

  private static long avalanche(long h) {
    h ^= h >>> 33;
    h *= P2;
    h ^= h >>> 29;
    h *= P3;
    return h ^ (h >>> 32);
  }
}
