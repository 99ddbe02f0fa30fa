package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class BackoffTest {

  @Test
  void doublesUpToMaxAndResets() {
    Backoff backoff = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60));
    long[] expected = {1, 2, 4, 8, 16, 32, 60, 60};
    for (long seconds : expected) {
      assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(seconds));
    }
    backoff.reset();
    assertThat(backoff.next()).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void rejectsNonsense() {
    assertThatThrownBy(() -> new Backoff(Duration.ZERO, Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
