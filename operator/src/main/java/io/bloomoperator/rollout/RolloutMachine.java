package io.bloomoperator.rollout;

import io.bloomoperator.readers.CanaryJudgement;
import java.util.function.Supplier;

/**
 * The rollout as one pure state machine: from what is announced and recorded (the canary in the
 * manifest ConfigMap, the operator's record in status.canary), the spec (pin, pause) and the
 * annotations (promote, abort), the transition a reconcile carries out. The readers' judgement is
 * asked only when nothing else decides (it counts reports). Tested as a table, like {@code
 * run.Decision} and the readers' {@code Acceptance}.
 */
public final class RolloutMachine {

  private RolloutMachine() {}

  /** Where a filter's rollout stands. */
  public enum State {
    /** One version serves every reader. */
    STABLE,
    /** A canary is announced to a share of the readers. */
    CANARY
  }

  /** What a reconcile does to the rollout. */
  public enum Transition {
    /** No canary announced: go on (a record of a running one is over). */
    NONE,
    /** The announced canary is not the one recorded: withdraw it, never promote it. */
    WITHDRAW_FOREIGN,
    /** A pin was set while the canary ran: withdraw it, the pin decides. */
    WITHDRAW_FOR_PIN,
    /** Aborted by hand (the abort annotation names its version). */
    ABORT,
    /** Promoted by hand (the promote annotation names its version). */
    PROMOTE_BY_HAND,
    /** Readers of its share failed to load it. */
    HALT,
    /** Served by every reader of its share for its hold time, and not paused. */
    PROMOTE,
    /** Judge again later. */
    WAIT
  }

  /**
   * What the reconcile sees of a canary.
   *
   * @param announced whether the manifest ConfigMap announces a canary
   * @param recorded whether status.canary records a running canary of exactly that version and
   *     manifest digest
   * @param version the announced canary's version (when announced)
   * @param pinned whether spec.rollout.pinVersion is set
   * @param paused whether spec.rollout.paused is set
   * @param abort the abort annotation's value, or null
   * @param promote the promote annotation's value, or null
   */
  public record Canary(
      boolean announced,
      boolean recorded,
      long version,
      boolean pinned,
      boolean paused,
      String abort,
      String promote) {

    /** The state this view is in. */
    public State state() {
      return announced ? State.CANARY : State.STABLE;
    }
  }

  /** The transition for {@code canary}; {@code judged} is asked only when nothing else decides. */
  public static Transition next(Canary canary, Supplier<CanaryJudgement.Decision> judged) {
    if (canary.state() == State.STABLE) {
      return Transition.NONE;
    }
    if (!canary.recorded()) {
      return Transition.WITHDRAW_FOREIGN;
    }
    if (canary.pinned()) {
      return Transition.WITHDRAW_FOR_PIN;
    }
    String version = String.valueOf(canary.version());
    if (version.equals(canary.abort())) {
      return Transition.ABORT;
    }
    if (version.equals(canary.promote())) {
      return Transition.PROMOTE_BY_HAND;
    }
    CanaryJudgement.Decision decision = judged.get();
    if (decision instanceof CanaryJudgement.Decision.Halt) {
      return Transition.HALT;
    }
    if (decision instanceof CanaryJudgement.Decision.Promote && !canary.paused()) {
      return Transition.PROMOTE;
    }
    return Transition.WAIT;
  }
}
