package io.bloomoperator.build;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.rollout.Canaries;
import io.bloomoperator.rollout.HeldStep;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.run.RunState;
import io.bloomoperator.run.Step;
import io.bloomoperator.source.SourceException;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last step: what the schedule's {@link Decision} says. Wait (a publish too soon after the
 * last), build and publish ({@link BuildAndPublish}), or, up to date, keep the published version
 * (re-stamped when its signed creation time is due).
 */
public final class BuildStep implements Step {

  private static final Logger LOG = LoggerFactory.getLogger(BuildStep.class);

  private final BuildAndPublish act;
  private final OwnManifests ownManifests;
  private final Duration judgeAgain;

  /**
   * @param judgeAgain how long until a just-announced canary is judged
   */
  public BuildStep(BuildAndPublish act, OwnManifests ownManifests, Duration judgeAgain) {
    this.act = act;
    this.ownManifests = ownManifests;
    this.judgeAgain = judgeAgain;
  }

  @Override
  public Next apply(FilterRun run, RunState state) throws SourceException, PublishException {
    Decision decision = state.decision();
    return switch (decision.action()) {
      case WAIT -> {
        LOG.debug(
            "{}/{}: next publish allowed in {}", run.namespace(), run.name(), decision.delay());
        yield Next.done(new Outcome.Wait(decision.delay()));
      }
      case BUILD -> Next.done(build(run, state));
      case UP_TO_DATE -> {
        PublishedSnapshot current = restampIfDue(run, state.current());
        run.report().published(current);
        yield Next.done(
            RolloutGate.ready(
                run.filter(), state.publishing(current).nextCheck(run, current.builtAt())));
      }
    };
  }

  private Outcome build(FilterRun run, RunState state) throws SourceException, PublishException {
    Optional<BuildAndPublish.Published> published =
        act.run(run, state.current(), state.token(), state.decision().routine());
    if (published.isEmpty()) {
      // The namespace has its share of reconcile threads building: give this one back.
      return new Outcome.Wait(NamespaceBuilds.retryDelay());
    }
    if (published.get().held() != null) {
      run.report().held(published.get().held());
      return HeldStep.outcome(run, state, published.get().held());
    }
    PublishedSnapshot current = published.get().state();
    if (published.get().canary() != null) {
      return new Outcome.Ready(
          Reasons.CANARY_RUNNING, Canaries.note(run.report().canary()), Optional.of(judgeAgain));
    }
    RunState after =
        published.get().plan().newVersion()
            ? state.replacing(current, run.spec().retainPrevious()) // the version just replaced
            : state.publishing(current);
    return RolloutGate.ready(run.filter(), after.nextCheck(run, current.builtAt()));
  }

  /**
   * {@code current} (trusted) written again with a fresh, signed createdAt when the signed one is
   * older than the re-stamp interval, so readers with a maximum manifest age keep accepting it.
   */
  private PublishedSnapshot restampIfDue(FilterRun run, PublishedSnapshot current)
      throws PublishException {
    Optional<PublishPlan> restamp =
        PublishPlan.restampIfDue(current.manifest(), run.store().restampInterval(), run.now());
    if (restamp.isEmpty()) {
      return current;
    }
    PublishedSnapshot restamped = run.store().apply(restamp.get(), current, null, null).state();
    ownManifests.wrote(run.filter(), restamped);
    return restamped;
  }
}
