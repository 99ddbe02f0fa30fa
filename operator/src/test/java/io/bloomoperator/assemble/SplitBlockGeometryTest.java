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
