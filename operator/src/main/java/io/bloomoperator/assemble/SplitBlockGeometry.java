package io.bloomoperator.assemble;

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

  static BloomFilterBits.Builder builder(KeyType keyType, BloomFilterSizing sizing) {
    return BloomFilterBits.splitBlockBuilder(keyType, sizing.numBits() / BITS_PER_BLOCK);
  }

  private static BloomFilterSizing of(long keys, double fpp, long blocks) {
    return new BloomFilterSizing(
        keys, fpp, blocks * BITS_PER_BLOCK, FilterFormat.SPLIT_BLOCK_BITS_PER_KEY);
  }
}
