package io.bloomoperator.rollout;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.run.RunState;
import io.bloomoperator.run.Step;
import io.bloomoperator.snapshot.Manifest;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pin step: with spec.rollout.pinVersion set, the published version must serve that retained
 * version's payload; if it does not yet, it is published again as a new version ({@link
 * Republish}). Only a retained manifest that matches the operator's record in {@code
 * status.retainedVersions} is published again.
 */
public final class PinStep implements Step {

  private static final Logger LOG = LoggerFactory.getLogger(PinStep.class);

  private final Republish republish;

  public PinStep(Republish republish) {
    this.republish = republish;
  }

  @Override
  public Next apply(FilterRun run, RunState state) throws PublishException {
    Long pin = RolloutGate.pinVersion(run.filter());
    Manifest published = state.hasManifest() ? state.current().manifest() : null;
    if (pin == null || (published != null && published.version() == pin)) {
      run.report().pinned(pin);
      return Next.go(state);
    }
    Optional<Manifest> target =
        published == null
            ? Optional.empty()
            : RetainedVersions.of(state.current().configMap())
                .trusted(run.filter().getStatus())
                .first(SnapshotStore.keepVersions(run.filter()))
                .version(pin);
    if (target.isEmpty()) {
      return Next.done(
          Outcome.failed(
              Reasons.VERSION_NOT_RETAINED,
              "spec.rollout.pinVersion "
                  + pin
                  + " is not a retained version (status.retainedVersions; keep more with"
                  + " spec.snapshot.keepVersions); the published version keeps serving",
              false));
    }
    run.report().pinned(pin);
    if (target.get().sha256().equals(published.sha256())) {
      return Next.go(state); // serving it already
    }
    return Next.done(rolledBack(run, state, target.get(), pin));
  }

  /** Publishes the pinned payload; readers serve it: nothing to build until the source changes. */
  private Outcome rolledBack(FilterRun run, RunState state, Manifest target, long pin)
      throws PublishException {
    PublishedSnapshot current = state.current();
    PublishedSnapshot rolledBack = republish.rollBack(run, current, target, state.token());
    String message =
        "version "
            + rolledBack.manifest().version()
            + " serves the payload of retained version "
            + pin
            + " ("
            + target.keyCount()
            + " keys), replacing version "
            + current.manifest().version();
    LOG.info("{}/{}: {}", run.namespace(), run.name(), message);
    run.events().normal(run.filter(), "RolledBack", message);
    run.report().published(rolledBack);
    run.report().retained(RetainedVersions.of(rolledBack.configMap()));
    RunState after = state.replacing(rolledBack, run.spec().retainPrevious());
    return RolloutGate.ready(run.filter(), after.nextCheck(run, run.now()));
  }
}
