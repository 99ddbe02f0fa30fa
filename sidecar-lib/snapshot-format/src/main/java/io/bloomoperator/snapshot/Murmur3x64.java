package io.bloomoperator.snapshot;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * murmur3_x64_128 with seed 0, bit-for-bit what Guava's {@code Hashing.murmur3_128()} computes for
 * {@code Funnels.stringFunnel(UTF_8)} and {@code Funnels.longFunnel()} keys.
 *
 * <p>The hot entry points ({@link #hashLong(long, Hash128Consumer)}, {@link #hashString(String,
 * Hash128Consumer)}) hand the result to a {@link Hash128Consumer} so nothing is allocated per key.
 * ASCII strings are hashed straight from their chars (their UTF-8 bytes are the chars); any other
 * string falls back to {@code String.getBytes(UTF_8)}, which is exactly what Guava's funnel hashes
 * (unpaired surrogates become '?').
 */
final class Murmur3x64 {

  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;

  /** Reads 8 bytes little-endian from a byte[] at any offset without assembling them by hand. */
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** The same little-endian reads from a ByteBuffer, whatever the buffer's own byte order. */
  private static final VarHandle BUFFER_LONG_LE =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * Marks "a char was not ASCII": impossible as a real block since ASCII bytes never set bit 63.
   */
  private static final long NOT_ASCII = -1L;

  private Murmur3x64() {}

  /** The 128-bit hash as two longs; mainly for tests and tools, the hot paths use consumers. */
  public record Hash128(long h1, long h2) {

    /** The 16 bytes Guava's {@code HashCode.asBytes()} returns for the same hash. */
    public byte[] toBytes() {
      byte[] out = new byte[16];
      LONG_LE.set(out, 0, h1);
      LONG_LE.set(out, 8, h2);
      return out;
    }
  }

  /** Hashes a long as {@code Funnels.longFunnel()} does (8 bytes, little-endian). */
  static boolean hashLong(long value, Hash128Consumer consumer) {
    // A single 8-byte tail: k1 = value, k2 = 0 (mixK2(0) == 0, so h2 stays 0 until finalisation).
    long h1 = mixK1(value);
    long h2 = 0;
    h1 ^= 8;
    h2 ^= 8;
    return finish(h1, h2, consumer);
  }

  /** Hashes {@code bytes[offset, offset + length)}. */
  static boolean hashBytes(byte[] bytes, int offset, int length, Hash128Consumer consumer) {
    java.util.Objects.checkFromIndexSize(offset, length, bytes.length);
    long h1 = 0;
    long h2 = 0;
    int i = offset;
    int end = offset + length;
    for (; end - i >= 16; i += 16) {
      long k1 = (long) LONG_LE.get(bytes, i);
      long k2 = (long) LONG_LE.get(bytes, i + 8);
      h1 = mixH1(h1, h2, k1);
      h2 = mixH2(h2, h1, k2);
    }
    int rest = end - i;
    if (rest > 0) {
      long k1 = rest >= 8 ? (long) LONG_LE.get(bytes, i) : tailBytesLE(bytes, i, rest);
      long k2 = rest > 8 ? tailBytesLE(bytes, i + 8, rest - 8) : 0;
      h1 ^= mixK1(k1);
      h2 ^= mixK2(k2);
    }
    h1 ^= length;
    h2 ^= length;
    return finish(h1, h2, consumer);
  }

  /** Hashes a string as {@code Funnels.stringFunnel(StandardCharsets.UTF_8)} does. */
  static boolean hashString(String s, Hash128Consumer consumer) {
    // ASCII fast path: the UTF-8 bytes are the chars, so read them directly instead of encoding.
    // Any non-ASCII block aborts to the exact (allocating) encoder; the work done so far is
    // discarded.
    final int len = s.length();
    long h1 = 0;
    long h2 = 0;
    int i = 0;
    for (; len - i >= 16; i += 16) {
      long k1 = asciiLE(s, i, 8);
      long k2 = asciiLE(s, i + 8, 8);
      if ((k1 | k2) < 0) {
        return hashNonAscii(s, consumer);
      }
      h1 = mixH1(h1, h2, k1);
      h2 = mixH2(h2, h1, k2);
    }
    int rest = len - i;
    if (rest > 0) {
      long k1 = asciiLE(s, i, Math.min(rest, 8));
      long k2 = rest > 8 ? asciiLE(s, i + 8, rest - 8) : 0;
      if ((k1 | k2) < 0) {
        return hashNonAscii(s, consumer);
      }
      h1 ^= mixK1(k1);
      h2 ^= mixK2(k2);
    }
    h1 ^= len;
    h2 ^= len;
    return finish(h1, h2, consumer);
  }

  /**
   * Hashes a char sequence exactly as {@link #hashString(String, Hash128Consumer)} hashes {@code
   * s.toString()}: ASCII sequences straight from their chars, without a copy; any other through a
   * String (as Guava's funnel encodes it).
   */
  static boolean hashChars(CharSequence s, Hash128Consumer consumer) {
    if (s instanceof String string) {
      return hashString(string, consumer);
    }
    // hashString's loop over CharSequence.charAt, kept apart so that the String path's charAt
    // calls stay monomorphic (see Xxh64.hashChars).
    final int len = s.length();
    long h1 = 0;
    long h2 = 0;
    int i = 0;
    for (; len - i >= 16; i += 16) {
      long k1 = asciiLE(s, i, 8);
      long k2 = asciiLE(s, i + 8, 8);
      if ((k1 | k2) < 0) {
        return hashNonAscii(s.toString(), consumer);
      }
      h1 = mixH1(h1, h2, k1);
      h2 = mixH2(h2, h1, k2);
    }
    int rest = len - i;
    if (rest > 0) {
      long k1 = asciiLE(s, i, Math.min(rest, 8));
      long k2 = rest > 8 ? asciiLE(s, i + 8, rest - 8) : 0;
      if ((k1 | k2) < 0) {
        return hashNonAscii(s.toString(), consumer);
      }
      h1 ^= mixK1(k1);
      h2 ^= mixK2(k2);
    }
    h1 ^= len;
    h2 ^= len;
    return finish(h1, h2, consumer);
  }

  /**
   * Hashes {@code buffer[offset, offset + length)} (absolute indexes: position, limit and byte
   * order are neither used nor changed), as {@link #hashBytes(byte[], int, int, Hash128Consumer)}
   * hashes the same bytes in an array.
   */
  static boolean hashBuffer(ByteBuffer buffer, int offset, int length, Hash128Consumer consumer) {
    java.util.Objects.checkFromIndexSize(offset, length, buffer.capacity());
    if (buffer.hasArray()) {
      return hashBytes(buffer.array(), buffer.arrayOffset() + offset, length, consumer);
    }
    long h1 = 0;
    long h2 = 0;
    int i = offset;
    int end = offset + length;
    for (; end - i >= 16; i += 16) {
      long k1 = (long) BUFFER_LONG_LE.get(buffer, i);
      long k2 = (long) BUFFER_LONG_LE.get(buffer, i + 8);
      h1 = mixH1(h1, h2, k1);
      h2 = mixH2(h2, h1, k2);
    }
    int rest = end - i;
    if (rest > 0) {
      long k1 = rest >= 8 ? (long) BUFFER_LONG_LE.get(buffer, i) : tailBytesLE(buffer, i, rest);
      long k2 = rest > 8 ? tailBytesLE(buffer, i + 8, rest - 8) : 0;
      h1 ^= mixK1(k1);
      h2 ^= mixK2(k2);
    }
    h1 ^= length;
    h2 ^= length;
    return finish(h1, h2, consumer);
  }

  /** Allocating convenience: the hash of a long key. */
  static Hash128 hashLong(long value) {
    long[] out = new long[2];
    hashLong(value, (a, b) -> store(out, a, b));
    return new Hash128(out[0], out[1]);
  }

  /** Allocating convenience: the hash of a string key. */
  static Hash128 hashString(String s) {
    long[] out = new long[2];
    hashString(s, (a, b) -> store(out, a, b));
    return new Hash128(out[0], out[1]);
  }

  /** Allocating convenience: the hash of a byte range. */
  static Hash128 hashBytes(byte[] bytes, int offset, int length) {
    long[] out = new long[2];
    hashBytes(bytes, offset, length, (a, b) -> store(out, a, b));
    return new Hash128(out[0], out[1]);
  }

  private static boolean store(long[] out, long h1, long h2) {
    out[0] = h1;
    out[1] = h2;
    return true;
  }

  // Kept out of line so the ASCII path stays small enough for the JIT to inline into callers.
  private static boolean hashNonAscii(String s, Hash128Consumer consumer) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    return hashBytes(utf8, 0, utf8.length, consumer);
  }

  /**
   * Packs {@code count} (1..8) chars starting at {@code from} as little-endian bytes, or returns
   * {@link #NOT_ASCII} if any of them is outside 0..127.
   */
  private static long asciiLE(String s, int from, int count) {
    long k = 0;
    int seen = 0;
    for (int j = count - 1; j >= 0; j--) {
      char c = s.charAt(from + j);
      seen |= c;
      k = (k << 8) | c;
    }
    return (seen & 0xFF80) == 0 ? k : NOT_ASCII;
  }

  /** {@link #asciiLE(String, int, int)} for any char sequence. */
  private static long asciiLE(CharSequence s, int from, int count) {
    long k = 0;
    int seen = 0;
    for (int j = count - 1; j >= 0; j--) {
      char c = s.charAt(from + j);
      seen |= c;
      k = (k << 8) | c;
    }
    return (seen & 0xFF80) == 0 ? k : NOT_ASCII;
  }

  private static long tailBytesLE(ByteBuffer bytes, int from, int count) {
    long k = 0;
    for (int j = count - 1; j >= 0; j--) {
      k = (k << 8) | (bytes.get(from + j) & 0xFFL);
    }
    return k;
  }

  private static long tailBytesLE(byte[] bytes, int from, int count) {
    long k = 0;
    for (int j = count - 1; j >= 0; j--) {
      k = (k << 8) | (bytes[from + j] & 0xFFL);
    }
    return k;
  }

  private static long mixH1(long h1, long h2, long k1) {
    h1 ^= mixK1(k1);
    h1 = Long.rotateLeft(h1, 27);
    h1 += h2;
    return h1 * 5 + 0x52dce729;
  }

  private static long mixH2(long h2, long h1, long k2) {
    h2 ^= mixK2(k2);
    h2 = Long.rotateLeft(h2, 31);
    h2 += h1;
    return h2 * 5 + 0x38495ab5;
  }

  private static long mixK1(long k1) {
    k1 *= C1;
    k1 = Long.rotateLeft(k1, 31);
    return k1 * C2;
  }

  private static long mixK2(long k2) {
    k2 *= C2;
    k2 = Long.rotateLeft(k2, 33);
    return k2 * C1;
  }

  private static boolean finish(long h1, long h2, Hash128Consumer consumer) {
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 += h2;
    h2 += h1;
    return consumer.accept(h1, h2);
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }
}
