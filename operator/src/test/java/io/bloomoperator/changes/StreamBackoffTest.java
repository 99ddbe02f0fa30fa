package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The wait between attempts of a failing stream. */
class StreamBackoffTest {

  private static final Instant T0 = Instant.parse("2026-12-02T22:00:00Z");
  private static final Duration EVERY = Duration.ofSeconds(2);

  @Test
  void theWaitDoublesFromPublishEveryUpToTheBoundAndEndsWithASuccess() {
    StreamBackoff backoff = new StreamBackoff(Duration.ofMinutes(5), millis -> millis);
    assertThat(backoff.waiting("f", T0)).isEmpty();
    Instant now = T0;
    long[] seconds = {2, 4, 8, 16, 32, 64, 128, 256, 300, 300};
    for (int i = 0; i < seconds.length; i++) {
      StreamBackoff.Failure failure =
          backoff.failed("f", EVERY, now, StreamException.Kind.UNAVAILABLE);
      assertThat(failure.inARow()).isEqualTo(i + 1);
      assertThat(failure.retryAt()).isEqualTo(now.plusSeconds(seconds[i]));
      assertThat(failure.firstOfItsKind()).isEqualTo(i == 0);
      assertThat(backoff.waiting("f", now.plusSeconds(seconds[i]).minusMillis(1)))
          .contains(failure.retryAt());
      assertThat(backoff.waiting("f", failure.retryAt())).isEmpty();
      assertThat(backoff.waiting("other", now)).as("per filter").isEmpty();
      now = failure.retryAt();
    }
    assertThat(backoff.succeeded("f")).isTrue();
    assertThat(backoff.succeeded("f")).isFalse();
    StreamBackoff.Failure again = backoff.failed("f", EVERY, now, StreamException.Kind.UNAVAILABLE);
    assertThat(again.inARow()).isEqualTo(1);
    assertThat(again.firstOfItsKind()).isTrue();
    assertThat(again.retryAt()).isEqualTo(now.plus(EVERY));
  }

  @Test
  void aFailureOfAnotherKindIsNewsAndTheSpreadIsWithinHalfToAllOfTheWait() {
    StreamBackoff backoff = new StreamBackoff(Duration.ofMinutes(5));
    backoff.failed("f", EVERY, T0, StreamException.Kind.UNAVAILABLE);
    assertThat(backoff.failed("f", EVERY, T0, StreamException.Kind.UNAVAILABLE).firstOfItsKind())
        .isFalse();
    assertThat(backoff.failed("f", EVERY, T0, StreamException.Kind.REFUSED).firstOfItsKind())
        .isTrue();
    for (int i = 0; i < 200; i++) {
      StreamBackoff spread = new StreamBackoff(Duration.ofMinutes(5));
      Instant retry =
          spread.failed("f", Duration.ofSeconds(8), T0, StreamException.Kind.UNAVAILABLE).retryAt();
      assertThat(Duration.between(T0, retry))
          .isBetween(Duration.ofSeconds(4), Duration.ofSeconds(8));
    }
    backoff.forget("f");
    assertThat(backoff.waiting("f", T0)).isEmpty();
  }
}
