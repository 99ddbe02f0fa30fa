package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The estimator on hand-computed cases, including where it is zero or unknown. */
class FalsePositiveObservationTest {

  @Test
  void everyAnswerReportedGivesFalsePositivesOverAbsentLookups() {
    // 1,000 lookups: 900 definitely absent, 100 maybe present of which 30 were not in the store.
    FalsePositiveObservation observed = new FalsePositiveObservation(1, 1_000, 100, 70, 30);
    assertThat(observed.definitelyAbsent()).isEqualTo(900);
    assertThat(observed.rate()).isEqualTo(30.0 / 930);
  }

  @Test
  void aSampleIsScaledUpToAllMaybePresentAnswers() {
    // 10 of the 100 maybe-present answers reported, 3 of them false: FP^ = 100 * 3 / 10 = 30.
    FalsePositiveObservation observed = new FalsePositiveObservation(1, 1_000, 100, 7, 3);
    assertThat(observed.rate()).isCloseTo(30.0 / 930, within(1e-15));
  }

  @Test
  void noMaybePresentAnswerMeansNoFalsePositive() {
    assertThat(new FalsePositiveObservation(1, 500, 0, 0, 0).rate()).isZero();
  }

  @Test
  void unreportedMaybePresentAnswersOrNoLookupsAreUnknown() {
    assertThat(new FalsePositiveObservation(1, 500, 5, 0, 0).rate()).isNaN();
    assertThat(new FalsePositiveObservation(1, 0, 0, 0, 0).rate()).isNaN();
  }

  @Test
  void onlyPresentKeysLookedUpLeavesTheRateUnknown() {
    // Every lookup was of a present key and reported as found: no absent key, so no rate.
    assertThat(new FalsePositiveObservation(1, 10, 10, 10, 0).rate()).isNaN();
  }
}
