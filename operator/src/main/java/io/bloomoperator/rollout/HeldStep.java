package io.bloomoperator.rollout;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.run.RunState;
import io.bloomoperator.run.Step;
import java.time.Duration;
import java.util.Optional;

/**
 * The held step: when the schedule says build but the build held in the status still stands for the
 * source ({@link RolloutGate#heldIsCurrent}), reading the source again would only hold the same
 * content; the reconcile ends with the held outcome instead. {@link #outcome} is also how the build
 * step reports a build it just held.
 */
public final class HeldStep implements Step {

  @Override
  public Next apply(FilterRun run, RunState state) {
    BloomFilter filter = run.filter();
    if (state.decision().action() != Decision.Action.BUILD
        || !state.hasManifest()
        || !RolloutGate.heldIsCurrent(
            filter,
            state.token(),
            run.spec().refresh(),
            run.now(),
            RebuildRequest.pending(filter))) {
      return Next.go(state);
    }
    run.report().published(state.current());
    return Next.done(outcome(run, state, run.report().held()));
  }

  /**
   * The outcome of a reconcile whose build the rollout controls hold: Ready stays True while paused
   * or pinned (readers serve what the author chose), False for a dropped key count or a halted
   * canary's content (the source needs a look, and an approval); one event per newly held content.
   */
  public static Outcome outcome(FilterRun run, RunState state, HeldBuild held) {
    BloomFilter filter = run.filter();
    HeldBuild before = filter.getStatus() == null ? null : filter.getStatus().getHeld();
    boolean fresh = before == null || !String.valueOf(held.getSha256()).equals(before.getSha256());
    String note =
        "; a build of "
            + held.getKeys()
            + " keys (sha256 "
            + abbreviate(held.getSha256())
            + ") is held: "
            + why(held);
    Optional<Duration> next = state.nextCheck(run, RolloutGate.builtAt(held));
    if (Reasons.KEY_COUNT_DROPPED.equals(held.getReason())
        || Reasons.CANARY_HALTED.equals(held.getReason())) {
      return new Outcome.Failed(
          held.getReason(),
          "version " + state.current().manifest().version() + " keeps serving" + note,
          false,
          next);
    }
    if (fresh) {
      run.events().normal(filter, held.getReason(), "version kept serving" + note);
    }
    return new Outcome.Ready(held.getReason(), note, next);
  }

  private static String why(HeldBuild held) {
    return switch (held.getReason()) {
      case Reasons.ROLLOUT_PAUSED -> "spec.rollout.paused";
      case Reasons.ROLLOUT_PINNED -> "spec.rollout.pinVersion";
      case Reasons.CANARY_HALTED ->
          "it is the content of the halted canary, held until the source changes";
      case Reasons.CANARY_ABORTED ->
          "it is the content of the aborted canary, held until the source changes";
      default ->
          "its key count is more than spec.rollout.maxKeyCountDropPercent below "
              + held.getPublishedKeys()
              + "; approve with `kubectl bloom approve`";
    };
  }

  private static String abbreviate(String sha256) {
    return sha256 == null || sha256.length() < 12
        ? String.valueOf(sha256)
        : sha256.substring(0, 12);
  }
}
