package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.KeyType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The test double: a LiveBloomFilter from keys, ready at once, no cluster and no thread. */
class FixedLiveBloomFilterTest {

  @Test
  void answersTrueForEveryKeyAndFalseForOthers() {
    List<Long> keys = LongStream.range(0, 10_000).map(i -> i * 7).boxed().toList();
    LiveBloomFilter<Long> filter = LiveBloomFilter.fixed("product-ids", LiveKeyType.LONG, keys);

    assertThat(keys).allMatch(filter::mightContain);
    // 10,000 other keys at a rate of 1e-9: a false positive here would mean the sizing is wrong.
    assertThat(LongStream.range(0, 10_000).map(i -> i * 7 + 1).boxed())
        .noneMatch(filter::mightContain);
    assertThat(filter.lookups()).isEqualTo(20_000);
    assertThat(filter.maybePresent()).isEqualTo(10_000);
  }

  @Test
  void batchLookupsAnswerAsSingleOnesAndCountAsThem() {
    List<Long> keys = LongStream.range(0, 1000).map(i -> i * 7).boxed().toList();
    LiveBloomFilter<Long> longs = LiveBloomFilter.fixed("ids", LiveKeyType.LONG, keys);
    Long[] boxed = LongStream.range(0, 2001).boxed().toArray(Long[]::new);
    long[] primitive = LongStream.range(0, 2001).toArray();
    boolean[] fromBoxed = new boolean[2000];
    boolean[] fromPrimitive = new boolean[2000];

    assertThat(longs.mightContainAll(boxed, 1, 2000, fromBoxed)).isEqualTo(285); // 7, 14, ..., 1995
    assertThat(longs.mightContainAllLongs(primitive, 1, 2000, fromPrimitive)).isEqualTo(285);
    for (int i = 0; i < 2000; i++) {
      assertThat(fromBoxed[i]).isEqualTo((i + 1) % 7 == 0);
      assertThat(fromPrimitive[i]).isEqualTo(fromBoxed[i]);
    }
    assertThat(longs.lookups()).isEqualTo(4000);
    assertThat(longs.maybePresent()).isEqualTo(570);

    LiveBloomFilter<String> strings =
        LiveBloomFilter.fixed("ids", LiveKeyType.STRING, List.of("a", "b", "c"));
    boolean[] results = new boolean[5];
    assertThat(strings.mightContainAll(new String[] {"a", "x", "b", "y", "c"}, 0, 5, results))
        .isEqualTo(3);
    assertThat(results).containsExactly(true, false, true, false, true);
    assertThatThrownBy(() -> strings.mightContainAll(new String[] {"a", null}, 0, 2, results))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> strings.mightContainAll(new String[] {"a"}, 0, 2, results))
        .isInstanceOf(IndexOutOfBoundsException.class);
    @SuppressWarnings({"unchecked", "rawtypes"})
    LiveBloomFilter<Long> wrongType = (LiveBloomFilter) strings;
    assertThatThrownBy(() -> wrongType.mightContainAllLongs(new long[1], 0, 1, results))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void isReadyAtOnceWithOneVersionAndAManifestDescribingIt() {
    LiveBloomFilter<String> filter =
        LiveBloomFilter.fixed("ids", LiveKeyType.STRING, List.of("a", "b", "c"));

    assertThat(filter.isReady()).isTrue();
    assertThat(filter.awaitReady(Duration.ZERO)).isTrue();
    assertThat(filter.currentVersion()).isEqualTo(1);
    assertThat(filter.loads()).isEqualTo(1);
    assertThat(filter.failures()).isZero();
    assertThat(filter.lastFailure()).isEmpty();
    assertThat(filter.filterName()).isEqualTo("ids");
    assertThat(filter.namespace()).isEmpty();
    assertThat(filter.keyType()).isSameAs(LiveKeyType.STRING);
    assertThat(filter.currentManifest())
        .hasValueSatisfying(
            manifest -> {
              assertThat(manifest.keyCount()).isEqualTo(3);
              assertThat(manifest.keyType()).isEqualTo(KeyType.STRING);
              assertThat(manifest.expectedFpp()).isLessThanOrEqualTo(LiveBloomFilter.FIXED_FPP);
            });
    assertThat(filter.snapshotAge()).isPresent();

    filter.close(); // nothing to stop; keeps answering
    assertThat(filter.mightContain("a")).isTrue();
  }

  @Test
  void outcomesAreCountedAgainstTheFixedVersion() {
    LiveBloomFilter<String> filter = LiveBloomFilter.fixed("ids", LiveKeyType.STRING, List.of("a"));
    assertThat(filter.mightContain("a")).isTrue();
    filter.recordOutcome("a", true);

    FalsePositiveObservation observed = filter.observedFalsePositives();
    assertThat(observed.version()).isEqualTo(1);
    assertThat(observed.lookups()).isEqualTo(1);
    assertThat(observed.truePositives()).isEqualTo(1);
  }

  @Test
  void anEmptyKeySetAnswersFalseForEverything() {
    LiveBloomFilter<String> filter = LiveBloomFilter.fixed("none", LiveKeyType.STRING, List.of());
    assertThat(filter.isReady()).isTrue();
    assertThat(filter.mightContain("a")).isFalse();
  }

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void nullsAndKeysOfTheWrongTypeAreRefused() {
    assertThatThrownBy(
            () -> LiveBloomFilter.fixed("ids", LiveKeyType.STRING, Arrays.asList("a", null)))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> LiveBloomFilter.fixed(null, LiveKeyType.STRING, List.of()))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> LiveBloomFilter.fixed("ids", LiveKeyType.STRING, null))
        .isInstanceOf(NullPointerException.class);
    List raw = new ArrayList<>(List.of(1.5d));
    assertThatThrownBy(() -> LiveBloomFilter.fixed("ids", (LiveKeyType) LiveKeyType.LONG, raw))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
