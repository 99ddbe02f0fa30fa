package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * What the operator's sizing promises for every (keys, fpp) it may be asked: Guava's bit count
 * rounded up to whole words when that meets the target, otherwise the fewest words that do, with
 * Guava's number of hash functions for its bit count.
 */
class BloomFilterSizingMinimalTest {

  @Test
  void guavasWordsWhenTheyMeetTheTargetElseTheFewestThatDo() {
    long[] keyCounts = {1, 2, 3, 7, 10, 63, 64, 65, 100, 1_000, 12_345, 1_000_000, 50_000_000};
    double[] fpps = {0.5, 0.3, 0.1, 0.05, 0.01, 0.001, 1e-4, 1e-6, 1e-9};
    for (long n : keyCounts) {
      for (double p : fpps) {
        BloomFilterSizing sizing = BloomFilterSizing.forKeys(n, p);
        long guavaBits = BloomFilterSizing.optimalNumOfBits(n, p);
        long guavaWords = Math.max(1, (guavaBits + Long.SIZE - 1) / Long.SIZE);
        int k = Math.min(255, BloomFilterSizing.optimalNumOfHashFunctions(n, guavaBits));
        String what = n + " keys at " + p;
        assertThat(sizing.numHashFunctions()).as(what).isEqualTo(k);
        assertThat(sizing.numBits() % Long.SIZE).as(what).isZero();
        assertThat(sizing.expectedFpp()).as(what).isLessThanOrEqualTo(p);
        if (BloomFilterSizing.expectedFpp(guavaWords * Long.SIZE, k, n) <= p) {
          assertThat(sizing.numBits()).as(what).isEqualTo(guavaWords * Long.SIZE);
        } else {
          assertThat(sizing.numBits()).as(what).isGreaterThan(guavaWords * Long.SIZE);
          assertThat(BloomFilterSizing.expectedFpp(sizing.numBits() - Long.SIZE, k, n))
              .as(what + ": one word less would miss the target")
              .isGreaterThan(p);
        }
        assertThat(sizing.numLongs()).isEqualTo((int) (sizing.numBits() / Long.SIZE));
        assertThat(sizing.expectedKeys()).isEqualTo(n);
        assertThat(sizing.targetFpp()).isEqualTo(p);
      }
    }
  }

  @Test
  void anEmptyFilterIsCertainToAnswerMaybe() {
    assertThat(BloomFilterSizing.expectedFpp(0, 3, 10)).isEqualTo(1.0);
    assertThat(BloomFilterSizing.expectedFpp(64, 3, 0)).isEqualTo(0.0);
    assertThat(BloomFilterSizing.expectedFpp(64, 1, 1))
        .isCloseTo(1 - Math.exp(-1.0 / 64), org.assertj.core.data.Offset.offset(1e-12));
  }
}
