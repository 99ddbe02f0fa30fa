package io.bloomoperator.rollout;

import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.BuildRecord;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.readers.CanaryJudgement;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.run.RunState;
import io.bloomoperator.run.Step;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The canary step (spec.rollout.canary): while a canary is announced beside the stable manifest,
 * carries out the {@link RolloutMachine}'s transition: promote it, halt or withdraw it, or judge it
 * again later. All its state is in {@code status.canary} (the operator's record, which ConfigMap
 * writers cannot change) and the manifest ConfigMap (the announced canary), so a restarted operator
 * or a new leader goes on where the last one stood. See {@link Canaries}.
 */
public final class CanaryStep implements Step {

  private static final Logger LOG = LoggerFactory.getLogger(CanaryStep.class);

  private final Republish republish;
  private final OwnManifests ownManifests;
  private final Supplier<ReaderRollouts> readers;
  private final Duration statusInterval;

  /**
   * @param readers the reader aggregation (null before the controller registered it)
   * @param statusInterval how often a running canary is judged
   */
  public CanaryStep(
      Republish republish,
      OwnManifests ownManifests,
      Supplier<ReaderRollouts> readers,
      Duration statusInterval) {
    this.republish = republish;
    this.ownManifests = ownManifests;
    this.readers = readers;
    this.statusInterval = statusInterval;
  }

  @Override
  public Next apply(FilterRun run, RunState state) throws PublishException {
    if (!state.hasManifest()) {
      return Next.go(state);
    }
    PublishedSnapshot current = state.current();
    CanaryStatus record = run.report().canary();
    Manifest announced = SnapshotStore.canaryOf(current);
    RolloutMachine.Canary view = Canaries.view(run.filter(), record, announced);
    CanaryJudgement.Decision[] judged = {null};
    RolloutMachine.Transition transition =
        RolloutMachine.next(view, () -> judged[0] = judge(run, record, view.version()));
    return carryOut(transition, run, state, new Announced(current, record, announced, judged[0]));
  }

  /** The canary the machine looked at: the stable state, the record, the announced manifest. */
  private record Announced(
      PublishedSnapshot current,
      CanaryStatus record,
      Manifest manifest,
      CanaryJudgement.Decision judged) {}

  private Next carryOut(
      RolloutMachine.Transition transition, FilterRun run, RunState state, Announced canary)
      throws PublishException {
    PublishedSnapshot current = canary.current();
    CanaryStatus record = canary.record();
    return switch (transition) {
      case NONE -> {
        if (record != null && CanaryStatus.RUNNING.equals(record.getState())) {
          run.report().canary(null); // gone from the ConfigMap: a pin published over it, or removed
        }
        yield Next.go(state);
      }
      case WITHDRAW_FOREIGN ->
          Next.go(state.publishing(withdrawForeign(run, current, canary.manifest())));
      case WITHDRAW_FOR_PIN -> {
        run.report().canary(null);
        yield Next.go(state.publishing(withdraw(run, current, canary.manifest().version())));
      }
      case ABORT -> Next.done(end(run, current, record, CanaryStatus.ABORTED, null));
      case PROMOTE_BY_HAND ->
          Next.done(promote(run, current, canary.manifest(), record, "by hand"));
      case HALT ->
          Next.done(
              end(
                  run,
                  current,
                  record,
                  CanaryStatus.HALTED,
                  (CanaryJudgement.Decision.Halt) canary.judged()));
      case PROMOTE ->
          Next.done(
              promote(
                  run,
                  current,
                  canary.manifest(),
                  record,
                  Canaries.servedBy(record, (CanaryJudgement.Decision.Promote) canary.judged())));
      case WAIT -> Next.done(waiting(run, current, record));
    };
  }

  /** The readers' counts into the record, and their judgement of the canary {@code version}. */
  private CanaryJudgement.Decision judge(FilterRun run, CanaryStatus record, long version) {
    ReaderRollouts aggregation = readers.get();
    if (aggregation == null) {
      record.setReaders(0);
      record.setOnCanary(0);
      record.setFailing(0);
      record.setFailingReason(null);
      return new CanaryJudgement.Decision.Wait(0, 0);
    }
    int percent = record.getPercent() == null ? 0 : record.getPercent();
    CanaryJudgement.Counts counts =
        aggregation.canaryCounts(run.filter(), version, percent, run.now());
    record.setReaders(counts.readers());
    record.setOnCanary(counts.onCanary());
    record.setFailing(counts.failing());
    record.setFailingReason(
        counts.firstFailingReason() == null ? null : counts.firstFailingReason().name());
    // The record is the operator's own; should it be unreadable, the canary waits (never promotes
    // early) until promoted or aborted by hand.
    return aggregation.judgeCanary(
        run.filter(), version, percent, since(run, record), Canaries.holdFor(record), run.now());
  }

  private static Instant since(FilterRun run, CanaryStatus record) {
    return Canaries.parseOr(record.getSince(), run.now());
  }

  /** Ready/CanaryRunning, judged again at the status interval or when its hold time is over. */
  private Outcome waiting(FilterRun run, PublishedSnapshot current, CanaryStatus record) {
    run.report().published(current);
    Duration untilHeld =
        Duration.between(run.now(), since(run, record).plus(Canaries.holdFor(record)));
    Duration next =
        untilHeld.isNegative() || untilHeld.compareTo(statusInterval) > 0
            ? statusInterval
            : untilHeld.plusMillis(1);
    // Nothing decided: only the reader counts moved, a write that may wait for the budget.
    return new Outcome.Progress(Reasons.CANARY_RUNNING, Canaries.note(record), Optional.of(next));
  }

  private PublishedSnapshot withdrawForeign(
      FilterRun run, PublishedSnapshot current, Manifest announced) throws PublishException {
    String message =
        "the canary in the manifest ConfigMap is not the one this operator announced"
            + " (status.canary); it is withdrawn, never promoted";
    LOG.warn("{}/{}: {}", run.namespace(), run.name(), message);
    run.events().warning(run.filter(), Canaries.EVENT_NOT_OURS, message);
    PublishedSnapshot withdrawn = withdraw(run, current, announced.version());
    CanaryStatus record = run.report().canary();
    if (record != null && CanaryStatus.RUNNING.equals(record.getState())) {
      run.report().canary(null); // the canary it recorded is not the one announced: over as well
    }
    return withdrawn;
  }

  /** Makes the canary the published version. */
  private Outcome promote(
      FilterRun run, PublishedSnapshot current, Manifest canary, CanaryStatus record, String why)
      throws PublishException {
    PublishedSnapshot promoted =
        run.store()
            .apply(
                PublishPlan.promote(current.manifest(), canary),
                current,
                null,
                new BuildRecord(
                    record.getSourceToken(),
                    record.getSpecGeneration() == null ? -1 : record.getSpecGeneration(),
                    Canaries.parseOr(record.getBuiltAt(), run.now())))
            .state();
    ownManifests.wrote(run.filter(), promoted);
    run.report().canary(null);
    run.report().held(null);
    run.report().published(promoted);
    run.report().retained(RetainedVersions.of(promoted.configMap()));
    String message = Canaries.promoted(canary, why, current.manifest().version());
    LOG.info("{}/{}: {}", run.namespace(), run.name(), message);
    run.events().normal(run.filter(), Canaries.EVENT_PROMOTED, message);
    return Outcome.ready(
        Optional.of(run.spec().refresh() == null ? statusInterval : run.spec().refresh()));
  }

  /**
   * Withdraws the canary (halted or aborted): the stable version serves every reader, the record
   * keeps the content's sha256 so the same build is held.
   */
  private Outcome end(
      FilterRun run,
      PublishedSnapshot current,
      CanaryStatus record,
      String state,
      CanaryJudgement.Decision.Halt halt)
      throws PublishException {
    long version = record.getVersion();
    PublishedSnapshot stable = withdraw(run, current, version);
    record.setState(state);
    run.report().canary(record);
    run.report().published(stable);
    Optional<Duration> next =
        Optional.of(run.spec().refresh() == null ? Decision.MIN_DELAY : run.spec().refresh());
    String served =
        "version "
            + stable.manifest().version()
            + (stable.manifest().version() == current.manifest().version()
                ? ""
                : " (the payload of version " + current.manifest().version() + ")")
            + " serves every reader";
    if (halt != null) {
      return new Outcome.Failed(
          Reasons.CANARY_HALTED, Canaries.halted(record, halt, served), false, next);
    }
    String note = "; canary version " + version + " aborted by hand, " + served;
    run.events().normal(run.filter(), Reasons.CANARY_ABORTED, note.substring(2));
    return new Outcome.Ready(Reasons.CANARY_ABORTED, note, next);
  }

  /**
   * Removes the canary {@code version} from the ConfigMap; when a reader already serves it, the
   * stable payload is published again as a new version above it (readers never go back to a lower
   * version), so the whole share comes back.
   */
  private PublishedSnapshot withdraw(FilterRun run, PublishedSnapshot current, long version)
      throws PublishException {
    // Readers of the share may serve it: whatever comes next is numbered above it.
    run.report().sawVersion(version);
    PublishedSnapshot withdrawn =
        run.store().apply(PublishPlan.withdraw(current.manifest()), current, null, null).state();
    ownManifests.wrote(run.filter(), withdrawn);
    ReaderRollouts aggregation = readers.get();
    if (aggregation == null || !aggregation.anyServing(run.filter(), version)) {
      return withdrawn;
    }
    // The stable version's own build record: its source is not the canary's, so the next build
    // finds the withdrawn content again and holds it.
    PublishedSnapshot republished =
        republish.rollBack(
            run,
            withdrawn,
            withdrawn.manifest(),
            new BuildRecord(
                withdrawn.sourceToken(),
                withdrawn.specGeneration(),
                withdrawn.builtAt() != null ? withdrawn.builtAt() : run.now()));
    run.report().retained(RetainedVersions.of(republished.configMap()));
    LOG.info(
        "{}/{}: canary version {} withdrawn; stable payload republished as version {}",
        run.namespace(),
        run.name(),
        version,
        republished.manifest().version());
    return republished;
  }
}
