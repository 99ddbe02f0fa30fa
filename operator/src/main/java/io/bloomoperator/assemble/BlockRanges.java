package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.SplitBlockBits;

/**
 * A split-block filter's blocks cut into contiguous ranges, one per owner. A key's block ({@link
 * SplitBlockBits#blockOf}) follows from its hash alone, so a key's range is known before any bit is
 * set: each range can then be written by one thread at a time with plain writes, and the bits are
 * those of one thread, because every key still sets exactly the bits of its own block.
 *
 * <p>Range of block {@code b}: {@code (b × floor(2^32 × ranges / blocks)) >>> 32}, a multiplication
 * instead of a division per key. It never decreases as {@code b} grows (so ranges are contiguous
 * and disjoint) and stays below {@code ranges}; with fewer blocks than owners there are only as
 * many ranges as blocks. The cut is near even: the rounding of the step moves it by blocks / 2^32
 * of a range at most (0.1 % at 100M keys, 1/8 at the format's 2^29 blocks), which costs nothing but
 * balance, and a range is drained by whichever thread claims it ({@link BlockRangeInserts}).
 */
final class BlockRanges {

  private final long numBlocks;
  private final int count;

  /** floor(2^32 × count / numBlocks), at most 2^32 since count ≤ numBlocks. */
  private final long step;

  /**
   * @param numBlocks the filter's blocks, in 1..{@link
   *     io.bloomoperator.snapshot.SplitBlockSizing#MAX_BLOCKS} (below 2^29, so {@code b × step}
   *     fits in a long)
   * @param owners the most ranges wanted
   */
  BlockRanges(long numBlocks, int owners) {
    if (numBlocks < 1 || owners < 1) {
      throw new IllegalArgumentException("blocks and owners must be positive");
    }
    this.numBlocks = numBlocks;
    this.count = (int) Math.min(owners, numBlocks);
    this.step = ((long) count << 32) / numBlocks;
  }

  /** How many ranges there are: the owners asked for, or the blocks if fewer. */
  int count() {
    return count;
  }

  /** The range of the block a key with this hash sets its bits in. */
  int rangeOf(long hash) {
    return rangeOfBlock(SplitBlockBits.blockOf(hash, numBlocks));
  }

  /** The range of block {@code block}. */
  int rangeOfBlock(long block) {
    return (int) ((block * step) >>> 32);
  }
}
