package io.bloomoperator.build;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.SplitBlockSize;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotBackend;
import io.bloomoperator.publish.StatusBudget;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.SourceException;

/**
 * Reads the source into a new filter inside a build slot, under the build guard (time, bytes,
 * threads), with progress written to the status; sized to keep the published geometry while the key
 * count fits it, so small changes publish deltas.
 */
final class SourceBuild {

  private final OperatorSettings settings;
  private final BuildMetrics metrics;
  private final BuildWorkers buildWorkers;
  private final StatusBudget statusBudget;

  SourceBuild(
      OperatorSettings settings,
      BuildMetrics metrics,
      BuildWorkers buildWorkers,
      StatusBudget statusBudget) {
    this.settings = settings;
    this.metrics = metrics;
    this.buildWorkers = buildWorkers;
    this.statusBudget = statusBudget;
  }

  /**
   * Builds from {@code source}: the filter's, or the same reading in its change stream's snapshot
   * ({@link StreamPublish#scanned}); every key also goes to what {@code beside} opens (null:
   * nothing), a counting shadow.
   */
  FilterBuilder.Result build(
      FilterRun ctx,
      KeySource source,
      PublishedSnapshot current,
      BuildSlots.Slot slot,
      FilterBuilder.Beside beside)
      throws SourceException, PublishException {
    ResolvedSpec spec = ctx.spec();
    SnapshotBackend.SizeLimit limit = ctx.store().backend().sizeLimit();
    BuildProgressReporter progress =
        new BuildProgressReporter(ctx.client(), ctx.filter(), statusBudget);
    progress.started(ctx.report().buildStarting());
    try (BuildGuard guard = new BuildGuard(source, settings.builds().limits(), slot)) {
      FilterBuilder.Result built =
          guard.run(
              guarded ->
                  new FilterBuilder(progress, buildWorkers)
                      .with(beside)
                      .build(
                          guarded,
                          new FilterBuilder.Request(
                              spec.keyType(),
                              spec.falsePositiveRate(),
                              spec.expectedInsertions(),
                              spec.maxMalformedKeys() != null
                                  ? spec.maxMalformedKeys()
                                  : settings.sources().maxMalformedKeys(),
                              limit.bytes(),
                              publishedGeometry(current, spec),
                              spec.format(),
                              spec.splitBlockSize() == SplitBlockSize.POWER_OF_TWO),
                          slot));
      metrics.built(ctx.filter(), built.keys(), built.took());
      return built;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PublishException(
          Reasons.PUBLISH_FAILED,
          "interrupted while waiting for a build slot (operator stopping)",
          e);
    } catch (FilterTooLargeException e) {
      throw new PublishException(
          Reasons.SNAPSHOT_TOO_LARGE,
          e.getMessage() + " (operator limit " + limit.setting() + ")" + "; nothing was published",
          e);
    }
  }

  /**
   * The published version's size, for the builder to keep while it fits (so a key count that moves
   * a little publishes deltas, not a whole snapshot each time); null when there is none of this key
   * type and format (a new format is always a new whole snapshot).
   */
  private static BloomFilterSizing publishedGeometry(PublishedSnapshot current, ResolvedSpec spec) {
    Manifest published = current == null ? null : current.manifest();
    if (published == null
        || published.keyType() != spec.keyType()
        || published.filterFormat() != spec.format()) {
      return null;
    }
    return new BloomFilterSizing(
        Math.max(1, published.keyCount()),
        spec.falsePositiveRate(),
        published.numBits(),
        published.numHashFunctions());
  }
}
