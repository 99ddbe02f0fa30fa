package io.bloomoperator.assemble;

import io.bloomoperator.api.SplitBlockSize;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;

/**
 * {@link FilterBuilder#size} for the split-block layout: the same policy (keep the published size
 * while it holds the keys at the target rate and is at most {@link FilterBuilder#MAX_OVERSIZE}
 * times what they need; outgrown, grow with {@link FilterBuilder#GROWTH_HEADROOM_PERCENT}
 * headroom), with {@link SplitBlockSizing} for what the keys need. The geometry travels as a {@link
 * BloomFilterSizing} with k = 8 and numBits = 256 per block.
 */
final class SplitBlockGeometry {

  private static final long BITS_PER_BLOCK = SplitBlockSizing.BYTES_PER_BLOCK * Byte.SIZE;

  private SplitBlockGeometry() {}

  static BloomFilterSizing size(FilterBuilder.Request request, long keys) {
    // SplitBlockSizing stops at 0.5: a stricter rate than asked for is still within the target.
    double fpp = Math.min(request.falsePositiveRate(), 0.5);
    SplitBlockSizing needed = SplitBlockSizing.forKeys(keys, fpp);
    if (request.powerOfTwoBlocks()) {
      return powerOfTwo(request, keys, fpp, needed.numBlocks());
    }
    BloomFilterSizing published = request.published();
    if (published != null
        && published.numHashFunctions() == FilterFormat.SPLIT_BLOCK_BITS_PER_KEY
        && published.numBits() % BITS_PER_BLOCK == 0) {
      long blocks = published.numBits() / BITS_PER_BLOCK;
      boolean holds = blocks >= needed.numBlocks();
      if (holds && blocks <= (long) FilterBuilder.MAX_OVERSIZE * needed.numBlocks()) {
        return of(keys, fpp, blocks);
      }
      if (!holds) {
        long withHeadroom = keys + keys / 100 * FilterBuilder.GROWTH_HEADROOM_PERCENT;
        try {
          SplitBlockSizing roomy = SplitBlockSizing.forKeys(withHeadroom, fpp);
          // Headroom never makes a filter too large that fits without it.
          if (roomy.numBytes() <= request.maxPayloadBytes()) {
            return of(keys, fpp, roomy.numBlocks());
          }
        } catch (IllegalArgumentException e) {
          // the headroom would pass the format's limit; the keys alone may fit
        }
      }
    }
    return of(keys, fpp, needed.numBlocks());
  }

  /**
   * The next power of two at or above {@code neededBlocks}; the published count while it is a power
   * of two that holds the keys and is at most {@link FilterBuilder#MAX_OVERSIZE} times that (so a
   * key count that moves a little keeps the geometry, and a delta is possible).
   *
   * @throws IllegalArgumentException beyond 2^22 blocks (128 MiB), the readers' own limit
   */
  private static BloomFilterSizing powerOfTwo(
      FilterBuilder.Request request, long keys, double fpp, long neededBlocks) {
    long blocks = Long.highestOneBit(neededBlocks);
    if (blocks < neededBlocks) {
      blocks <<= 1;
    }
    if (blocks > SplitBlockSize.MAX_POWER_OF_TWO_BLOCKS) {
      throw new IllegalArgumentException(
          String.format(
              java.util.Locale.ROOT,
              "%d keys at false-positive rate %s need %,d split-block bytes; splitBlockSize"
                  + " PowerOfTwo publishes at most %,d (128 MiB, the limit of the readers that need"
                  + " it): use splitBlockSize Fit or a higher falsePositiveRate",
              keys,
              request.falsePositiveRate(),
              neededBlocks * SplitBlockSizing.BYTES_PER_BLOCK,
              SplitBlockSize.MAX_POWER_OF_TWO_BLOCKS * SplitBlockSizing.BYTES_PER_BLOCK));
    }
    BloomFilterSizing published = request.published();
    if (published != null
        && published.numHashFunctions() == FilterFormat.SPLIT_BLOCK_BITS_PER_KEY
        && published.numBits() % BITS_PER_BLOCK == 0) {
      long kept = published.numBits() / BITS_PER_BLOCK;
      if (Long.bitCount(kept) == 1
          && kept >= neededBlocks
          && kept <= (long) FilterBuilder.MAX_OVERSIZE * blocks
          && kept <= SplitBlockSize.MAX_POWER_OF_TWO_BLOCKS) {
        return of(keys, fpp, kept);
      }
    }
    return of(keys, fpp, blocks);
  }

  static BloomFilterBits.Builder builder(KeyType keyType, BloomFilterSizing sizing) {
    return BloomFilterBits.splitBlockBuilder(keyType, sizing.numBits() / BITS_PER_BLOCK);
  }

  private static BloomFilterSizing of(long keys, double fpp, long blocks) {
    return new BloomFilterSizing(
        keys, fpp, blocks * BITS_PER_BLOCK, FilterFormat.SPLIT_BLOCK_BITS_PER_KEY);
  }
}
