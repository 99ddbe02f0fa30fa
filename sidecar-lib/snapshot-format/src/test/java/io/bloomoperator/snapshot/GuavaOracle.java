package io.bloomoperator.snapshot;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;

/** Guava as the reference implementation, plus key generators shared by the tests. */
final class GuavaOracle {

  static final Funnel<CharSequence> STRING_FUNNEL = Funnels.stringFunnel(StandardCharsets.UTF_8);
  static final Funnel<Long> LONG_FUNNEL = Funnels.longFunnel();

  private GuavaOracle() {}

  /**
   * An empty Guava filter with exactly numLongs words and k hash functions: Guava has no public
   * constructor for that, so read an all-zero payload with a hand-written header.
   */
  static <T> BloomFilter<T> emptyGuava(int numLongs, int k, Funnel<? super T> funnel) {
    ByteBuffer payload = ByteBuffer.allocate(6 + numLongs * 8);
    payload.put((byte) 1).put((byte) k).putInt(numLongs);
    try {
      return BloomFilter.readFrom(new ByteArrayInputStream(payload.array()), funnel);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static <T> BloomFilter<T> emptyGuavaLike(BloomFilterBits.Builder ours, Funnel<? super T> funnel) {
    return emptyGuava((int) (ours.numBits() / Long.SIZE), ours.numHashFunctions(), funnel);
  }

  static byte[] writeTo(BloomFilter<?> filter) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try {
      filter.writeTo(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  static <T> BloomFilter<T> readFrom(byte[] payload, Funnel<? super T> funnel) {
    try {
      return BloomFilter.readFrom(new ByteArrayInputStream(payload), funnel);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Tricky strings: empty, ASCII boundaries, multi-byte UTF-8, emoji, lone and reversed surrogates.
   */
  static String[] specialStrings() {
    return new String[] {
      "",
      "a",
      "\u007f",
      "\u0080",
      "\u00ff",
      "\u0100",
      "\u07ff",
      "\u0800",
      "\uffff",
      "abcdefghijklmno",
      "abcdefghijklmnop",
      "abcdefghijklmnopq",
      "0123456789abcdef0123456789abcdef",
      "user@example.com",
      "caf\u00e9",
      "na\u00efve-\u4e2d\u6587-\u0440\u0443\u0441",
      "\ud83d\ude00",
      "grin\ud83d\ude00grin",
      "\ud83d",
      "\ude00",
      "x\ud83dy",
      "x\ude00\ud83dy",
      "\ud83d\ud83d",
      "0123456789abcdef\u00e9",
      "0123456789abcdef0123456\u00e9",
      "\u0000",
      "\u0000\u0000\u0000",
      "ends with lone high \ud800",
      "\udbff\udfff",
      "\ud800\udc00",
      "a\tb\nc\rd",
    };
  }

  /** A random string: mostly ASCII of varied length, sometimes any UTF-16 code units at all. */
  static String randomString(Random random) {
    int length = random.nextInt(48);
    char[] chars = new char[length];
    int mode = random.nextInt(10);
    for (int i = 0; i < length; i++) {
      if (mode < 7) {
        chars[i] = (char) random.nextInt(128); // ASCII, including control chars
      } else if (mode < 9) {
        chars[i] =
            random.nextInt(8) == 0
                ? (char) (0x80 + random.nextInt(0x800))
                : (char) (32 + random.nextInt(95));
      } else {
        chars[i] = (char) random.nextInt(0x10000); // includes unpaired surrogates
      }
    }
    return new String(chars);
  }

  static long randomLong(Random random) {
    switch (random.nextInt(8)) {
      case 0:
        return random.nextInt(1000) - 500; // small, incl. negatives
      case 1:
        return Long.MIN_VALUE + random.nextInt(1000);
      case 2:
        return Long.MAX_VALUE - random.nextInt(1000);
      default:
        return random.nextLong();
    }
  }
}
