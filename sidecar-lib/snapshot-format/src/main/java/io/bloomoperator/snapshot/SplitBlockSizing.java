package io.bloomoperator.snapshot;

/**
 * How many 32-byte blocks a split-block filter needs for {@code expectedInsertions} keys at a
 * false-positive rate of at most {@code fpp}.
 *
 * <p>A split-block filter sets one bit in each of a block's eight 32-bit words per key, so its
 * false-positive rate depends on how many keys land in the probed block. With {@code λ} keys per
 * block on average the count is Poisson-distributed and the rate is {@code Σ_j Poisson(j; λ) · (1 -
 * (31/32)^j)^8}. The sizing takes the largest {@code λ} whose rate is at most {@code fpp} less a 2
 * % margin (so a measurement over a few million probes stays at or under {@code fpp}), and as many
 * blocks as that needs. The blocked layout needs more bits per key than Guava's for the same rate;
 * the table in docs/snapshot-protocol.md lists both.
 *
 * @param expectedInsertions the number of keys the filter is sized for, at least 1
 * @param fpp the requested false-positive rate, in (0, 0.5]
 * @param numBlocks the number of 32-byte blocks
 * @param expectedFpp the false-positive rate at {@code expectedInsertions} keys
 */
public record SplitBlockSizing(
    long expectedInsertions, double fpp, long numBlocks, double expectedFpp) {

  /** Bytes per block: eight 32-bit words, one cache line half or whole on common hardware. */
  public static final int BYTES_PER_BLOCK = 32;

  /**
   * The most blocks a filter may have: the words live in one {@code long[]} (four per block), so
   * 2^29 blocks (16 GiB). Parquet's own writers stop at 128 MiB; the index arithmetic of the format
   * allows 2^32 blocks.
   */
  public static final long MAX_BLOCKS = (Integer.MAX_VALUE - 8) / 4;

  private static final double MARGIN = 0.98;

  public SplitBlockSizing {
    if (numBlocks < 1 || numBlocks > MAX_BLOCKS) {
      throw new IllegalArgumentException(
          "numBlocks must be in [1, " + MAX_BLOCKS + "], was " + numBlocks);
    }
  }

  /** The sizing for {@code expectedInsertions} keys at a false-positive rate of at most fpp. */
  public static SplitBlockSizing forKeys(long expectedInsertions, double fpp) {
    if (expectedInsertions < 1) {
      throw new IllegalArgumentException(
          "expectedInsertions must be at least 1, was " + expectedInsertions);
    }
    if (!(fpp > 0 && fpp <= 0.5)) {
      throw new IllegalArgumentException("fpp must be in (0, 0.5], was " + fpp);
    }
    double target = fpp * MARGIN;
    // fppAt rises with the keys per block: bisect for the largest load that meets the target.
    double low = 1e-6;
    double high = 256;
    for (int i = 0; i < 100; i++) {
      double mid = (low + high) / 2;
      if (fppAt(mid) <= target) {
        low = mid;
      } else {
        high = mid;
      }
    }
    double blocks = Math.ceil(expectedInsertions / low);
    if (blocks > MAX_BLOCKS) {
      throw new IllegalArgumentException(
          "a split-block filter for "
              + expectedInsertions
              + " keys at fpp "
              + fpp
              + " needs "
              + (long) blocks
              + " blocks, more than "
              + MAX_BLOCKS);
    }
    long numBlocks = (long) blocks;
    return new SplitBlockSizing(
        expectedInsertions, fpp, numBlocks, fppAt((double) expectedInsertions / numBlocks));
  }

  /** Bits per key this sizing spends. */
  public double bitsPerKey() {
    return numBlocks * (double) (BYTES_PER_BLOCK * 8) / expectedInsertions;
  }

  /** The size of the bit array in bytes. */
  public long numBytes() {
    return numBlocks * BYTES_PER_BLOCK;
  }

  /**
   * The expected false-positive rate with {@code keysPerBlock} keys per block on average.
   *
   * @param keysPerBlock the average load, at most 256 (beyond it the filter is nearly full)
   */
  public static double fppAt(double keysPerBlock) {
    if (keysPerBlock <= 0) {
      return 0;
    }
    // Poisson terms by recurrence from the mode outwards would be exact for large loads; loads
    // here stay under 256, where summing from j = 0 in log space is stable and cheap.
    double missPerKey = Math.log(31.0 / 32.0);
    double logLambda = Math.log(keysPerBlock);
    double sum = 0;
    double logFactorial = 0;
    int last = (int) Math.ceil(keysPerBlock + 12 * Math.sqrt(keysPerBlock) + 30);
    for (int j = 0; j <= last; j++) {
      if (j > 0) {
        logFactorial += Math.log(j);
      }
      double poisson = Math.exp(j * logLambda - keysPerBlock - logFactorial);
      double bitSet = -Math.expm1(j * missPerKey);
      sum += poisson * Math.pow(bitSet, 8);
    }
    return sum;
  }
}
