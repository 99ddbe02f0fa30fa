package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StatusBudgetTest {

  private static final Instant T0 = Instant.parse("2026-12-02T12:00:00Z");

  /** 40,000 B an hour per namespace and per filter: a quarter, 10,000 B, for deferrable writes. */
  private final WriteBudget budget = new WriteBudget(new WriteBudget.Limits(40_000, 40_000, 4));

  private final StatusBudget status = new StatusBudget(budget);

  @Test
  void aDeferrableWriteIsChargedTheWholeObject() {
    BloomFilter filter = filter("f", 1000, "1");
    long bytes = StatusBudget.storedBytes(filter);
    assertThat(bytes).isGreaterThan(1000 + WriteBudget.Limits.OBJECT_OVERHEAD_BYTES);

    assertThat(status.deferrable(filter, T0)).isTrue();
    assertThat(budget.writtenByNamespace("ns", T0)).isEqualTo(bytes);
  }

  @Test
  void oneFiltersDeferrableWritesAreSpacedByTheirSize() {
    BloomFilter filter = filter("f", 1000, "1");
    long bytes = StatusBudget.storedBytes(filter);
    // A quarter of 40,000 B an hour: an object of `bytes` may be written every bytes/10,000 h.
    Duration spacing = Duration.ofMillis(bytes * 3_600_000 / 10_000);
    assertThat(status.spacing(bytes)).isEqualTo(spacing);

    assertThat(status.deferrable(filter, T0)).isTrue();
    assertThat(status.deferrable(filter, T0.plusSeconds(5))).isFalse();
    assertThat(status.deferrable(filter, T0.plus(spacing).minusMillis(1))).isFalse();
    assertThat(status.deferrable(filter, T0.plus(spacing))).isTrue();
    // Another filter is not held back by this one's spacing.
    assertThat(status.deferrable(filter("g", 1000, "1"), T0.plusSeconds(5))).isTrue();
  }

  @Test
  void deferrableWritesGetAQuarterOfTheNamespacesBudget() {
    long used = 0;
    int written = 0;
    for (int i = 0; i < 20; i++) {
      BloomFilter filter = filter("f" + i, 1000, "1");
      if (status.deferrable(filter, T0)) {
        used += StatusBudget.storedBytes(filter);
        written++;
      }
    }
    assertThat(used).isLessThanOrEqualTo(10_000);
    assertThat(written).isPositive();
    assertThat(budget.writtenByNamespace("ns", T0)).isEqualTo(used);
    // The rest is left to publishes.
    assertThat(budget.charge("ns", "f0", 40_000 - used, T0)).isEmpty();
  }

  @Test
  void anObjectLargerThanTheShareIsNeverWrittenAndCostsNothing() {
    BloomFilter large = filter("f", 12_000, "1");
    assertThat(status.deferrable(large, T0)).isFalse();
    assertThat(status.deferrable(large, T0.plus(Duration.ofMinutes(59)))).isFalse();
    assertThat(budget.writtenByNamespace("ns", T0)).isZero();
  }

  @Test
  void deferrableWritesYieldToWhatWasWrittenAnyway() {
    BloomFilter before = filter("f", 1000, "1");
    // Outcomes are written whatever the budget says; they leave no room for what can wait.
    status.written(before, filter("f", 39_000, "2"), T0);
    assertThat(budget.writtenByNamespace("ns", T0)).isGreaterThan(40_000);
    assertThat(status.deferrable(before, T0)).isFalse();
    assertThat(budget.exhausted("ns", "g", T0)).isPresent();
  }

  @Test
  void aWriteThatStoredNothingIsNotCharged() {
    BloomFilter before = filter("f", 1000, "1");
    status.written(before, filter("f", 1000, "1"), T0);
    status.written(before, null, T0);
    assertThat(budget.writtenByNamespace("ns", T0)).isZero();
    status.written(before, filter("f", 1000, "2"), T0);
    assertThat(budget.writtenByNamespace("ns", T0)).isEqualTo(StatusBudget.storedBytes(before));
  }

  @Test
  void escapedCharactersCountAsTheApiServerStoresThem() {
    long plain = StatusBudget.storedBytes(filter("f", 1000, "1", 'a'));
    // Go's encoding/json writes <, > and & as \\u003c: 6 bytes each.
    assertThat(StatusBudget.storedBytes(filter("f", 1000, "1", '<'))).isEqualTo(plain + 5 * 1000);
    assertThat(StatusBudget.storedBytes(filter("f", 1000, "1", '\u0001')))
        .isEqualTo(plain + 5 * 1000);
    assertThat(StatusBudget.storedBytes(filter("f", 1000, "1", '\u2028')))
        .isEqualTo(plain + 5 * 1000);
    assertThat(StatusBudget.storedBytes(filter("f", 1000, "1", '\u00e9'))).isEqualTo(plain + 1000);
  }

  private static BloomFilter filter(String name, int annotationChars, String resourceVersion) {
    return filter(name, annotationChars, resourceVersion, 'a');
  }

  private static BloomFilter filter(
      String name, int annotationChars, String resourceVersion, char fill) {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(
        new ObjectMetaBuilder()
            .withNamespace("ns")
            .withName(name)
            .withResourceVersion(resourceVersion)
            .withAnnotations(Map.of("pad", String.valueOf(fill).repeat(annotationChars)))
            .build());
    return filter;
  }
}
