package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What an operator gets from a split-block sizing: the sizes docs/snapshot-protocol.md publishes,
 * the fewest blocks that meet the target less its 2 % margin, the rate formula itself, and the
 * edges of what it accepts.
 */
class SplitBlockSizingTest {

  @ParameterizedTest
  @CsvSource({
    "0.1, 6.02",
    "0.05, 7.26",
    "0.01, 10.58",
    "0.001, 16.96",
    "0.0001, 26.44",
    "0.00001, 41.15"
  })
  void bitsPerKeyForAHundredMillionKeysAreThePublishedOnes(double fpp, double bitsPerKey) {
    long keys = 100_000_000;
    SplitBlockSizing sizing = SplitBlockSizing.forKeys(keys, fpp);

    assertThat(sizing.bitsPerKey()).isCloseTo(bitsPerKey, within(0.005));
    assertThat(sizing.bitsPerKey()).isEqualTo(sizing.numBlocks() * 256.0 / keys);
    assertThat(sizing.numBytes()).isEqualTo(sizing.numBlocks() * 32);
    assertThat(sizing.expectedInsertions()).isEqualTo(keys);
    assertThat(sizing.fpp()).isEqualTo(fpp);
  }

  @ParameterizedTest
  @CsvSource({
    "1, 0.5",
    "1, 0.01",
    "7, 0.3",
    "1000, 0.1",
    "12345, 0.01",
    "1000000, 0.001",
    "50000000, 0.0001",
    "3000000000, 0.02"
  })
  void fewestBlocksWhoseLoadMeetsTheTargetLessTheMargin(long keys, double fpp) {
    SplitBlockSizing sizing = SplitBlockSizing.forKeys(keys, fpp);
    long blocks = sizing.numBlocks();
    double target = fpp * 0.98;

    assertThat(SplitBlockSizing.fppAt((double) keys / blocks)).isLessThanOrEqualTo(target);
    if (blocks > 1) {
      assertThat(SplitBlockSizing.fppAt((double) keys / (blocks - 1)))
          .as("one block fewer misses the target")
          .isGreaterThan(target);
    }
    assertThat(sizing.expectedFpp()).isEqualTo(SplitBlockSizing.fppAt((double) keys / blocks));
    assertThat(sizing.expectedFpp()).isLessThanOrEqualTo(fpp);
  }

  @Test
  void oneKeyAtTheLaxestRateFitsOneBlock() {
    SplitBlockSizing sizing = SplitBlockSizing.forKeys(1, 0.5);

    assertThat(sizing.numBlocks()).isEqualTo(1);
    assertThat(sizing.numBytes()).isEqualTo(32);
    assertThat(sizing.bitsPerKey()).isEqualTo(256.0);
    assertThat(sizing.expectedFpp()).isEqualTo(SplitBlockSizing.fppAt(1.0));
  }

  @ParameterizedTest
  @ValueSource(doubles = {1e-3, 0.5, 1, 7.5, 24, 60, 100, 200, 256})
  void fppAtIsThePoissonMixtureOfTheBlockLoads(double keysPerBlock) {
    double expected = poissonMixture(keysPerBlock);
    assertThat(SplitBlockSizing.fppAt(keysPerBlock)).isCloseTo(expected, within(1e-9 * expected));
  }

  @Test
  void anEmptyBlockNeverPasses() {
    assertThat(SplitBlockSizing.fppAt(0)).isEqualTo(0.0);
    assertThat(SplitBlockSizing.fppAt(-1)).isEqualTo(0.0);
  }

  @Test
  void acceptsTheEdgesOfItsArgumentsAndRefusesBeyond() {
    assertThat(SplitBlockSizing.forKeys(1, 0.01).numBlocks()).isEqualTo(1);
    assertThat(SplitBlockSizing.forKeys(1, 0.5).fpp()).isEqualTo(0.5);
    for (double fpp : new double[] {0.0, -0.01, Math.nextUp(0.5), 1.0, Double.NaN}) {
      assertThatThrownBy(() -> SplitBlockSizing.forKeys(10, fpp))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("fpp must be in (0, 0.5], was " + fpp);
    }
    for (long keys : new long[] {0, -1, Long.MIN_VALUE}) {
      assertThatThrownBy(() -> SplitBlockSizing.forKeys(keys, 0.01))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("expectedInsertions must be at least 1, was " + keys);
    }
  }

  @Test
  void aSizingHoldsOneToMaxBlocks() {
    // The words of a filter live in one long[], four per block, within the JVM's array limit.
    assertThat(SplitBlockSizing.MAX_BLOCKS).isEqualTo(536_870_909L);
    assertThat(SplitBlockSizing.MAX_BLOCKS * 4).isLessThanOrEqualTo(Integer.MAX_VALUE - 8);

    assertThat(new SplitBlockSizing(1, 0.01, 1, 0.0).numBlocks()).isEqualTo(1);
    assertThat(new SplitBlockSizing(1, 0.01, SplitBlockSizing.MAX_BLOCKS, 0.0).numBytes())
        .isEqualTo(SplitBlockSizing.MAX_BLOCKS * 32);
    for (long blocks : new long[] {0, -1, SplitBlockSizing.MAX_BLOCKS + 1}) {
      assertThatThrownBy(() -> new SplitBlockSizing(1, 0.01, blocks, 0.0))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("numBlocks must be in [1, 536870909], was " + blocks);
    }
  }

  @Test
  void theMostKeysASizingTakesNeedExactlyMaxBlocks() {
    double fpp = 0.01;
    // Bisect for the largest key count forKeys accepts (no filter is allocated).
    long accepted = 1;
    long refused = Long.MAX_VALUE / 2;
    while (refused - accepted > 1) {
      long mid = accepted + (refused - accepted) / 2;
      if (fits(mid, fpp)) {
        accepted = mid;
      } else {
        refused = mid;
      }
    }

    assertThat(SplitBlockSizing.forKeys(accepted, fpp).numBlocks())
        .isEqualTo(SplitBlockSizing.MAX_BLOCKS);
    long oneMore = accepted + 1;
    assertThatThrownBy(() -> SplitBlockSizing.forKeys(oneMore, fpp))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("a split-block filter for " + oneMore + " keys at fpp 0.01 needs ")
        .hasMessageEndingWith(" blocks, more than 536870909");
  }

  private static boolean fits(long keys, double fpp) {
    try {
      SplitBlockSizing.forKeys(keys, fpp);
      return true;
    } catch (IllegalArgumentException tooMany) {
      return false;
    }
  }

  /**
   * {@code Σ_j Poisson(j; λ) · (1 - (31/32)^j)^8}, summed independently of the class: Poisson terms
   * by the recurrence {@code p_j = p_(j-1) λ / j}, far past where they vanish.
   */
  private static double poissonMixture(double lambda) {
    double poisson = Math.exp(-lambda);
    double sum = 0;
    for (int j = 0; j <= 2000; j++) {
      if (j > 0) {
        poisson = poisson * lambda / j;
      }
      sum += poisson * Math.pow(1 - Math.pow(31.0 / 32.0, j), 8);
    }
    return sum;
  }
}
