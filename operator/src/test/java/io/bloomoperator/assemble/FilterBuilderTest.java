package io.bloomoperator.assemble;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.GeneratedSource;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.SourceException;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FilterBuilderTest {

  private final FilterBuilder builder = new FilterBuilder();

  @ParameterizedTest(name = "{0} keys declared as {1} at {2}")
  @CsvSource({
    "10000, , 0.01", // no expectedInsertions: counted first
    "10000, 100, 0.01", // far more keys than declared
    "10000, 9999, 0.001", // one more than declared
    "10000, 50000, 0.01", // fewer than declared: declared size is kept
    "1, , 0.5"
  })
  void neverSaturates(long keys, Long declared, double fpp) throws Exception {
    GeneratedSource source = new GeneratedSource("key-", keys);
    FilterBuilder.Result result =
        builder.build(
            source, new FilterBuilder.Request(KeyType.STRING, fpp, declared, 0, Long.MAX_VALUE));

    assertThat(result.keys()).isEqualTo(keys);
    double expected =
        BloomFilterSizing.expectedFpp(
            result.bits().numBits(), result.bits().numHashFunctions(), keys);
    assertThat(expected).isLessThanOrEqualTo(fpp);
    assertThat(LongStream.range(0, keys).mapToObj(i -> "key-" + i))
        .allMatch(result.bits()::mightContainString);
    if (declared != null && declared >= keys) {
      assertThat(source.reads()).as("one pass when the declaration holds").isEqualTo(1);
      assertThat(result.bits().numBits())
          .isEqualTo(BloomFilterSizing.forKeys(declared, fpp).numBits());
    } else {
      assertThat(source.reads()).as("count or rebuild from the actual count").isEqualTo(2);
    }
  }

  @Test
  void emptySourceGivesAFilterThatContainsNothing() throws Exception {
    FilterBuilder.Result result =
        builder.build(
            new GeneratedSource("key-", 0),
            new FilterBuilder.Request(KeyType.STRING, 0.01, null, 0, Long.MAX_VALUE));
    assertThat(result.keys()).isZero();
    assertThat(result.bits().bitCount()).isZero();
    assertThat(result.bits().mightContainString("anything")).isFalse();
  }

  @Test
  void oversizedFilterIsRefusedBeforeAnyAllocation() {
    GeneratedSource source = new GeneratedSource("key-", 10);
    // 10^9 keys at 1% would need ~1.2 GB; 10^12 more than Guava's format can describe.
    assertThatThrownBy(
            () ->
                builder.build(
                    source,
                    new FilterBuilder.Request(KeyType.STRING, 0.01, 1_000_000_000L, 0, 256L << 20)))
        .isInstanceOf(FilterTooLargeException.class)
        .hasMessageContaining("more than the limit of 268,435,456 bytes");
    assertThatThrownBy(
            () ->
                builder.build(
                    source,
                    new FilterBuilder.Request(
                        KeyType.STRING, 0.01, 1_000_000_000_000L, 0, Long.MAX_VALUE)))
        .isInstanceOf(FilterTooLargeException.class);
    assertThat(source.reads()).as("sizing fails before the source is read").isZero();
  }

  /**
   * The reservation (a build slot in the operator) is asked for when the first key arrives: a
   * source still connecting or waiting for its first byte, and the counting pass, hold none.
   */
  @ParameterizedTest(name = "declared {0}")
  @CsvSource({",", "5", "2"}) // counted first; declared right; fewer declared (second fill)
  void reservationIsTakenAtTheFirstKeyAndOnlyOnce(Long declared) throws Exception {
    java.util.concurrent.atomic.AtomicInteger reservations =
        new java.util.concurrent.atomic.AtomicInteger();
    java.util.List<Integer> atFirstKey = new java.util.ArrayList<>();
    KeySource source =
        new KeySource() {
          @Override
          public String description() {
            return "recording";
          }

          @Override
          public String changeToken() {
            return null;
          }

          @Override
          public void readKeys(KeySink sink) throws SourceException {
            // What a stalled source would be waiting in: nothing delivered yet.
            atFirstKey.add(reservations.get());
            for (int i = 0; i < 5; i++) {
              sink.line("key-" + i);
            }
          }
        };
    FilterBuilder.Result result =
        builder.build(
            source,
            new FilterBuilder.Request(KeyType.STRING, 0.01, declared, 0, Long.MAX_VALUE),
            reservations::incrementAndGet);
    assertThat(result.keys()).isEqualTo(5);
    assertThat(reservations).hasValue(1);
    assertThat(atFirstKey.get(0)).as("first read: no reservation before a key").isZero();
    if (declared == null) {
      assertThat(atFirstKey).as("the counting pass took no reservation").containsExactly(0, 0);
    }
  }

  @Test
  void emptySourceReservesBeforeAllocatingItsArray() throws Exception {
    java.util.concurrent.atomic.AtomicInteger reservations =
        new java.util.concurrent.atomic.AtomicInteger();
    FilterBuilder.Result result =
        builder.build(
            new GeneratedSource("key-", 0),
            new FilterBuilder.Request(KeyType.STRING, 0.01, null, 0, Long.MAX_VALUE),
            reservations::incrementAndGet);
    assertThat(result.keys()).isZero();
    assertThat(reservations).hasValue(1);
  }

  @Test
  void interruptedReservationEndsTheBuild() {
    GeneratedSource source = new GeneratedSource("key-", 10);
    assertThatThrownBy(
            () ->
                builder.build(
                    source,
                    new FilterBuilder.Request(KeyType.STRING, 0.01, 10L, 0, Long.MAX_VALUE),
                    () -> {
                      throw new InterruptedException("operator stopping");
                    }))
        .isInstanceOf(InterruptedException.class)
        .hasMessage("operator stopping");
  }

  private static FilterBuilder.Request published(BloomFilterSizing geometry, long maxPayload) {
    return new FilterBuilder.Request(KeyType.STRING, 0.01, null, 0, maxPayload, geometry);
  }

  @Test
  void aPublishedSizeIsKeptWhileItHoldsTheKeysAndIsNotTwiceTooBig() {
    BloomFilterSizing before = BloomFilterSizing.forKeys(10_000, 0.01);
    for (long keys : new long[] {9_000, 10_000, 6_000}) {
      BloomFilterSizing kept = FilterBuilder.size(published(before, Long.MAX_VALUE), keys);
      assertThat(kept.numBits()).as("%d keys", keys).isEqualTo(before.numBits());
      assertThat(kept.numHashFunctions()).isEqualTo(before.numHashFunctions());
      assertThat(BloomFilterSizing.expectedFpp(kept.numBits(), kept.numHashFunctions(), keys))
          .isLessThanOrEqualTo(0.01);
    }
    // Under half its size is needed: shrunk to what the keys need.
    assertThat(FilterBuilder.size(published(before, Long.MAX_VALUE), 4_000))
        .isEqualTo(BloomFilterSizing.forKeys(4_000, 0.01));
    // Outgrown: resized with headroom, so the next bit of growth keeps it.
    BloomFilterSizing grown = FilterBuilder.size(published(before, Long.MAX_VALUE), 10_400);
    assertThat(grown).isEqualTo(BloomFilterSizing.forKeys(13_000, 0.01));
    assertThat(FilterBuilder.size(published(grown, Long.MAX_VALUE), 11_000).numBits())
        .isEqualTo(grown.numBits());
    // Headroom never makes a filter too large that fits without it.
    long exactPayload =
        SnapshotEncoder.HEADER_BYTES + BloomFilterSizing.forKeys(10_400, 0.01).numBits() / 8;
    assertThat(FilterBuilder.size(published(before, exactPayload), 10_400))
        .isEqualTo(BloomFilterSizing.forKeys(10_400, 0.01));
    // Without a published version: exactly what the keys need, as always.
    assertThat(FilterBuilder.size(published(null, Long.MAX_VALUE), 10_400))
        .isEqualTo(BloomFilterSizing.forKeys(10_400, 0.01));
  }

  @Test
  void alternatingCloseSizesResizesAtMostOnce() {
    // The isolation audit's churn: expectedInsertions alternated between two close values made
    // every publish a whole new snapshot.
    BloomFilterSizing current = FilterBuilder.size(published(null, Long.MAX_VALUE), 50_000_000);
    int resizes = 0;
    for (int round = 1; round <= 10; round++) {
      long keys = round % 2 == 0 ? 50_000_000 : 50_001_000;
      BloomFilterSizing next = FilterBuilder.size(published(current, Long.MAX_VALUE), keys);
      if (next.numBits() != current.numBits()
          || next.numHashFunctions() != current.numHashFunctions()) {
        resizes++;
      }
      current = next;
    }
    assertThat(resizes).isLessThanOrEqualTo(1);
  }
}
