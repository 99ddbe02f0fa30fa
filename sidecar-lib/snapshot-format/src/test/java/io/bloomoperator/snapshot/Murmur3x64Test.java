package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.util.Random;
import org.junit.jupiter.api.Test;

class Murmur3x64Test {

  private static final HashFunction GUAVA = Hashing.murmur3_128();

  @Test
  void stringsHashLikeGuavaUtf8Funnel() {
    for (String s : GuavaOracle.specialStrings()) {
      assertSameAsGuava(s);
    }
    Random random = new Random(1);
    for (int i = 0; i < 200_000; i++) {
      assertSameAsGuava(GuavaOracle.randomString(random));
    }
  }

  @Test
  void everyAsciiLengthAndNonAsciiPositionMatchesGuava() {
    // Exercises every block/tail split of the ASCII fast path and a bail-out from every position.
    StringBuilder ascii = new StringBuilder();
    for (int length = 0; length <= 70; length++) {
      String s = ascii.toString();
      assertSameAsGuava(s);
      for (int pos = 0; pos < length; pos++) {
        for (char c : new char[] {'\u0080', '\u00e9', '\u0100', '\u20ac', '\ud83d', '\ude00'}) {
          assertSameAsGuava(s.substring(0, pos) + c + s.substring(pos + 1));
        }
      }
      ascii.append((char) ('!' + length));
    }
  }

  @Test
  void longsHashLikeGuavaLongFunnel() {
    long[] specials = {
      0,
      1,
      -1,
      8,
      255,
      256,
      Long.MIN_VALUE,
      Long.MAX_VALUE,
      Integer.MIN_VALUE,
      Integer.MAX_VALUE,
      0x0102030405060708L
    };
    for (long v : specials) {
      assertSameAsGuava(v);
    }
    Random random = new Random(2);
    for (int i = 0; i < 200_000; i++) {
      assertSameAsGuava(GuavaOracle.randomLong(random));
    }
  }

  @Test
  void byteRangesHashLikeGuava() {
    Random random = new Random(3);
    for (int i = 0; i < 50_000; i++) {
      byte[] bytes = new byte[random.nextInt(80)];
      random.nextBytes(bytes);
      int offset = bytes.length == 0 ? 0 : random.nextInt(bytes.length);
      int length = random.nextInt(bytes.length - offset + 1);
      assertThat(Murmur3x64.hashBytes(bytes, offset, length).toBytes())
          .as("bytes offset %d length %d", offset, length)
          .isEqualTo(GUAVA.hashBytes(bytes, offset, length).asBytes());
    }
  }

  @Test
  void consumerSeesBothHalvesAndItsAnswerIsReturned() {
    long[] seen = new long[2];
    boolean answer =
        Murmur3x64.hashLong(
            42L,
            (h1, h2) -> {
              seen[0] = h1;
              seen[1] = h2;
              return false;
            });
    assertThat(answer).isFalse();
    assertThat(new Murmur3x64.Hash128(seen[0], seen[1])).isEqualTo(Murmur3x64.hashLong(42L));
  }

  private static void assertSameAsGuava(String s) {
    assertThat(Murmur3x64.hashString(s).toBytes())
        .as("hash of %s", s.chars().mapToObj(c -> String.format("%04x", c)).toList())
        .isEqualTo(GUAVA.hashObject(s, GuavaOracle.STRING_FUNNEL).asBytes());
  }

  private static void assertSameAsGuava(long v) {
    assertThat(Murmur3x64.hashLong(v).toBytes())
        .as("hash of %d", v)
        .isEqualTo(GUAVA.hashObject(v, GuavaOracle.LONG_FUNNEL).asBytes());
  }
}
