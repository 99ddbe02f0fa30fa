package io.bloomoperator.run;

import io.bloomoperator.publish.PublishException;
import io.bloomoperator.source.SourceException;
import java.io.IOException;

/**
 * One step of a reconcile's pipeline (observe, pin, canary, held, build, up to date): from the
 * state the steps before it left, either the state to go on with or the reconcile's {@link
 * Outcome}. Failures are thrown, and mapped to an outcome in one place by the reconciler.
 */
@FunctionalInterface
public interface Step {

  /** What this step leaves for the next one, or how the reconcile ends. */
  Next apply(FilterRun run, RunState state) throws SourceException, PublishException, IOException;

  /** A step's result. */
  sealed interface Next {

    /** Go on with {@code state}. */
    record Continue(RunState state) implements Next {}

    /** The reconcile ends with {@code outcome}. */
    record Done(Outcome outcome) implements Next {}

    static Next go(RunState state) {
      return new Continue(state);
    }

    static Next done(Outcome outcome) {
      return new Done(outcome);
    }
  }
}
