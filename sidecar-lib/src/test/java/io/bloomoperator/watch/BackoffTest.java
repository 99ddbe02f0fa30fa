package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Test
  void capDoublesUpToMaxAndResets() {
    Backoff backoff = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), () -> 1.0);
    long[] expected = {1, 2, 4, 8, 16, 32, 60, 60};
    for (long seconds : expected) {
      assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(seconds));
    }
    backoff.reset();
    assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void fullJitterWaitsAUniformFractionOfTheCap() {
    double[] fractions = {0.0, 0.5, 0.25, 1.0};
    int[] next = {0};
    Backoff backoff =
        new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(4), () -> fractions[next[0]++]);
    assertThat(backoff.next()).isEqualTo(Duration.ZERO); // cap 1 s
    assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(1)); // half of 2 s
    assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(1)); // a quarter of 4 s
    assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(4)); // capped at max
  }

  @Test
  void readersFailingTogetherDoNotRetryInLockstep() {
    // Hundreds of pods see the API server restart at the same instant: their first retries must
    // spread over the whole first interval instead of landing on the same millisecond.
    java.util.Set<Long> delays = new java.util.HashSet<>();
    long sum = 0;
    for (int pod = 0; pod < 500; pod++) {
      long millis = new Backoff(Duration.ofSeconds(8), Duration.ofSeconds(60)).next().toMillis();
      assertThat(millis).isBetween(0L, 8_000L);
      delays.add(millis / 100);
      sum += millis;
    }
    assertThat(delays).hasSizeGreaterThan(60); // of 80 buckets of 100 ms
    assertThat(sum / 500).isBetween(3_000L, 5_000L); // uniform: mean near 4 s
  }

  @Test
  void rejectsNonsense() {
    assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
