package io.bloomoperator.snapshot;

/**
 * How big a filter must be for {@code expectedKeys} keys at {@code targetFpp}.
 *
 * <p>Starts from Guava's formulas so filters look like the ones {@code BloomFilter.create} would
 * make: {@code m = (long) (-n ln p / (ln 2)^2)}, {@code k = max(1, round(m / n * ln 2))}, rounded
 * up to whole 64-bit words. Then applies one extra rule, "never saturates early": the textbook
 * expected false-positive rate at {@code n} keys, {@code (1 - e^(-k n / bits))^k}, must not exceed
 * the target. Guava's numbers miss that by a hair for many targets (for p = 1% and k = 7 they give
 * ~1.004%), so the bit count grows (k stays fixed, which keeps the result deterministic and close
 * to Guava) to the smallest whole number of words that satisfies it.
 *
 * @param expectedKeys the key count the filter is sized for (n &ge; 1)
 * @param targetFpp the requested false-positive probability, strictly between 0 and 1
 * @param numBits the bit count of the filter: always a positive multiple of 64
 * @param numHashFunctions k, 1..255 (255 is the most Guava's wire format can carry)
 */
public record BloomFilterSizing(
    long expectedKeys, double targetFpp, long numBits, int numHashFunctions) {

  /** Guava serialises numHashFunctions as one unsigned byte. */
  public static final int MAX_HASH_FUNCTIONS = 255;

  /** Guava serialises the word count as a signed int. */
  public static final long MAX_BITS = (long) Integer.MAX_VALUE * Long.SIZE;

  private static final double LN2 = Math.log(2);
  private static final double LN2_SQUARED = LN2 * LN2;

  /**
   * Sizes a filter.
   *
   * @throws IllegalArgumentException if {@code expectedKeys < 1}, {@code targetFpp} is not in (0,
   *     1), or the filter would need more than {@link #MAX_BITS} bits (Guava's format cannot
   *     describe it)
   */
  public static BloomFilterSizing forKeys(long expectedKeys, double targetFpp) {
    if (expectedKeys < 1) {
      throw new IllegalArgumentException("expectedKeys must be >= 1, got " + expectedKeys);
    }
    if (!(targetFpp > 0.0 && targetFpp < 1.0)) { // also rejects NaN
      throw new IllegalArgumentException("targetFpp must be in (0, 1), got " + targetFpp);
    }
    long guavaBits = optimalNumOfBits(expectedKeys, targetFpp);
    // At least one word: tiny n with a lax p gives 0 bits, which Guava's format cannot hold.
    long words = Math.max(1, ceilDiv(guavaBits, Long.SIZE));
    checkWords(words, expectedKeys, targetFpp);
    int k = Math.min(MAX_HASH_FUNCTIONS, optimalNumOfHashFunctions(expectedKeys, guavaBits));

    if (expectedFpp(words * Long.SIZE, k, expectedKeys) > targetFpp) {
      // Jump close to the answer in closed form (bits = -k n / ln(1 - p^(1/k))), then step one word
      // at a
      // time so the last word of floating-point error cannot leave us just above the target.
      double needed = -k * (double) expectedKeys / Math.log1p(-Math.pow(targetFpp, 1.0 / k));
      if (needed > MAX_BITS) {
        checkWords(Long.MAX_VALUE, expectedKeys, targetFpp);
      }
      words = Math.max(words, (long) Math.ceil(needed / Long.SIZE) - 1);
      while (expectedFpp(words * Long.SIZE, k, expectedKeys) > targetFpp) {
        words++;
        checkWords(words, expectedKeys, targetFpp);
      }
    }
    return new BloomFilterSizing(expectedKeys, targetFpp, words * Long.SIZE, k);
  }

  /** Number of 64-bit words in the filter (numBits / 64). */
  public int numLongs() {
    return (int) (numBits / Long.SIZE);
  }

  /** The expected false-positive probability once {@link #expectedKeys()} keys are in. */
  public double expectedFpp() {
    return expectedFpp(numBits, numHashFunctions, expectedKeys);
  }

  /**
   * Guava's {@code BloomFilter.optimalNumOfBits}: {@code (long) (-n ln p / (ln 2)^2)}, with p == 0
   * treated as {@link Double#MIN_VALUE}. Not rounded to words.
   */
  public static long optimalNumOfBits(long n, double p) {
    if (p == 0) {
      p = Double.MIN_VALUE;
    }
    return (long) (-n * Math.log(p) / LN2_SQUARED);
  }

  /**
   * {@code max(1, round(m / n * ln 2))}: the k that minimises the false-positive rate for m bits.
   */
  public static int optimalNumOfHashFunctions(long n, long m) {
    return Math.max(1, (int) Math.round((double) m / n * LN2));
  }

  /**
   * The textbook expected false-positive probability {@code (1 - e^(-k n / numBits))^k} of a filter
   * with {@code numBits} bits and {@code k} hash functions holding {@code n} distinct keys.
   */
  public static double expectedFpp(long numBits, int k, long n) {
    if (numBits <= 0) {
      return 1.0;
    }
    // -expm1(-x) is 1 - e^-x without cancellation when x is small (large, nearly empty filters).
    return Math.pow(-Math.expm1(-(double) k * n / numBits), k);
  }

  private static long ceilDiv(long a, long b) {
    return -Math.floorDiv(-a, b);
  }

  private static void checkWords(long words, long n, double p) {
    if (words > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          String.format(
              "a filter for %d keys at fpp %s needs more than %d bits (%d 64-bit words), the most Guava's "
                  + "BloomFilter format can hold; raise the fpp or split the key set",
              n, p, MAX_BITS, Integer.MAX_VALUE));
    }
  }
}
