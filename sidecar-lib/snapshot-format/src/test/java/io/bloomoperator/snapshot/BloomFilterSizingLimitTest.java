package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The edges of Guava-layout sizing: the largest filter Guava's format can describe is still sized,
 * one key more is refused with a text an operator can act on, and the formula helpers keep Guava's
 * conventions at their degenerate inputs.
 */
class BloomFilterSizingLimitTest {

  @ParameterizedTest
  @ValueSource(doubles = {0.5, 0.01})
  void theMostKeysASizingTakesFillExactlyGuavasLargestWordCount(double fpp) {
    // Bisect for the largest key count forKeys accepts (nothing is allocated).
    long accepted = 1;
    long refused = Long.MAX_VALUE / 4;
    while (refused - accepted > 1) {
      long mid = accepted + (refused - accepted) / 2;
      if (fits(mid, fpp)) {
        accepted = mid;
      } else {
        refused = mid;
      }
    }

    BloomFilterSizing largest = BloomFilterSizing.forKeys(accepted, fpp);
    assertThat(largest.numLongs()).isEqualTo(Integer.MAX_VALUE);
    assertThat(largest.numBits()).isEqualTo(BloomFilterSizing.MAX_BITS);
    assertThat(largest.expectedFpp()).isLessThanOrEqualTo(fpp);
    long oneMore = accepted + 1;
    assertThatThrownBy(() -> BloomFilterSizing.forKeys(oneMore, fpp))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "a filter for "
                + oneMore
                + " keys at fpp "
                + fpp
                + " needs more than 137438953408 bits (2147483647 64-bit words), the most Guava's"
                + " BloomFilter format can hold; raise the fpp or split the key set");
  }

  @Test
  void aZeroFppIsGuavasSmallestPositiveOne() {
    for (long n : new long[] {1, 1_000, 123_456_789}) {
      long bits = BloomFilterSizing.optimalNumOfBits(n, 0.0);
      assertThat(bits).isEqualTo(BloomFilterSizing.optimalNumOfBits(n, Double.MIN_VALUE));
      assertThat(bits)
          .isEqualTo((long) (-n * Math.log(Double.MIN_VALUE) / (Math.log(2) * Math.log(2))));
    }
  }

  @Test
  void aFilterWithoutBitsAnswersMaybeToEverything() {
    // Whatever the keys and k, even none: nothing to divide by, the rate is 1.
    assertThat(BloomFilterSizing.expectedFpp(0, 1, 0)).isEqualTo(1.0);
    assertThat(BloomFilterSizing.expectedFpp(0, 7, 1_000)).isEqualTo(1.0);
    assertThat(BloomFilterSizing.expectedFpp(-64, 3, 10)).isEqualTo(1.0);
  }

  private static boolean fits(long keys, double fpp) {
    try {
      BloomFilterSizing.forKeys(keys, fpp);
      return true;
    } catch (IllegalArgumentException tooMany) {
      return false;
    }
  }
}
