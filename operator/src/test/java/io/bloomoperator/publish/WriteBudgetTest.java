package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class WriteBudgetTest {

  private static final Instant T0 = Instant.parse("2026-12-01T12:00:00Z");

  private final WriteBudget budget = new WriteBudget(new WriteBudget.Limits(1000, 600, 4));

  @Test
  void chargesWhileTheFilterAndTheNamespaceHaveRoom() {
    assertThat(budget.charge("a", "f", 600, T0)).isEmpty();
    assertThat(budget.writtenByNamespace("a", T0)).isEqualTo(600);
    // The filter's 600 are spent, the namespace has 400 left for its other filters.
    assertThat(budget.charge("a", "f", 1, T0)).get().extracting(r -> r.scope()).isEqualTo("filter");
    assertThat(budget.charge("a", "g", 400, T0)).isEmpty();
    var refused = budget.charge("a", "h", 1, T0);
    assertThat(refused).get().extracting(r -> r.scope()).isEqualTo("namespace a");
    assertThat(refused.get().used()).isEqualTo(1000);
    assertThat(budget.writtenByNamespace("a", T0)).isEqualTo(1000);
  }

  @Test
  void namespacesDoNotShareABudget() {
    assertThat(budget.charge("a", "f", 600, T0)).isEmpty();
    assertThat(budget.charge("a", "g", 400, T0)).isEmpty();
    assertThat(budget.charge("b", "f", 600, T0)).isEmpty();
  }

  @Test
  void aRefusalSaysWhenTheWriteFitsAndItDoesThen() {
    budget.charge("a", "f", 300, T0);
    budget.charge("a", "f", 300, T0.plus(Duration.ofMinutes(20)));
    Instant now = T0.plus(Duration.ofMinutes(30));
    var refused = budget.charge("a", "f", 200, now);
    // 600 of 600 used; 200 fit once the first 300 leave the hour, at minute 60.
    assertThat(refused).get().extracting(r -> r.fitsAt()).isEqualTo(T0.plus(Duration.ofHours(1)));
    assertThat(budget.charge("a", "f", 200, T0.plus(Duration.ofMinutes(59)))).isPresent();
    assertThat(budget.charge("a", "f", 200, T0.plus(Duration.ofHours(1)))).isEmpty();
  }

  @Test
  void aWriteLargerThanTheBudgetNeverFits() {
    var refused = budget.charge("a", "f", 601, T0);
    assertThat(refused).get().extracting(r -> r.fitsAt()).isNull();
    assertThat(budget.writtenByNamespace("a", T0)).isZero();
  }

  @Test
  void exhaustedOnlyWhenNotEvenOneByteFits() {
    assertThat(budget.exhausted("a", "f", T0)).isEmpty();
    budget.charge("a", "f", 599, T0);
    assertThat(budget.exhausted("a", "f", T0)).isEmpty();
    budget.charge("a", "f", 1, T0);
    assertThat(budget.exhausted("a", "f", T0)).isPresent();
    assertThat(budget.exhausted("a", "f", T0.plus(Duration.ofHours(1)))).isEmpty();
  }

  @Test
  void theHourSlidesMinuteByMinute() {
    for (int minute = 0; minute < 120; minute++) {
      Instant now = T0.plus(Duration.ofMinutes(minute));
      assertThat(budget.charge("a", "f", 10, now)).as("minute %d", minute).isEmpty();
      assertThat(budget.writtenByNamespace("a", now)).isEqualTo(10L * Math.min(minute + 1, 60));
    }
  }

  @Test
  void smallChunksAreRaisedSoAVersionHasBoundedObjects() {
    // At most 4 chunks per version here.
    assertThat(budget.chunkSize(1024, 4096, 1_000_000)).isEqualTo(1024);
    assertThat(budget.chunkSize(1024, 4097, 1_000_000)).isEqualTo(1025);
    assertThat(budget.chunkSize(1024, 64L * 1024 * 1024, 1_000_000)).isEqualTo(1_000_000);
    assertThat(budget.chunkSize(500_000, 100, 1_000_000)).isEqualTo(500_000);
  }

  @Test
  void everyObjectCostsItsOverhead() {
    assertThat(WriteBudget.Limits.cost(1000, 3))
        .isEqualTo(1000 + 3 * WriteBudget.Limits.OBJECT_OVERHEAD_BYTES);
  }
}
