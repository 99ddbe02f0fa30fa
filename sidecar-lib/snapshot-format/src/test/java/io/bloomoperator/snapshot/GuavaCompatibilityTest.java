package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Our filter, its payload and its answers must be indistinguishable from Guava's. */
class GuavaCompatibilityTest {

  @ParameterizedTest(name = "{0} keys at fpp {1}")
  @CsvSource({"1, 0.5", "10, 0.01", "1000, 0.01", "5000, 0.001", "20000, 0.03", "3000, 0.000001"})
  void stringPayloadIsByteForByteGuavaWriteTo(int keys, double fpp) {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(keys, fpp));
    BloomFilter<CharSequence> guava =
        GuavaOracle.emptyGuavaLike(builder, GuavaOracle.STRING_FUNNEL);
    Random random = new Random(keys);
    List<String> all = new ArrayList<>(List.of(GuavaOracle.specialStrings()));
    for (int i = 0; i < keys; i++) {
      all.add(GuavaOracle.randomString(random));
    }
    for (String key : all) {
      assertThat(builder.putString(key)).as("put(%s) changed bits", key).isEqualTo(guava.put(key));
    }
    BloomFilterBits ours = builder.build();
    byte[] payload = SnapshotEncoder.toByteArray(ours);
    assertThat(payload).isEqualTo(GuavaOracle.writeTo(guava));
    assertThat(GuavaOracle.readFrom(payload, GuavaOracle.STRING_FUNNEL)).isEqualTo(guava);
    assertThat(ours.bitCount()).isPositive();
  }

  @ParameterizedTest(name = "{0} keys at fpp {1}")
  @CsvSource({"1, 0.5", "10, 0.01", "1000, 0.01", "5000, 0.001", "20000, 0.03"})
  void longPayloadIsByteForByteGuavaWriteTo(int keys, double fpp) {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(keys, fpp));
    BloomFilter<Long> guava = GuavaOracle.emptyGuavaLike(builder, GuavaOracle.LONG_FUNNEL);
    Random random = new Random(keys);
    List<Long> all =
        new ArrayList<>(
            List.of(
                0L,
                -1L,
                1L,
                Long.MIN_VALUE,
                Long.MAX_VALUE,
                (long) Integer.MIN_VALUE,
                (long) Integer.MAX_VALUE));
    for (int i = 0; i < keys; i++) {
      all.add(GuavaOracle.randomLong(random));
    }
    for (long key : all) {
      assertThat(builder.putLong(key)).as("put(%d) changed bits", key).isEqualTo(guava.put(key));
    }
    BloomFilterBits ours = builder.build();
    byte[] payload = SnapshotEncoder.toByteArray(ours);
    assertThat(payload).isEqualTo(GuavaOracle.writeTo(guava));
    assertThat(GuavaOracle.readFrom(payload, GuavaOracle.LONG_FUNNEL)).isEqualTo(guava);
  }

  @Test
  void oddSizedSaturatedFiltersStillMatch() {
    // Tiny, non-power-of-two bit sizes and large k: stresses the modulo and the combined-hash
    // overflow.
    Random random = new Random(7);
    for (int numLongs : new int[] {1, 2, 3, 5, 7, 13}) {
      for (int k : new int[] {1, 2, 7, 31, 255}) {
        BloomFilterBits.Builder builder =
            BloomFilterBits.builder(KeyType.STRING, numLongs * 64L, k);
        BloomFilter<CharSequence> guava =
            GuavaOracle.emptyGuava(numLongs, k, GuavaOracle.STRING_FUNNEL);
        for (int i = 0; i < numLongs * 3; i++) {
          String key = GuavaOracle.randomString(random);
          builder.putString(key);
          guava.put(key);
        }
        BloomFilterBits ours = builder.build();
        assertThat(SnapshotEncoder.toByteArray(ours)).isEqualTo(GuavaOracle.writeTo(guava));
        for (int i = 0; i < 2000; i++) {
          String probe = GuavaOracle.randomString(random);
          assertThat(ours.mightContainString(probe)).isEqualTo(guava.mightContain(probe));
        }
      }
    }
  }

  @Test
  void millionStringLookupsAgreeWithGuava() {
    int n = 1_000_000;
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(n, 0.01));
    BloomFilter<CharSequence> guava =
        GuavaOracle.emptyGuavaLike(builder, GuavaOracle.STRING_FUNNEL);
    Random random = new Random(11);
    Set<String> present = new HashSet<>();
    String[] keys = new String[n];
    for (int i = 0; i < n; i++) {
      keys[i] = i % 4 == 0 ? GuavaOracle.randomString(random) : "user-" + random.nextLong();
      present.add(keys[i]);
      builder.putString(keys[i]);
      guava.put(keys[i]);
    }
    BloomFilterBits ours = builder.build();
    assertThat(SnapshotEncoder.toByteArray(ours)).isEqualTo(GuavaOracle.writeTo(guava));

    for (String key : keys) {
      assertThat(ours.mightContainString(key)).isTrue();
    }
    int falsePositives = 0;
    for (int i = 0; i < n; i++) {
      String probe = i % 4 == 0 ? GuavaOracle.randomString(random) : "user-" + random.nextLong();
      boolean answer = ours.mightContainString(probe);
      if (answer != guava.mightContain(probe)) {
        throw new AssertionError("lookup of '" + probe + "' differs from Guava: ours " + answer);
      }
      if (answer && !present.contains(probe)) {
        falsePositives++;
      }
    }
    // Sanity: a filter that answered "true" to everything would agree with a broken oracle too.
    assertThat(falsePositives).isBetween(1, (int) (n * 0.015));
  }

  @Test
  void millionLongLookupsAgreeWithGuava() {
    int n = 1_000_000;
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(n, 0.01));
    BloomFilter<Long> guava = GuavaOracle.emptyGuavaLike(builder, GuavaOracle.LONG_FUNNEL);
    Random random = new Random(12);
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = i % 2 == 0 ? random.nextLong() : i * 2L - n; // random and dense, negatives included
      builder.putLong(keys[i]);
      guava.put(keys[i]);
    }
    BloomFilterBits ours = builder.build();
    assertThat(SnapshotEncoder.toByteArray(ours)).isEqualTo(GuavaOracle.writeTo(guava));
    for (long key : keys) {
      assertThat(ours.mightContainLong(key)).isTrue();
    }
    int positives = 0;
    for (int i = 0; i < n; i++) {
      long probe = i % 2 == 0 ? random.nextLong() : i * 2L - n + 1; // odd: never inserted densely
      boolean answer = ours.mightContainLong(probe);
      if (answer != guava.mightContain(probe)) {
        throw new AssertionError("lookup of " + probe + " differs from Guava: ours " + answer);
      }
      positives += answer ? 1 : 0;
    }
    assertThat(positives).isBetween(1, (int) (n * 0.015));
  }
}
