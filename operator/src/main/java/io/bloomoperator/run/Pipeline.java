package io.bloomoperator.run;

import io.bloomoperator.publish.PublishException;
import io.bloomoperator.source.SourceException;
import java.io.IOException;
import java.util.List;

/**
 * The steps of a reconcile in order: each hands its state to the next, the first to finish gives
 * the run's {@link Outcome}. Features are steps; adding one is a line in the list the reconciler
 * builds, not an edit of the reconcile.
 */
public record Pipeline(List<Step> steps) {

  public Pipeline {
    steps = List.copyOf(steps);
  }

  /**
   * Runs the steps on {@code run}.
   *
   * @throws IllegalStateException if no step finished the run (the last step must)
   */
  public Outcome run(FilterRun run) throws SourceException, PublishException, IOException {
    RunState state = null;
    for (Step step : steps) {
      Step.Next next = step.apply(run, state);
      if (next instanceof Step.Next.Done done) {
        return done.outcome();
      }
      state = ((Step.Next.Continue) next).state();
    }
    throw new IllegalStateException("no step finished the run");
  }
}
