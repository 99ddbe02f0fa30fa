package io.bloomoperator.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DurationsTest {

  @ParameterizedTest
  @CsvSource({
    "500ms, 500",
    "30s, 30000",
    "10m, 600000",
    "1h30m, 5400000",
    "1.5h, 5400000",
    "2m3s, 123000"
  })
  void parsesGoDurations(String text, long millis) {
    assertThat(Durations.parse(text)).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "10", "ten minutes", "5d", "m", "0s", "1h 30m"})
  void rejectsAnythingElse(String text) {
    assertThatThrownBy(() -> Durations.parse(text)).isInstanceOf(IllegalArgumentException.class);
  }

  /** spec.changes.overlap: 0s means no overlap (the CRD admits it), not a malformed value. */
  @ParameterizedTest
  @CsvSource({"0s, 0", "0m, 0", "30s, 30000"})
  void zeroWhereZeroMeansSomething(String text, long millis) {
    assertThat(Durations.parseAllowingZero(text)).isEqualTo(Duration.ofMillis(millis));
    ChangesSpec changes = new ChangesSpec();
    changes.setOverlap(text);
    assertThat(changes.overlapInterval()).isEqualTo(Duration.ofMillis(millis));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "-1s", "5d"})
  void zeroAllowedButNothingMalformed(String text) {
    assertThatThrownBy(() -> Durations.parseAllowingZero(text))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
