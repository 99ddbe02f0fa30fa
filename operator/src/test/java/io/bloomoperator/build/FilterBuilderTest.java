package io.bloomoperator.build;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.GeneratedSource;
import io.bloomoperator.source.SourceException;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FilterBuilderTest {

  private final FilterBuilder builder = new FilterBuilder();

  @ParameterizedTest(name = "{0} keys declared as {1} at {2}")
  @CsvSource({
      "10000, , 0.01",       // no expectedInsertions: counted first
      "10000, 100, 0.01",    // far more keys than declared
      "10000, 9999, 0.001",  // one more than declared
      "10000, 50000, 0.01",  // fewer than declared: declared size is kept
      "1, , 0.5"})
  void neverSaturates(long keys, Long declared, double fpp) throws SourceException {
    GeneratedSource source = new GeneratedSource("key-", keys);
    FilterBuilder.Result result = builder.build(source,
        new FilterBuilder.Request(KeyType.STRING, fpp, declared, 0));

    assertThat(result.keys()).isEqualTo(keys);
    double expected = BloomFilterSizing.expectedFpp(result.bits().numBits(),
        result.bits().numHashFunctions(), keys);
    assertThat(expected).isLessThanOrEqualTo(fpp);
    assertThat(LongStream.range(0, keys).mapToObj(i -> "key-" + i))
        .allMatch(result.bits()::mightContainString);
    if (declared != null && declared >= keys) {
      assertThat(source.reads()).as("one pass when the declaration holds").isEqualTo(1);
      assertThat(result.bits().numBits()).isEqualTo(
          BloomFilterSizing.forKeys(declared, fpp).numBits());
    } else {
      assertThat(source.reads()).as("count or rebuild from the actual count").isEqualTo(2);
    }
  }

  @Test
  void emptySourceGivesAFilterThatContainsNothing() throws SourceException {
    FilterBuilder.Result result = builder.build(new GeneratedSource("key-", 0),
        new FilterBuilder.Request(KeyType.STRING, 0.01, null, 0));
    assertThat(result.keys()).isZero();
    assertThat(result.bits().bitCount()).isZero();
    assertThat(result.bits().mightContainString("anything")).isFalse();
  }
}
