package io.bloomoperator.build;

import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.changes.ChangeStream;
import io.bloomoperator.changes.CountingShadows;
import io.bloomoperator.changes.HeldBits;
import io.bloomoperator.changes.StreamLimits;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.BuildRecord;
import io.bloomoperator.publish.DeltaPolicy;
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
import io.bloomoperator.publish.StoreReservations;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.rollout.HoldPolicies;
import io.bloomoperator.rollout.Rollout;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterBits;
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

  /** What a publish tells the status, events and metrics. */
  private final PublishReports reports;

  /** Reads the source into a new filter, in a slot. */
  private final SourceBuild sourceBuild;

  /** The same budget, charged with status writes. */
  private final StatusBudget statusBudget;

  /** Told about every manifest written, so the next reconcile recognises it as the operator's. */
  private final OwnManifests ownManifests;

  /** The payload each filter last published, so its next delta needs no read-back of the chain. */
  private final PublishedPayloads payloads;

  /** The same for filters with a change stream, off the heap and for sure (not softly). */
  private final HeldBits held;

  /** The counting shadows of filters whose stream deletes are applied by deltas. */
  private final CountingDeletions counting;

  public BuildAndPublish(
      OperatorSettings settings, BuildMetrics metrics, OwnManifests ownManifests) {
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
    this.reports = new PublishReports(metrics);
    this.sourceBuild = new SourceBuild(settings, metrics, buildWorkers, statusBudget);
    this.payloads = new PublishedPayloads(settings.snapshots().maxStoreBytes());
    StreamLimits streams = settings.sources().streams();
    this.held =
        new HeldBits(streams.heldDir(), streams.maxHeldBytes(), streams.maxHeldNamespaceBytes());
    this.counting =
        new CountingDeletions(
            new CountingShadows(
                streams.heldDir(),
                streams.maxCountingBytes(),
                streams.maxCountingNamespaceBytes()));
  }

  /** How every new version's writes are charged, publishes and republishes alike. */
  public PublishCharges charges() {
    return charges;
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
   * rollout controls held ({@code plan} null, {@code state} the unchanged published state). {@code
   * stable}: the built bits are now the published version of a filter with a change stream, on the
   * stable chain (not a canary), so the stream's deltas extend exactly them.
   */
  public record Published(
      PublishPlan plan, PublishedSnapshot state, HeldBuild held, Manifest canary, boolean stable) {

    Published(PublishPlan plan, PublishedSnapshot state, HeldBuild held, Manifest canary) {
      this(plan, state, held, canary, false);
    }
  }

  /**
   * Builds from the source in a build slot, then plans and applies the publish; empty when the
   * namespace already has its share of builds running.
   */
  public Optional<Published> run(
      FilterRun ctx, PublishedSnapshot current, String token, boolean routine)
      throws SourceException, PublishException {
    Optional<NamespaceBuilds.Entry> place = enter(ctx);
    if (place.isEmpty()) {
      return Optional.empty();
    }
    BuildEvents events = new BuildEvents(ctx.events(), ctx.filter());
    String source = ctx.source().description();
    events.started(source, routine);
    // Taken before the scan: the stream resumes from there, so nothing between is missed (for
    // PostgreSQL, the scan reads in the snapshot taken at that position).
    StreamPublish.Scan scan = StreamPublish.scan(ctx, metrics);
    String position = scan.position();
    // The slot is taken inside the build, once the source delivers keys, and held until the
    // publish is done: the bit array lives that long.
    try (scan;
        NamespaceBuilds.Entry entry = place.get();
        BuildSlots.Slot slot = buildSlots.slot(ctx.namespace())) {
      FilterBuilder.Result built;
      CountingDeletions.Build counted = counting.build(ctx, position);
      try (scan) {
        // The snapshot is held (an idle replication connection) for the scan only.
        built = sourceBuild.build(ctx, scan.source(), current, slot, counted);
      }
      Optional<HeldBuild> held = hold(ctx, current, built, token);
      if (held.isPresent()) {
        if (counted != null) {
          counted.discard();
        }
        ctx.report().published(current);
        ctx.report().built(built);
        return Optional.of(new Published(null, current, held.get(), null));
      }
      long start = System.nanoTime();
      BuildRecord record =
          new BuildRecord(token, ctx.filter().getMetadata().getGeneration(), ctx.now())
              .at(position)
              .inSlot(ctx.changes() == null ? null : ctx.changes().slot());
      Published outcome = publish(ctx, built, current, record, true);
      if (counted != null && outcome.canary() != null) {
        counted.discard(); // a canary is not the stable chain the stream's deltas extend
      }
      if (ctx.changes() != null && outcome.canary() == null) {
        // A full build applied every delete and malformed event before it: the stream starts over.
        StreamStatus stream = new StreamStatus();
        stream.setPosition(position);
        if (counted != null) {
          stream.setDeletions(counted.published(outcome.state(), outcome.stable()));
        }
        // What the stream holds outside the operator (a replication slot) outlives a build.
        ctx.changes().describe(stream);
        ctx.report().stream(stream);
      }
      ownManifests.wrote(ctx.filter(), outcome.state());
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      if (outcome.canary() != null) {
        reports.announced(ctx, built, outcome.state(), outcome.canary(), current, token, took);
      } else {
        reports.published(ctx, built, outcome.state(), outcome.plan(), routine, took);
      }
      return Optional.of(outcome);
    }
  }

  /**
   * What a stream publish did.
   *
   * @param published the publish
   * @param deletesApplied deletes published by this version (counting deletions)
   * @param deletesPending deletes left to the next full build
   * @param deletions what {@code status.stream.deletions} says now; null: nothing to say
   */
  public record StreamPublished(
      Published published, long deletesApplied, long deletesPending, String deletions) {}

  /**
   * Publishes {@code current} with {@code batch}'s adds added (and, when the filter counts deletes,
   * the bits of its deleted keys cleared), as a delta over it (or whatever {@link PublishPlan#plan}
   * decides), recording the stream at the batch's next position; in a build slot, charged like a
   * build. Empty when the namespace has its share of builds running.
   */
  public Optional<StreamPublished> publishChanges(
      FilterRun ctx, PublishedSnapshot current, ChangeStream.Batch batch) throws PublishException {
    String position = batch.next().text();
    Optional<NamespaceBuilds.Entry> place = enter(ctx);
    if (place.isEmpty()) {
      return Optional.empty();
    }
    String uid = ctx.filter().getMetadata().getUid();
    try (NamespaceBuilds.Entry entry = place.get();
        BuildSlots.Slot slot = buildSlots.slot(ctx.namespace())) {
      long start = System.nanoTime();
      slot.reserve();
      BloomFilterBits base = held.of(uid, current.manifest());
      if (base == null) {
        base = payloads.of(uid, current.manifest());
      }
      if (base == null) {
        base = ctx.store().materialize(current.manifest());
      }
      CountingDeletions.Applied deletes = counting.apply(ctx, current, batch);
      FilterBuilder.Result built =
          StreamPublish.withChanges(
              base, current.manifest(), batch.adds(), deletes.clears(), deletes.applied(), start);
      BuildRecord record =
          new BuildRecord(
                  current.sourceToken(), current.specGeneration(), current.builtAt(), position)
              .inSlot(ctx.changes() == null ? null : ctx.changes().slot());
      Published outcome = publish(ctx, built, current, record, false);
      ownManifests.wrote(ctx.filter(), outcome.state());
      if (outcome.plan().newVersion()) {
        metrics.published(
            ctx.filter(),
            outcome.state().manifest().versionBytes(),
            Duration.ofNanos(System.nanoTime() - start));
      }
      ctx.report().published(outcome.state());
      if (outcome.stable()) {
        CountingDeletions.published(deletes, outcome.state().manifest().sha256());
      }
      return Optional.of(
          new StreamPublished(
              outcome,
              outcome.stable() ? deletes.applied() : 0,
              deletes.pending(),
              deletes.state()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PublishException(Reasons.PUBLISH_FAILED, "interrupted waiting for a build slot", e);
    } catch (io.bloomoperator.snapshot.SnapshotVerificationException | java.io.IOException e) {
      throw new PublishException(
          Reasons.PUBLISH_FAILED,
          "the published version could not be read back to add the stream's keys to",
          e);
    }
  }

  /** Drops what is held for a filter that is gone. */
  public void forget(String uid) {
    payloads.forget(uid);
    held.forget(uid);
    counting.forget(uid);
  }

  /** Drops the stream payload of a filter that no longer has a change stream. */
  public void forgetStream(String uid) {
    held.forget(uid);
    counting.forget(uid);
  }

  /**
   * A place among the namespace's builds, or empty when it has its share running.
   *
   * @throws PublishException when the write budget is spent: a build whose publish could not be
   *     written anyway would only load the source
   */
  private Optional<NamespaceBuilds.Entry> enter(FilterRun ctx) throws PublishException {
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
    }
    return place;
  }

  /** The record of {@code built} when the rollout controls hold it ({@link HoldPolicies}). */
  private Optional<HeldBuild> hold(
      FilterRun ctx, PublishedSnapshot current, FilterBuilder.Result built, String token) {
    Manifest published = current == null ? null : current.manifest();
    Optional<HeldBuild> held =
        HoldPolicies.hold(
            new HoldPolicies.Build(
                ctx.filter(),
                ctx.report().canary(),
                published,
                built.keys(),
                SnapshotEncoder.sha256(built.bits())),
            token,
            ctx.now());
    held.ifPresent(
        h ->
            LOG.info(
                "{}/{}: build of {} keys held ({}), version {} keeps serving",
                ctx.namespace(),
                ctx.name(),
                built.keys(),
                h.getReason(),
                published.version()));
    return held;
  }

  /**
   * Plans the publish of {@code built} over {@code current} ({@link PublishPlan}, pure), charges
   * its writes to the write budget before anything is written (a publish that fails half-way has
   * written to etcd's history too) and applies it.
   */
  private Published publish(
      FilterRun ctx,
      FilterBuilder.Result built,
      PublishedSnapshot current,
      BuildRecord record,
      boolean shaped)
      throws PublishException {
    long payloadSize = SnapshotEncoder.payloadSize(built.bits());
    int chunkSize =
        writeBudget.chunkSize(ctx.spec().chunkSize(), payloadSize, SnapshotSpec.MAX_CHUNK_BYTES);
    // A stream's deltas (not shaped) grow a longer chain before it is compacted (DeltaPolicy).
    DeltaPolicy deltas =
        shaped
            ? settings.publishing().deltas()
            : settings.publishing().deltas().forStream(payloadSize);
    String uid = ctx.filter().getMetadata().getUid();
    // current is what OwnManifests trusts: a held payload is used only for that very version.
    PublishPlan.Facts facts =
        ctx.store()
            .facts(
                built.bits(),
                current,
                deltas,
                chunkSize,
                payloads.of(uid, current == null ? null : current.manifest()));
    PublishPlan plan =
        PublishPlan.plan(
            current == null ? null : current.manifest(),
            facts,
            deltas,
            // Chunks in an object store count against the store's budgets, not etcd's.
            ctx.store()
                .backend()
                .namespaceBudget(
                    new PublishPlan.Budget(
                        ctx.namespace(),
                        settings.snapshots().maxNamespaceBytes(),
                        () ->
                            NamespaceBudget.publishedBytesExcept(
                                ctx.client(), ctx.namespace(), ctx.name()),
                        retainedBytes(ctx, current))),
            ctx.report().lastKnownVersion(),
            ctx.now());
    // A rollout mode may change how the new version goes out (a canary announces it); a stream's
    // adds to the version it already judged are not shaped (docs/changes.md).
    if (shaped) {
      plan = Rollout.shape(ctx.filter(), plan);
    }
    SnapshotStore.Written written;
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
      written =
          ctx.store()
              .apply(
                  plan,
                  current,
                  new SnapshotStore.Payload(built.bits(), built.keys(), facts),
                  record);
    }
    PublishedSnapshot state = written.state();
    boolean stable = false;
    if (state != null
        && state.manifest() != null
        && state.manifest().sha256().equals(facts.sha256())) {
      payloads.published(uid, state.manifest(), built.bits());
      if (ctx.changes() != null && written.canary() == null) {
        held.hold(uid, ctx.namespace(), state.manifest(), built.bits());
        stable = true;
      }
    } else {
      held.forget(uid);
    }
    return new Published(plan, state, null, written.canary(), stable);
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
}
