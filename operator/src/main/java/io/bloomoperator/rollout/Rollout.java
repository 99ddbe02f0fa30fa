package io.bloomoperator.rollout;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.run.Step;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * Every rollout mode in one list: the steps that run between observing the published state and
 * building (pin, canary, held, in that order), the spec checks they need before anything runs, and
 * how each shapes the publish of a new version ({@link PublishMode}). A new rollout mode is added
 * here and in its own classes; the reconciler and the build take the lists as they are.
 */
public final class Rollout {

  /** How a rollout mode changes the publish of a freshly built version (a canary announces it). */
  @FunctionalInterface
  public interface PublishMode {
    /** {@code plan} as {@code filter}'s mode publishes it; {@code plan} itself if unchanged. */
    PublishPlan shape(BloomFilter filter, PublishPlan plan);
  }

  /** The modes, applied in this order to every plan of a new version. */
  private static final List<PublishMode> MODES =
      List.of((filter, plan) -> plan.asCanary(Canaries.percent(filter)));

  private Rollout() {}

  /**
   * The rollout steps in the order they run.
   *
   * @param republish how a retained payload is published again (pin, withdrawn canary)
   * @param readers the readers' reports, for the canary's judgement
   * @param statusInterval how often a running canary is judged again
   */
  public static List<Step> steps(
      Republish republish,
      OwnManifests ownManifests,
      Supplier<ReaderRollouts> readers,
      Duration statusInterval) {
    return List.of(
        new PinStep(republish),
        new CanaryStep(republish, ownManifests, readers, statusInterval),
        new HeldStep());
  }

  /**
   * Refuses what the schema could not: checked when a run opens, before any step.
   *
   * @throws IllegalArgumentException naming the field
   */
  public static void validate(BloomFilter filter) {
    Canaries.validate(filter);
  }

  /** {@code plan}, a build's publish, as every mode of {@code filter} shapes it. */
  public static PublishPlan shape(BloomFilter filter, PublishPlan plan) {
    PublishPlan shaped = plan;
    for (PublishMode mode : MODES) {
      shaped = mode.shape(filter, shaped);
    }
    return shaped;
  }
}
