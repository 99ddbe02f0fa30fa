package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.BloomFilter;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class BloomFilterSizingTest {

  private static final long[] KEY_COUNTS = {
    1,
    2,
    3,
    7,
    10,
    64,
    100,
    999,
    1000,
    12_345,
    100_000,
    1_000_000,
    10_000_000,
    123_456_789,
    1_000_000_000
  };
  private static final double[] FPPS = {
    0.999, 0.9, 0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.001, 1e-4, 1e-5, 1e-6, 1e-7,
    1e-9
  };

  @Test
  void expectedFppAtCapacityNeverExceedsTarget() {
    int grown = 0;
    for (long n : KEY_COUNTS) {
      for (double p : FPPS) {
        BloomFilterSizing s;
        try {
          s = BloomFilterSizing.forKeys(n, p);
        } catch (IllegalArgumentException tooBig) {
          assertThat(tooBig).hasMessageContaining("Guava");
          continue;
        }
        String what = "n=" + n + " p=" + p + " -> " + s;
        assertThat(s.numBits() % 64).as(what).isZero();
        assertThat(s.numHashFunctions()).as(what).isBetween(1, 255);
        // Independent formula, not the class's own helper.
        double fpp =
            Math.pow(
                1 - Math.exp(-(double) s.numHashFunctions() * n / s.numBits()),
                s.numHashFunctions());
        assertThat(fpp).as(what).isLessThanOrEqualTo(p * (1 + 1e-12));
        assertThat(s.expectedFpp()).as(what).isLessThanOrEqualTo(p);

        // Guava's starting point, recomputed here from its published formulas.
        long guavaBits = (long) (-n * Math.log(p) / (Math.log(2) * Math.log(2)));
        long guavaWords = Math.max(1, (guavaBits + 63) / 64);
        int guavaK = Math.max(1, (int) Math.round((double) guavaBits / n * Math.log(2)));
        assertThat(s.numHashFunctions()).as(what).isEqualTo(Math.min(255, guavaK));
        assertThat(s.numLongs()).as(what).isGreaterThanOrEqualTo((int) guavaWords);
        if (s.numLongs() > guavaWords) {
          grown++;
          // Grown minimally: one word less would miss the target.
          assertThat(BloomFilterSizing.expectedFpp(s.numBits() - 64, s.numHashFunctions(), n))
              .as(what)
              .isGreaterThan(p);
        }
      }
    }
    assertThat(grown).as("the growth rule must actually kick in somewhere").isPositive();
  }

  @Test
  void onePercentIsSlightlyLargerThanGuava() {
    BloomFilterSizing s = BloomFilterSizing.forKeys(10_000_000, 0.01);
    assertThat(BloomFilterSizing.optimalNumOfBits(10_000_000, 0.01)).isEqualTo(95_850_583L);
    assertThat(s.numHashFunctions()).isEqualTo(7);
    // Guava's 95,850,583 bits give (1 - e^(-7n/m))^7 ~= 1.004% > 1%, so the filter grows a little.
    assertThat(s.numBits()).isGreaterThan(95_850_624L).isLessThan(96_100_000L);
    assertThat(s.expectedFpp()).isLessThanOrEqualTo(0.01).isGreaterThan(0.00999);
  }

  @Test
  void neverSmallerThanWhatGuavaCreateAllocates() throws Exception {
    for (long n : new long[] {1, 10, 1000, 100_000}) {
      for (double p : new double[] {0.5, 0.1, 0.01, 1e-6}) {
        BloomFilter<Long> guava = BloomFilter.create(GuavaOracle.LONG_FUNNEL, n, p);
        ByteBuffer header = ByteBuffer.wrap(GuavaOracle.writeTo(guava), 0, 6);
        header.get();
        header.get();
        int guavaWords = header.getInt();
        assertThat(BloomFilterSizing.forKeys(n, p).numLongs())
            .as("n=%d p=%s", n, p)
            .isGreaterThanOrEqualTo(guavaWords);
      }
    }
  }

  @Test
  void rejectsBadArguments() {
    for (double p : new double[] {0.0, 1.0, -0.1, 1.5, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThatThrownBy(() -> BloomFilterSizing.forKeys(100, p))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("targetFpp");
    }
    for (long n : new long[] {0, -1, Long.MIN_VALUE}) {
      assertThatThrownBy(() -> BloomFilterSizing.forKeys(n, 0.01))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("expectedKeys");
    }
  }

  @Test
  void guardsGuavasWordLimit() {
    // ~14.4e9 keys at 1% need ~1.4e11 bits > 2^31 - 1 words * 64.
    assertThatThrownBy(() -> BloomFilterSizing.forKeys(15_000_000_000L, 0.01))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the most Guava's BloomFilter format can hold");
    assertThatThrownBy(() -> BloomFilterSizing.forKeys(Long.MAX_VALUE, 0.5))
        .isInstanceOf(IllegalArgumentException.class);
    // Just under the limit is fine (no allocation happens here).
    BloomFilterSizing big = BloomFilterSizing.forKeys(10_000_000_000L, 0.01);
    assertThat(big.numBits()).isLessThanOrEqualTo(BloomFilterSizing.MAX_BITS);
  }

  @Test
  void tinyFiltersGetAtLeastOneWordAndOneHash() {
    BloomFilterSizing s = BloomFilterSizing.forKeys(1, 0.999);
    assertThat(s.numLongs()).isEqualTo(1);
    assertThat(s.numHashFunctions()).isEqualTo(1);
    assertThat(s.expectedFpp()).isLessThanOrEqualTo(0.999);
  }

  @Test
  void guavaFormulaHelpers() {
    assertThat(BloomFilterSizing.optimalNumOfBits(1000, 0.0)).isPositive(); // p == 0 -> MIN_VALUE
    assertThat(BloomFilterSizing.optimalNumOfHashFunctions(1000, 9585)).isEqualTo(7);
    assertThat(BloomFilterSizing.optimalNumOfHashFunctions(1000, 1)).isEqualTo(1);
    assertThat(BloomFilterSizing.expectedFpp(64, 1, 0)).isZero();
    assertThat(BloomFilterSizing.expectedFpp(0, 1, 1)).isEqualTo(1.0);
  }
}
