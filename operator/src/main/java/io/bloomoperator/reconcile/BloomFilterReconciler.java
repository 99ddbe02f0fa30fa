package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.publish.NamespaceBudget;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.publish.WriteBudgetExceeded;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.KeySources;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.source.SourceException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.retry.GradualRetry;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a BloomFilter into a published snapshot: <b>observe</b> (resolve the spec, read the
 * published manifest once, check it is ours, clean up what no reader needs, ask the source for its
 * change token), <b>decide</b> ({@link Decision}: build, wait, or nothing to do), <b>plan</b>
 * (build, then {@link PublishPlan}, pure), <b>apply</b> ({@link SnapshotStore#apply}) and
 * <b>record</b> ({@link StatusReport}: status, events, next reconcile).
 *
 * <p>Failures of the source or of a publish leave the last good snapshot published and untouched,
 * set Ready=False with a reason from {@link Reasons}, and retry with a backoff that grows with the
 * time the failure has lasted (no hot loop, no state outside the resource).
 */
@ControllerConfiguration(
    name = BloomFilterReconciler.NAME,
    generationAwareEventProcessing = false,
    informer = @Informer(onUpdateFilter = RebuildRequest.class))
@GradualRetry(
    maxAttempts = -1,
    initialInterval = 1000,
    intervalMultiplier = 2,
    maxInterval = 300_000)
public class BloomFilterReconciler implements Reconciler<BloomFilter> {

  public static final String NAME = "bloomfilter";

  /** When a reconcile the write fence stopped runs again, should this replica still be alive. */
  static final Duration NOT_LEADER_RETRY = Duration.ofSeconds(5);

  private static final Logger LOG = LoggerFactory.getLogger(BloomFilterReconciler.class);

  private final OperatorSettings settings;
  private final Clock clock;
  private final BuildMetrics metrics;
  private final StorageFullFailures storageFull = new StorageFullFailures();

  /** Bounds the bit arrays alive at once; a build holds its slot until its publish is done. */
  private final BuildSlots buildSlots;

  /** Bounds the reconcile threads one namespace's builds occupy. */
  private final NamespaceBuilds namespaceBuilds;

  /** Backs off filters whose build made the operator die. */
  private final BuildCrashes crashes;

  /** Bytes each namespace and filter wrote to etcd in the last hour. */
  private final WriteBudget writeBudget;

  /** This replica's identity, stamped on what it writes; null for none. */
  private final String publisher;

  /** Asked before the janitor's deletes and each manifest write. */
  private final WriteFence fence;

  /** Whether a published manifest is the one this operator wrote, before anything of it is used. */
  private final OwnManifests ownManifests = new OwnManifests();

  /**
   * @param publisher this replica's identity (its leader-election identity), stamped on every
   *     snapshot ConfigMap it writes as {@link
   *     io.bloomoperator.publish.ManifestWriter#ANNOTATION_PUBLISHED_BY}; null for none
   * @param fence asked before the janitor's deletes and each manifest write: a replica that lost
   *     the leader Lease while frozen must not touch what the new leader publishes
   */
  public BloomFilterReconciler(
      OperatorSettings settings,
      Clock clock,
      BuildMetrics metrics,
      String publisher,
      WriteFence fence) {
    this.publisher = publisher;
    this.fence = fence;
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
    this.buildSlots = new BuildSlots(settings.maxConcurrentBuilds());
    this.namespaceBuilds = new NamespaceBuilds(settings.builds().maxBuildsPerNamespace());
    this.crashes = new BuildCrashes(clock.instant(), metrics);
    this.writeBudget = new WriteBudget(settings.writes(), metrics::etcdWritten);
  }

  /**
   * Watches the operator's manifest ConfigMaps, so a manifest deleted or edited by someone else is
   * repaired, without caching them ({@link ManifestEvents}: look-alikes cost no memory). Chunks are
   * never watched.
   */
  @Override
  public List<EventSource<?, BloomFilter>> prepareEventSources(
      EventSourceContext<BloomFilter> context) {
    return List.of(
        new ManifestEvents(
            context.getClient(),
            context.getControllerConfiguration().getEffectiveNamespaces(),
            context.getPrimaryCache()));
  }

  @Override
  public UpdateControl<BloomFilter> reconcile(BloomFilter filter, Context<BloomFilter> context) {
    KubernetesClient client = context.getClient();
    Instant now = clock.instant();
    EventRecorder events = new EventRecorder(client, clock);
    StatusReport report = new StatusReport(filter, client, events, metrics, storageFull, now);
    Optional<Instant> fullSince = storageFull.unrecordedSince(filter);
    if (fullSince.isPresent()) {
      // The last publish failed because etcd was full, when the status could not say so. Say it
      // now (if etcd has room again), then try again.
      UpdateControl<BloomFilter> stillFull =
          report.failed(
              Reasons.STORAGE_FULL,
              StorageFull.DESCRIPTION
                  + " since "
                  + fullSince.get().truncatedTo(ChronoUnit.SECONDS)
                  + ": no new version could be published; the published version kept serving",
              true);
      if (!report.written()) {
        return stillFull;
      }
      report = new StatusReport(filter, client, events, metrics, storageFull, now);
    }
    // Before anything reads the source: a source that made the operator die must not do it again
    // right after the restart.
    Optional<UpdateControl<BloomFilter>> crashed = crashes.check(filter, report, now);
    if (crashed.isPresent()) {
      return crashed.get();
    }
    FilterContext ctx;
    try {
      ctx = open(filter, client, now, report, events);
    } catch (IllegalArgumentException e) {
      // What the schema could not reject; retrying cannot help, a spec change reconciles anyway.
      return report.failed(Reasons.INVALID_SPEC, e.getMessage(), false);
    }
    try {
      Observed seen = observe(ctx);
      String token = ctx.source().changeToken();
      Decision decision =
          Decision.decide(
              Decision.Published.of(seen.current()),
              token,
              filter.getMetadata().getGeneration(),
              RebuildRequest.pending(filter),
              ctx.spec().refresh(),
              settings.minPublishInterval(),
              now);
      PublishedSnapshot current = seen.current();
      Optional<Duration> graceLeft = seen.graceLeft();
      switch (decision.action()) {
        case WAIT -> {
          LOG.debug(
              "{}/{}: next publish allowed in {}", ctx.namespace(), ctx.name(), decision.delay());
          return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(decision.delay());
        }
        case BUILD -> {
          Optional<Published> published = buildAndPublish(ctx, current, token, decision.routine());
          if (published.isEmpty()) {
            // The namespace has its share of reconcile threads building: give this one back.
            return UpdateControl.<BloomFilter>noUpdate()
                .rescheduleAfter(NamespaceBuilds.retryDelay());
          }
          current = published.get().state();
          if (published.get().plan().newVersion()) {
            graceLeft = Optional.of(ctx.spec().retainPrevious()); // the version just replaced
          }
        }
        case UP_TO_DATE -> {
          current = restampIfDue(ctx, current);
          report.published(current);
        }
      }
      return report.ready(
          Decision.nextCheck(
              ctx.spec().refresh(),
              token != null,
              current.builtAt(),
              wake(current, graceLeft, now),
              now));
    } catch (SourceException | PublishException | IOException | WriteFence.NotLeaderException e) {
      return failed(ctx, e);
    }
  }

  /** Everything one reconcile works with, composed once. */
  private FilterContext open(
      BloomFilter filter,
      KubernetesClient client,
      Instant now,
      StatusReport report,
      EventRecorder events) {
    String namespace = filter.getMetadata().getNamespace();
    ResolvedSpec spec = ResolvedSpec.of(filter.getSpec(), settings.minRefreshInterval());
    metrics.refreshInterval(filter, spec.refresh());
    KeySource source =
        KeySources.from(
            filter.getSpec().getSource(),
            client,
            new SecretAccess(
                client, namespace, filter.getMetadata().getName(), settings.secretAccess()),
            settings.http(),
            settings.jdbc());
    // One store per reconcile: reads, the janitor, publishing and re-stamping all go through its
    // fenced, stamped manifest writer and its chunk store.
    SnapshotStore store =
        new SnapshotStore(client, filter, settings.signingKey()).writingAs(publisher, fence);
    return new FilterContext(filter, client, now, spec, source, store, report, events);
  }

  /** The published state, read once and trusted, after the chunk clean-up. */
  private record Observed(PublishedSnapshot current, Optional<Duration> graceLeft) {}

  /**
   * Reads the manifest once, keeps of it only what {@link OwnManifests} trusts, and lets the
   * janitor clean by that state (never by a foreign manifest): leftovers of an interrupted publish
   * go before anything is written under their names.
   */
  private Observed observe(FilterContext ctx) throws PublishException, IOException {
    OwnManifests.Checked checked = ownManifests.check(ctx.filter(), ctx.store().read(), ctx.now());
    if (checked.foreign()) {
      LOG.warn("{}/{}: {}", ctx.namespace(), ctx.name(), checked.problem());
      ctx.events().warning(ctx.filter(), OwnManifests.EVENT_REASON, checked.problem());
      ctx.report().sawVersion(checked.seenVersion());
      if (checked.usable().manifest() == null) {
        return new Observed(checked.usable(), Optional.empty());
      }
    }
    // The janitor deletes by what was just read: a replica frozen since, and no longer the
    // leader, would delete the chunks of versions the new leader published.
    fence.check();
    SnapshotJanitor.Cleaned cleaned =
        SnapshotJanitor.clean(
            ctx.store(), checked.usable(), ctx.spec().retainPrevious(), ctx.now());
    return new Observed(cleaned.state(), cleaned.graceLeft());
  }

  /** When to wake up besides the refresh: the end of a grace period or the next re-stamp. */
  private Optional<Duration> wake(
      PublishedSnapshot current, Optional<Duration> graceLeft, Instant now) {
    return SnapshotStore.restampDue(settings.signingKey(), current, now)
        .map(d -> d.compareTo(Decision.MIN_DELAY) < 0 ? Decision.MIN_DELAY : d)
        .map(d -> graceLeft.filter(g -> g.compareTo(d) < 0).orElse(d))
        .or(() -> graceLeft);
  }

  /** The status, metric and retry of a failed reconcile. */
  private UpdateControl<BloomFilter> failed(FilterContext ctx, Exception e) {
    StatusReport report = ctx.report();
    if (e instanceof SourceException source) {
      metrics.sourceFailed(source.reason());
      return report.failed(
          source.reason(), ctx.source().description() + ": " + source.getMessage(), true);
    }
    if (e instanceof WriteBudgetExceeded budget) {
      metrics.publishFailed(budget.reason());
      UpdateControl<BloomFilter> control =
          report.failed(budget.reason(), budget.getMessage(), true);
      // Not before the budget has room: an earlier retry would be refused again.
      return budget
          .retryAfter(ctx.now())
          .map(left -> control.rescheduleAfter(left.plus(Decision.MIN_DELAY)))
          .orElse(control);
    }
    if (e instanceof PublishException publish) {
      metrics.publishFailed(publish.reason());
      return report.failed(publish.reason(), publish.getMessage(), true);
    }
    if (e instanceof IOException) {
      metrics.publishFailed(Reasons.PUBLISH_FAILED);
      return report.failed(
          Reasons.PUBLISH_FAILED, "chunk clean-up failed; see the operator log", true);
    }
    // Not the leader: not ours to report either, the status belongs to the leader. This
    // replica's leader elector notices at its next renewal and ends the process; if the Lease
    // only could not be read, try again soon.
    LOG.warn("{}/{}: not writing, not the leader: {}", ctx.namespace(), ctx.name(), e.getMessage());
    return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(NOT_LEADER_RETRY);
  }

  /**
   * {@code current} (trusted) written again with a fresh, signed createdAt when the signed one is
   * older than the re-stamp interval, so readers with a maximum manifest age keep accepting it.
   */
  private PublishedSnapshot restampIfDue(FilterContext ctx, PublishedSnapshot current)
      throws PublishException {
    if (settings.signingKey() == null || !ctx.store().restampIfDue(current, ctx.now())) {
      return current;
    }
    ownManifests.wrote(ctx.filter(), ctx.store().written());
    return ctx.store().written();
  }

  /** What a publish planned and the published state it left. */
  private record Published(PublishPlan plan, PublishedSnapshot state) {}

  /**
   * Builds from the source in a build slot, then plans and applies the publish; empty when the
   * namespace already has its share of builds running.
   */
  private Optional<Published> buildAndPublish(
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
        metrics.published(manifest.versionBytes(), Duration.ofNanos(System.nanoTime() - start));
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
                  new FilterBuilder(progress)
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
      metrics.built(built.keys(), built.took());
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

  @Override
  public ErrorStatusUpdateControl<BloomFilter> updateErrorStatus(
      BloomFilter filter, Context<BloomFilter> context, Exception e) {
    if (StorageFull.causedBy(e)) {
      // Expected while etcd is full (a write outside a publish was refused); no status can be
      // written either. java-operator-sdk retries with its backoff.
      LOG.warn(
          "{}/{}: {}: {}; retrying",
          filter.getMetadata().getNamespace(),
          filter.getMetadata().getName(),
          Reasons.STORAGE_FULL,
          StorageFull.DESCRIPTION);
      return ErrorStatusUpdateControl.noStatusUpdate();
    }
    // The exception's text may come from anywhere (a driver, a server): the log has it, the
    // status only names the kind of error.
    LOG.warn(
        "{}/{}: unexpected error",
        filter.getMetadata().getNamespace(),
        filter.getMetadata().getName(),
        e);
    new StatusReport(
            filter,
            context.getClient(),
            new EventRecorder(context.getClient(), clock),
            metrics,
            storageFull,
            clock.instant())
        .failed(
            Reasons.RECONCILE_ERROR,
            "unexpected " + e.getClass().getSimpleName() + "; see the operator log",
            false);
    return ErrorStatusUpdateControl.noStatusUpdate();
  }
}
