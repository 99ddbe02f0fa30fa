package io.bloomoperator.reconcile;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.publish.NamespaceBudget;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.publish.WriteBudgetExceeded;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.SourceException;
import java.time.Duration;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The act step of a reconcile that decided to build: build from the source in a build slot, plan
 * the publish ({@link PublishPlan}, pure), charge it to the write budget, apply it ({@link
 * SnapshotStore#apply}), and hand the results to the status and event side. Holds the operator-wide
 * bounds a build runs under (build slots, builds per namespace, the write budget).
 */
final class BuildAndPublish {

  private static final Logger LOG = LoggerFactory.getLogger(BuildAndPublish.class);

  private final OperatorSettings settings;
  private final BuildMetrics metrics;

  /** Bounds the bit arrays alive at once; a build holds its slot until its publish is done. */
  private final BuildSlots buildSlots;

  private final BuildWorkers buildWorkers;

  /** Bounds the reconcile threads one namespace's builds occupy. */
  private final NamespaceBuilds namespaceBuilds;

  /** Bytes each namespace and filter wrote to etcd in the last hour. */
  private final WriteBudget writeBudget;

  /** Told about every manifest written, so the next reconcile recognises it as the operator's. */
  private final OwnManifests ownManifests;

  BuildAndPublish(OperatorSettings settings, BuildMetrics metrics, OwnManifests ownManifests) {
    this.settings = settings;
    this.metrics = metrics;
    this.ownManifests = ownManifests;
    this.buildSlots = new BuildSlots(settings.maxConcurrentBuilds());
    // Helpers are used only by builds holding a slot: each slot's build gets its full share.
    this.buildWorkers =
        BuildWorkers.of(settings.builds().threadsPerBuild(), settings.maxConcurrentBuilds());
    this.namespaceBuilds = new NamespaceBuilds(settings.builds().maxBuildsPerNamespace());
    this.writeBudget = new WriteBudget(settings.writes(), metrics::etcdWritten);
  }

  /** What a publish planned and the published state it left. */
  record Published(PublishPlan plan, PublishedSnapshot state) {}

  /**
   * Builds from the source in a build slot, then plans and applies the publish; empty when the
   * namespace already has its share of builds running.
   */
  Optional<Published> run(
      FilterContext ctx, PublishedSnapshot current, String token, boolean routine)
      throws SourceException, PublishException {
    // A build whose publish could not be written anyway would only load the source.
    Optional<WriteBudget.Refusal> spent =
        writeBudget.exhausted(ctx.namespace(), ctx.name(), ctx.now());
    if (spent.isPresent()) {
      throw WriteBudgetExceeded.exhausted(spent.get());
    }
    Optional<NamespaceBuilds.Entry> place = namespaceBuilds.enter(ctx.namespace());
    if (place.isEmpty()) {
      LOG.debug(
          "{}/{}: namespace at BLOOM_MAX_BUILDS_PER_NAMESPACE, deferred",
          ctx.namespace(),
          ctx.name());
      return Optional.empty();
    }
    BuildEvents events = ctx.buildEvents();
    String source = ctx.source().description();
    events.started(source, routine);
    // The slot is taken inside the build, once the source delivers keys, and held until the
    // publish is done: the bit array lives that long.
    try (NamespaceBuilds.Entry entry = place.get();
        BuildSlots.Slot slot = buildSlots.slot(ctx.namespace())) {
      FilterBuilder.Result built = buildFilter(ctx, current, slot);
      long start = System.nanoTime();
      Published outcome = publish(ctx, built, current, token);
      ownManifests.wrote(ctx.filter(), outcome.state());
      Manifest manifest = outcome.state().manifest();
      if (outcome.plan().newVersion()) {
        metrics.published(
            ctx.filter(), manifest.versionBytes(), Duration.ofNanos(System.nanoTime() - start));
        events.published(manifest, built, source);
      } else {
        metrics.unchanged();
        events.unchanged(manifest, built, source, routine);
        LOG.info(
            "{}/{}: rebuilt from {}, content unchanged (version {})",
            ctx.namespace(),
            ctx.name(),
            source,
            manifest.version());
      }
      ctx.report().published(outcome.state());
      ctx.report().built(built);
      return Optional.of(outcome);
    }
  }

  /**
   * Plans the publish of {@code built} over {@code current} ({@link PublishPlan}, pure), charges
   * its writes to the write budget before anything is written (a publish that fails half-way has
   * written to etcd's history too) and applies it.
   */
  private Published publish(
      FilterContext ctx, FilterBuilder.Result built, PublishedSnapshot current, String token)
      throws PublishException {
    int chunkSize =
        writeBudget.chunkSize(
            ctx.spec().chunkSize(),
            SnapshotEncoder.payloadSize(built.bits()),
            SnapshotSpec.MAX_CHUNK_BYTES);
    PublishPlan.Facts facts =
        ctx.store().facts(built.bits(), current, settings.deltas(), chunkSize);
    PublishPlan plan =
        PublishPlan.plan(
            current == null ? null : current.manifest(),
            facts,
            settings.deltas(),
            new PublishPlan.Budget(
                ctx.namespace(),
                settings.maxNamespaceBytes(),
                () ->
                    NamespaceBudget.publishedBytesExcept(
                        ctx.client(), ctx.namespace(), ctx.name())),
            ctx.report().lastKnownVersion(),
            ctx.now());
    if (plan.newVersion()) {
      Optional<WriteBudget.Refusal> refused =
          writeBudget.charge(ctx.namespace(), ctx.name(), plan.writeCost(), ctx.now());
      if (refused.isPresent()) {
        throw WriteBudgetExceeded.of(refused.get(), plan.writeCost());
      }
    }
    SnapshotStore.BuildRecord record =
        new SnapshotStore.BuildRecord(token, ctx.filter().getMetadata().getGeneration(), ctx.now());
    return new Published(
        plan, ctx.store().apply(plan, facts, built.bits(), built.keys(), current, record));
  }

  private FilterBuilder.Result buildFilter(
      FilterContext ctx, PublishedSnapshot current, BuildSlots.Slot slot)
      throws SourceException, PublishException {
    ResolvedSpec spec = ctx.spec();
    BuildProgressReporter progress = new BuildProgressReporter(ctx.client(), ctx.filter());
    progress.started(ctx.report().buildStarting());
    try (BuildGuard guard = new BuildGuard(ctx.source(), settings.builds(), slot)) {
      FilterBuilder.Result built =
          guard.run(
              guarded ->
                  new FilterBuilder(progress, buildWorkers)
                      .build(
                          guarded,
                          new FilterBuilder.Request(
                              spec.keyType(),
                              spec.falsePositiveRate(),
                              spec.expectedInsertions(),
                              spec.maxMalformedKeys() != null
                                  ? spec.maxMalformedKeys()
                                  : settings.maxMalformedKeys(),
                              settings.maxSnapshotBytes(),
                              publishedGeometry(current, spec)),
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
          e.getMessage() + " (operator limit BLOOM_MAX_SNAPSHOT_BYTES); nothing was published",
          e);
    }
  }

  /**
   * The published version's size, for the builder to keep while it fits (so a key count that moves
   * a little publishes deltas, not a whole snapshot each time); null when there is none of this key
   * type.
   */
  private static BloomFilterSizing publishedGeometry(PublishedSnapshot current, ResolvedSpec spec) {
    Manifest published = current == null ? null : current.manifest();
    if (published == null || published.keyType() != spec.keyType()) {
      return null;
    }
    return new BloomFilterSizing(
        Math.max(1, published.keyCount()),
        spec.falsePositiveRate(),
        published.numBits(),
        published.numHashFunctions());
  }
}
