package io.bloomoperator.assemble;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.source.GeneratedSource;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** FilterBuilder in the split-block layout: sizing, the kept published size, the limit. */
class SplitBlockGeometryTest {

  private static final long BLOCK_BITS = 256;

  @Test
  void buildsASplitBlockFilterThatHoldsEveryKeyAtTheTarget() throws Exception {
    FilterBuilder.Result result =
        new FilterBuilder()
            .build(new GeneratedSource("key-", 50_000), request(0.01, null, null, Long.MAX_VALUE));
    assertThat(result.bits().format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
    assertThat(result.bits().numHashFunctions()).isEqualTo(8);
    assertThat(result.bits().numBits())
        .isEqualTo(SplitBlockSizing.forKeys(50_000, 0.01).numBlocks() * BLOCK_BITS);
    assertThat(LongStream.range(0, 50_000).mapToObj(i -> "key-" + i))
        .allMatch(result.bits()::mightContainString);
  }

  @Test
  void keepsThePublishedSizeWhileItHoldsAndIsNotOversized() {
    long needed = SplitBlockSizing.forKeys(10_000, 0.01).numBlocks();
    assertThat(blocks(request(0.01, null, null, Long.MAX_VALUE), 10_000)).isEqualTo(needed);
    // 20 % more than needed: kept, so the next version can be a delta.
    long roomy = needed * 6 / 5;
    assertThat(blocks(request(0.01, null, published(roomy), Long.MAX_VALUE), 10_000))
        .isEqualTo(roomy);
    // More than twice what the keys need: shrunk to what they need.
    assertThat(blocks(request(0.01, null, published(needed * 3), Long.MAX_VALUE), 10_000))
        .isEqualTo(needed);
    // Outgrown: grown with 25 % headroom.
    assertThat(blocks(request(0.01, null, published(needed / 2), Long.MAX_VALUE), 10_000))
        .isEqualTo(SplitBlockSizing.forKeys(12_500, 0.01).numBlocks());
    // A Guava-layout geometry (k = 7) is never taken for blocks.
    FilterBuilder.Request guavaPublished =
        request(0.01, null, new BloomFilterSizing(10_000, 0.01, roomy * BLOCK_BITS, 7), 1L << 40);
    assertThat(blocks(guavaPublished, 10_000)).isEqualTo(needed);
  }

  @Test
  void ratesAboveWhatTheSizingModelsAreServedAtHalf() {
    // The CRD admits rates up to 1; split-block sizing stops at 0.5, which is within the target.
    assertThat(blocks(request(0.9, null, null, Long.MAX_VALUE), 1000))
        .isEqualTo(SplitBlockSizing.forKeys(1000, 0.5).numBlocks());
  }

  @Test
  void theSizeLimitCountsTheHeaderlessPayload() throws Exception {
    long bytes = SplitBlockSizing.forKeys(100_000, 0.01).numBytes();
    GeneratedSource source = new GeneratedSource("key-", 100_000);
    assertThatThrownBy(
            () -> new FilterBuilder().build(source, request(0.01, 100_000L, null, bytes - 1)))
        .isInstanceOf(FilterTooLargeException.class);
    assertThat(
            new FilterBuilder()
                .build(source, request(0.01, 100_000L, null, bytes))
                .bits()
                .numBits())
        .as("exactly the bitset: no header counted")
        .isEqualTo(bytes * 8);
  }

  /**
   * PowerOfTwo: the block count a power of two at or above what the keys need (so a reader that
   * takes only such bitsets, Arrow C++, reads it), kept while it holds them, refused beyond 128
   * MiB.
   */
  @Test
  void powerOfTwoRoundsUpKeepsAndStopsAt128MiB() throws Exception {
    long needed = SplitBlockSizing.forKeys(10_000, 0.01).numBlocks();
    long rounded = Long.highestOneBit(needed) << (Long.bitCount(needed) == 1 ? 0 : 1);
    assertThat(blocks(powerOfTwo(0.01, null), 10_000)).isEqualTo(rounded).isGreaterThan(needed);
    assertThat(Long.bitCount(rounded)).isEqualTo(1);
    // Kept while it holds (a key count that moves a little keeps the geometry)...
    assertThat(blocks(powerOfTwo(0.01, published(rounded * 2)), 10_000)).isEqualTo(rounded * 2);
    // ...but not a count that is no power of two, nor one that no longer holds the keys.
    assertThat(blocks(powerOfTwo(0.01, published(rounded + 4)), 10_000)).isEqualTo(rounded);
    assertThat(blocks(powerOfTwo(0.01, published(rounded / 4)), 10_000)).isEqualTo(rounded);
    // The filter built holds every key.
    FilterBuilder.Result result =
        new FilterBuilder().build(new GeneratedSource("key-", 10_000), powerOfTwo(0.01, null));
    assertThat(result.bits().numBits()).isEqualTo(rounded * BLOCK_BITS);
    assertThat(LongStream.range(0, 10_000).mapToObj(i -> "key-" + i))
        .allMatch(result.bits()::mightContainString);
    // 100M keys at 1e-4 need more than 128 MiB: not built, and the message says what to do.
    assertThatThrownBy(() -> SplitBlockGeometry.size(powerOfTwo(1e-4, null), 100_000_000))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 134,217,728")
        .hasMessageContaining("splitBlockSize Fit");
    // Up to 2^22 blocks is fine.
    assertThat(blocks(powerOfTwo(0.01, null), 4_000_000)).isLessThanOrEqualTo(1L << 22);
  }

  private static FilterBuilder.Request powerOfTwo(double fpp, BloomFilterSizing published) {
    return new FilterBuilder.Request(
        KeyType.STRING, fpp, null, 0, Long.MAX_VALUE, published, FilterFormat.SPLIT_BLOCK, true);
  }

  private static long blocks(FilterBuilder.Request request, long keys) {
    return SplitBlockGeometry.size(request, keys).numBits() / BLOCK_BITS;
  }

  private static BloomFilterSizing published(long blocks) {
    return new BloomFilterSizing(10_000, 0.01, blocks * BLOCK_BITS, 8);
  }

  private static FilterBuilder.Request request(
      double fpp, Long expected, BloomFilterSizing published, long maxBytes) {
    return new FilterBuilder.Request(
        KeyType.STRING, fpp, expected, 0, maxBytes, published, FilterFormat.SPLIT_BLOCK);
  }
}
