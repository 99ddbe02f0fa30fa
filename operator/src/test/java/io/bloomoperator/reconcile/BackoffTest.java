package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class BackoffTest {

  private static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");

  private static Optional<Condition> failingSince(Duration ago) {
    return Optional.of(new ConditionBuilder().withType("Ready").withStatus("False")
        .withLastTransitionTime(NOW.minus(ago).toString()).build());
  }

  @Test
  void startsAtTwoSecondsGrowsWithTheFailureAndCapsAtFiveMinutes() {
    assertThat(BloomFilterReconciler.backoff(Optional.empty(), NOW))
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(BloomFilterReconciler.backoff(failingSince(Duration.ofSeconds(1)), NOW))
        .isEqualTo(Duration.ofSeconds(2));
    assertThat(BloomFilterReconciler.backoff(failingSince(Duration.ofSeconds(40)), NOW))
        .isEqualTo(Duration.ofSeconds(40));
    assertThat(BloomFilterReconciler.backoff(failingSince(Duration.ofHours(3)), NOW))
        .isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void aReadyResourceThatStartsFailingRetriesQuickly() {
    Optional<Condition> ready = Optional.of(new ConditionBuilder().withType("Ready")
        .withStatus("True").withLastTransitionTime(NOW.minus(Duration.ofDays(1)).toString())
        .build());
    assertThat(BloomFilterReconciler.backoff(ready, NOW)).isEqualTo(Duration.ofSeconds(2));
  }
}
