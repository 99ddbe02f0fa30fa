package io.bloomoperator.build;

import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.rollout.CanaryRollout;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.publish.NamespaceBudget;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishCharges;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedPayloads;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.StatusBudget;
import io.bloomoperator.publish.StoreBudget;
import io.bloomoperator.publish.StoreReservations;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
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
public final class BuildAndPublish {

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

  /** Charges a new version's writes where they go, for publishes and roll-backs alike. */
  private final PublishCharges charges;

  /** The same budget, charged with status writes. */
  private final StatusBudget statusBudget;

  /** Told about every manifest written, so the next reconcile recognises it as the operator's. */
  private final OwnManifests ownManifests;

  /** The payload each filter last published, so its next delta needs no read-back of the chain. */
  private final PublishedPayloads payloads;

  public BuildAndPublish(OperatorSettings settings, BuildMetrics metrics, OwnManifests ownManifests) {
    this.settings = settings;
    this.metrics = metrics;
    this.ownManifests = ownManifests;
    this.buildSlots = new BuildSlots(settings.builds().maxConcurrent());
    // Helpers are used only by builds holding a slot: each slot's build gets its full share.
    this.buildWorkers =
        BuildWorkers.of(
            settings.builds().limits().threadsPerBuild(), settings.builds().maxConcurrent());
    this.namespaceBuilds = new NamespaceBuilds(settings.builds().limits().maxBuildsPerNamespace());
    this.writeBudget = new WriteBudget(settings.publishing().writes(), metrics::etcdWritten);
    this.charges = new PublishCharges(writeBudget);
    this.statusBudget = new StatusBudget(writeBudget);
    this.payloads = new PublishedPayloads(settings.snapshots().maxBytes(true));
  }

  /** The write budget of status writes, shared with the publishes' ({@link StatusBudget}). */
  public StatusBudget statusBudget() {
    return statusBudget;
  }

  /**
   * The etcd write budget: every manifest ConfigMap write of a filter is charged to it ({@link
   * io.bloomoperator.publish.SnapshotStore#chargingManifestsTo}).
   */
  public WriteBudget etcdWrites() {
    return writeBudget;
  }

  /**
   * What a publish planned and the published state it left; or, with {@code held}, a build the
   * rollout controls held ({@code plan} null, {@code state} the unchanged published state).
   */
  public record Published(PublishPlan plan, PublishedSnapshot state, HeldBuild held, Manifest canary) {

    Published(PublishPlan plan, PublishedSnapshot state) {
      this(plan, state, null, null);
    }
  }

  /**
   * Builds from the source in a build slot, then plans and applies the publish; empty when the
   * namespace already has its share of builds running.
   */
  public Optional<Published> run(
      FilterRun ctx, PublishedSnapshot current, String token, boolean routine)
      throws SourceException, PublishException {
    // A build whose publish could not be written anyway would only load the source.
    Optional<PublishException> spent =
        charges.exhausted(ctx.store(), ctx.namespace(), ctx.name(), ctx.now());
    if (spent.isPresent()) {
      throw spent.get();
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
      Optional<HeldBuild> held = hold(ctx, current, built, token);
      if (held.isPresent()) {
        ctx.report().published(current);
        ctx.report().built(built);
        return Optional.of(new Published(null, current, held.get(), null));
      }
      long start = System.nanoTime();
      Published outcome = publish(ctx, built, current, token);
      ownManifests.wrote(ctx.filter(), outcome.state());
      if (outcome.canary() != null) {
        Manifest canary = outcome.canary();
        metrics.published(
            ctx.filter(), canary.versionBytes(), Duration.ofNanos(System.nanoTime() - start));
        String message =
            "canary version "
                + canary.version()
                + " ("
                + built.keys()
                + " keys from "
                + source
                + ") announced to "
                + CanaryRollout.percent(ctx.filter())
                + " % of the readers; version "
                + current.manifest().version()
                + " serves the others";
        LOG.info("{}/{}: {}", ctx.namespace(), ctx.name(), message);
        ctx.events().normal(ctx.filter(), CanaryRollout.EVENT_STARTED, message);
        ctx.report().published(outcome.state());
        ctx.report().built(built);
        ctx.report().held(null);
        ctx.report()
            .canary(CanaryRollout.started(ctx.filter(), canary, token, ctx.now(), ctx.now()));
        return Optional.of(outcome);
      }
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
      ctx.report().held(null);
      if (outcome.plan().newVersion()) {
        ctx.report().retained(RetainedVersions.of(outcome.state().configMap()));
      }
      if (RolloutGate.approval(ctx.filter()) != null) {
        ctx.report().approved(RolloutGate.approval(ctx.filter()));
      }
      return Optional.of(outcome);
    }
  }

  /**
   * The record of {@code built} when the rollout controls hold it ({@link RolloutGate}); empty to
   * publish it. Neither the first version (readers have none to keep) nor a build whose payload is
   * the published one (confirming it writes no version) is held. A held build's chunks are not
   * written: it costs no etcd bytes and no namespace budget while held, and releasing it builds
   * again from the source (an approval names the sha256, so only the same content is published
   * without the guard).
   */
  private Optional<HeldBuild> hold(
      FilterRun ctx, PublishedSnapshot current, FilterBuilder.Result built, String token) {
    Manifest published = current == null ? null : current.manifest();
    if (published == null) {
      return Optional.empty(); // no version that readers could keep
    }
    String sha256 = SnapshotEncoder.sha256(built.bits());
    if (sha256.equals(published.sha256())) {
      return Optional.empty();
    }
    Optional<String> reason =
        CanaryRollout.withdrawnContent(ctx.filter(), ctx.report().canary(), sha256)
            .or(() -> RolloutGate.holdReason(ctx.filter(), published, built.keys(), sha256));
    if (reason.isEmpty()) {
      return Optional.empty();
    }
    HeldBuild held = new HeldBuild();
    held.setReason(reason.get());
    held.setKeys(built.keys());
    held.setPublishedKeys(published.keyCount());
    held.setSha256(sha256);
    held.setBuiltAt(ctx.now().toString());
    held.setSourceToken(token);
    held.setSpecGeneration(ctx.filter().getMetadata().getGeneration());
    LOG.info(
        "{}/{}: build of {} keys held ({}), version {} keeps serving",
        ctx.namespace(),
        ctx.name(),
        built.keys(),
        reason.get(),
        published.version());
    return Optional.of(held);
  }

  /**
   * Publishes the payload of the retained version {@code target} as a new version ({@link
   * SnapshotStore#rollBack}), charged to the write budget like any publish.
   */
  public PublishedSnapshot rollBack(
      FilterRun ctx, PublishedSnapshot current, Manifest target, String token)
      throws PublishException {
    // The payload is no new build: the record keeps the last build's time.
    return rollBack(
        ctx,
        current,
        target,
        new SnapshotStore.BuildRecord(
            token,
            ctx.filter().getMetadata().getGeneration(),
            current.builtAt() != null ? current.builtAt() : ctx.now()));
  }

  /**
   * As {@link #rollBack(FilterRun, PublishedSnapshot, Manifest, String)}, with {@code record}
   * as the new manifest's build record.
   */
  public PublishedSnapshot rollBack(
      FilterRun ctx,
      PublishedSnapshot current,
      Manifest target,
      SnapshotStore.BuildRecord record)
      throws PublishException {
    long version =
        io.bloomoperator.publish.VersionNumbering.next(
            Math.max(current.manifest().version(), ctx.report().lastKnownVersion()));
    // One delta chunk (a header) and the manifest, charged as any publish's.
    PublishedSnapshot written;
    try (StoreReservations.Reservation reserved =
        charges.newVersion(
            ctx.store(),
            ctx.namespace(),
            ctx.name(),
            WriteBudget.Limits.cost(SnapshotDelta.HEADER_BYTES, 2),
            SnapshotDelta.HEADER_BYTES,
            ctx.now())) {
      written =
          ctx.store()
              .rollBack(
                  target,
                  version,
                  ctx.spec().chunkSize(),
                  PublishPlan.createdAt(current.manifest(), ctx.now()),
                  current,
                  record);
    }
    ownManifests.wrote(ctx.filter(), written);
    metrics.published(ctx.filter(), written.manifest().versionBytes(), Duration.ZERO);
    return written;
  }

  /**
   * Plans the publish of {@code built} over {@code current} ({@link PublishPlan}, pure), charges
   * its writes to the write budget before anything is written (a publish that fails half-way has
   * written to etcd's history too) and applies it.
   */
  private Published publish(
      FilterRun ctx, FilterBuilder.Result built, PublishedSnapshot current, String token)
      throws PublishException {
    int chunkSize =
        writeBudget.chunkSize(
            ctx.spec().chunkSize(),
            SnapshotEncoder.payloadSize(built.bits()),
            SnapshotSpec.MAX_CHUNK_BYTES);
    String uid = ctx.filter().getMetadata().getUid();
    // current is what OwnManifests trusts: a held payload is used only for that very version.
    PublishPlan.Facts facts =
        ctx.store()
            .facts(
                built.bits(),
                current,
                settings.publishing().deltas(),
                chunkSize,
                payloads.of(uid, current == null ? null : current.manifest()));
    // Chunks in an object store count against the store's budgets, not etcd's.
    Optional<StoreBudget> storeBudget = ctx.store().storeBudget();
    PublishPlan plan =
        PublishPlan.plan(
            current == null ? null : current.manifest(),
            facts,
            settings.publishing().deltas(),
            storeBudget.isPresent()
                ? PublishPlan.Budget.unlimited()
                : new PublishPlan.Budget(
                    ctx.namespace(),
                    settings.snapshots().maxNamespaceBytes(),
                    () ->
                        NamespaceBudget.publishedBytesExcept(
                            ctx.client(), ctx.namespace(), ctx.name()),
                    retainedBytes(ctx, current)),
            ctx.report().lastKnownVersion(),
            ctx.now());
    SnapshotStore.BuildRecord record =
        new SnapshotStore.BuildRecord(token, ctx.filter().getMetadata().getGeneration(), ctx.now());
    int canaryPercent = CanaryRollout.percent(ctx.filter());
    boolean canary =
        canaryPercent > 0 && plan.newVersion() && current != null && current.manifest() != null;
    PublishedSnapshot state;
    try (StoreReservations.Reservation reserved =
        plan.newVersion()
            ? charges.newVersion(
                ctx.store(),
                ctx.namespace(),
                ctx.name(),
                plan.writeCost(),
                plan.writtenBytes(),
                ctx.now())
            : StoreReservations.Reservation.NONE) {
      state =
          canary
              ? ctx.store()
                  .applyAsCanary(
                      plan, facts, built.bits(), built.keys(), current, record, canaryPercent)
              : ctx.store().apply(plan, facts, built.bits(), built.keys(), current, record);
    }
    if (state != null
        && state.manifest() != null
        && state.manifest().sha256().equals(facts.sha256())) {
      payloads.published(uid, state.manifest(), built.bits());
    }
    return new Published(plan, state, null, canary ? ctx.store().writtenCanary() : null);
  }

  /**
   * What the versions retained after this publish hold beyond the replaced chain (which the plan
   * counts already).
   */
  private static long retainedBytes(FilterRun ctx, PublishedSnapshot current) {
    if (current == null || current.manifest() == null) {
      return 0;
    }
    return RetainedVersions.of(current.configMap())
        .after(current.manifest(), SnapshotStore.keepVersions(ctx.filter()))
        .storedBytesBeyond(current.manifest());
  }

  private FilterBuilder.Result buildFilter(
      FilterRun ctx, PublishedSnapshot current, BuildSlots.Slot slot)
      throws SourceException, PublishException {
    ResolvedSpec spec = ctx.spec();
    boolean inObjectStore = ctx.store().storeName() != null;
    BuildProgressReporter progress =
        new BuildProgressReporter(ctx.client(), ctx.filter(), statusBudget);
    progress.started(ctx.report().buildStarting());
    try (BuildGuard guard = new BuildGuard(ctx.source(), settings.builds().limits(), slot)) {
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
                                  : settings.sources().maxMalformedKeys(),
                              settings.snapshots().maxBytes(inObjectStore),
                              publishedGeometry(current, spec),
                              spec.format()),
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
          e.getMessage()
              + (inObjectStore
                  ? " (operator limit BLOOM_MAX_STORE_SNAPSHOT_BYTES)"
                  : " (operator limit BLOOM_MAX_SNAPSHOT_BYTES)")
              + "; nothing was published",
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
