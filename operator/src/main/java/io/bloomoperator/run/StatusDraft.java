package io.bloomoperator.run;

import io.bloomoperator.api.BuildAttempt;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;

/**
 * The status one reconcile will write, as the steps fill it in; written once, with the run's {@link
 * Outcome}. Steps only record facts here; the Ready condition is the outcome's.
 */
public interface StatusDraft {

  /** The published version and the build record on its manifest. */
  void published(PublishedSnapshot current);

  /** What the build that just ended read and found. */
  void built(FilterBuilder.Result built);

  /** A build starts now: its record, written before the source is read. */
  BuildAttempt buildStarting();

  /** Where the change stream stands; null: the filter has none. */
  void stream(io.bloomoperator.api.StreamStatus stream);

  /** The change stream's status as handed to this reconcile, or null. */
  io.bloomoperator.api.StreamStatus stream();

  /** A build held by the rollout controls; null: none is held. */
  void held(HeldBuild held);

  /** The build held now, or null. */
  HeldBuild held();

  /** The canary record ({@code status.canary}); null: none. */
  void canary(CanaryStatus canary);

  /** The canary record as it will be written, or null. */
  CanaryStatus canary();

  /** What the manifest just written retains ({@code status.retainedVersions}). */
  void retained(RetainedVersions retained);

  /** The retained version the published one serves while pinned, or null. */
  void pinned(Long version);

  /** The approval value acted on. */
  void approved(String approval);

  /** The highest version the status has reported or seen in an untrusted manifest; 0: none. */
  long lastKnownVersion();

  /** A version number readers may have seen in a manifest this operator did not write. */
  void sawVersion(long version);
}
