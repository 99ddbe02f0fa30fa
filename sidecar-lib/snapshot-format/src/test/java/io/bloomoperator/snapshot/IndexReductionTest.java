package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The division-free bit index must equal Guava's {@code x % numBits} for every x. */
class IndexReductionTest {

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 7, 64, 1000, 1_500_000, 1L << 20, 33_554_431, Integer.MAX_VALUE})
  void equalsRemainderForEdgeAndRandomValues(long numLongs) {
    long m = numLongs * 64;
    long reciprocal = Long.divideUnsigned(-1L, m);
    long[] edges = {
      0,
      1,
      m - 1,
      m,
      m + 1,
      2 * m - 1,
      2 * m,
      Long.MAX_VALUE,
      Long.MAX_VALUE - 1,
      Long.MAX_VALUE - m,
      Long.MAX_VALUE / m * m,
      Long.MAX_VALUE / m * m - 1
    };
    for (long x : edges) {
      if (x >= 0) {
        assertThat(BloomFilterBits.remainder(x, m, reciprocal))
            .as("x=%d m=%d", x, m)
            .isEqualTo(x % m);
      }
    }
    SplittableRandom random = new SplittableRandom(numLongs);
    for (int i = 0; i < 200_000; i++) {
      long x = random.nextLong() & Long.MAX_VALUE;
      assertThat(BloomFilterBits.remainder(x, m, reciprocal)).isEqualTo(x % m);
    }
  }
}
