package io.bloomoperator.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.readers.CanaryJudgement;
import io.bloomoperator.rollout.RolloutMachine.Canary;
import io.bloomoperator.rollout.RolloutMachine.Transition;
import io.bloomoperator.snapshot.LoadFailureReason;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The rollout's transitions as a table: what is announced, recorded, set and judged → what next.
 */
class RolloutMachineTest {

  private static final CanaryJudgement.Decision WAIT = new CanaryJudgement.Decision.Wait(3, 1);
  private static final CanaryJudgement.Decision PROMOTE = new CanaryJudgement.Decision.Promote(3);
  private static final CanaryJudgement.Decision HALT =
      new CanaryJudgement.Decision.Halt(LoadFailureReason.values()[0], 1);

  /** announced, recorded, pinned, paused, abort, promote, judged → transition, judged asked. */
  static Stream<Arguments> table() {
    return Stream.of(
        row(false, false, false, false, null, null, PROMOTE, Transition.NONE, false),
        row(false, true, true, true, "7", "7", HALT, Transition.NONE, false),
        row(true, false, false, false, null, "7", PROMOTE, Transition.WITHDRAW_FOREIGN, false),
        row(true, false, true, false, "7", null, WAIT, Transition.WITHDRAW_FOREIGN, false),
        row(true, true, true, false, null, "7", PROMOTE, Transition.WITHDRAW_FOR_PIN, false),
        row(true, true, false, false, "7", "7", PROMOTE, Transition.ABORT, false),
        row(true, true, false, false, "6", null, WAIT, Transition.WAIT, true),
        row(true, true, false, false, null, "7", HALT, Transition.PROMOTE_BY_HAND, false),
        row(true, true, false, false, null, "8", HALT, Transition.HALT, true),
        row(true, true, false, true, null, null, HALT, Transition.HALT, true),
        row(true, true, false, false, null, null, PROMOTE, Transition.PROMOTE, true),
        row(true, true, false, true, null, null, PROMOTE, Transition.WAIT, true),
        row(true, true, false, false, null, null, WAIT, Transition.WAIT, true));
  }

  private static Arguments row(
      boolean announced,
      boolean recorded,
      boolean pinned,
      boolean paused,
      String abort,
      String promote,
      CanaryJudgement.Decision judged,
      Transition expected,
      boolean asked) {
    return Arguments.of(
        new Canary(announced, recorded, 7, pinned, paused, abort, promote),
        judged,
        expected,
        asked);
  }

  @ParameterizedTest
  @MethodSource("table")
  void transition(
      Canary canary, CanaryJudgement.Decision judged, Transition expected, boolean asked) {
    AtomicInteger calls = new AtomicInteger();
    Supplier<CanaryJudgement.Decision> judge =
        () -> {
          calls.incrementAndGet();
          return judged;
        };
    assertThat(RolloutMachine.next(canary, judge)).isEqualTo(expected);
    // The readers' reports are counted only when nothing else decides.
    assertThat(calls.get()).isEqualTo(asked ? 1 : 0);
  }
}
