package io.bloomoperator.rollout;

import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.BuildRecord;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishCharges;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.StoreReservations;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;

/**
 * Publishes a retained version's payload again as a new version ({@link PublishPlan#rollBack}): a
 * pin, or a withdrawn canary some readers already served. Charged by the same rule as every publish
 * ({@link PublishCharges}: the store's budgets for a store filter, etcd's for ConfigMaps).
 */
public final class Republish {

  private final PublishCharges charges;
  private final OwnManifests ownManifests;
  private final BuildMetrics metrics;

  public Republish(PublishCharges charges, OwnManifests ownManifests, BuildMetrics metrics) {
    this.charges = charges;
    this.ownManifests = ownManifests;
    this.metrics = metrics;
  }

  /** {@code target}'s payload as a new version; the record keeps the last build's time. */
  public PublishedSnapshot rollBack(
      FilterRun run, PublishedSnapshot current, Manifest target, String token)
      throws PublishException {
    return rollBack(
        run,
        current,
        target,
        new BuildRecord(
            token,
            run.filter().getMetadata().getGeneration(),
            current.builtAt() != null ? current.builtAt() : run.now()));
  }

  /** As {@link #rollBack(FilterRun, PublishedSnapshot, Manifest, String)}, with {@code record}. */
  public PublishedSnapshot rollBack(
      FilterRun run, PublishedSnapshot current, Manifest target, BuildRecord record)
      throws PublishException {
    PublishPlan plan =
        PublishPlan.rollBack(
            current.manifest(),
            target,
            run.report().lastKnownVersion(),
            run.spec().chunkSize(),
            run.now());
    PublishedSnapshot written;
    // One delta chunk (a header) and the manifest, charged as any publish's.
    try (StoreReservations.Reservation reserved =
        charges.newVersion(
            run.store(),
            run.namespace(),
            run.name(),
            plan.writeCost(),
            plan.writtenBytes(),
            run.now())) {
      written = run.store().apply(plan, current, null, record).state();
    }
    ownManifests.wrote(run.filter(), written);
    metrics.published(run.filter(), written.manifest().versionBytes(), Duration.ZERO);
    return written;
  }
}
