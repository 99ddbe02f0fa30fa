package io.bloomoperator.reconcile;

import io.bloomoperator.backend.FormerStores;
import io.bloomoperator.backend.StoreObjectsFinalizer;
import io.bloomoperator.build.BuildAndPublish;
import io.bloomoperator.build.BuildCrashes;
import io.bloomoperator.build.NamespaceBuilds;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.rollout.CanaryRollout;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.rollout.RolloutReporting;
import io.bloomoperator.run.Decision;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.status.CanaryRecords;
import io.bloomoperator.status.OwnStatusWrites;
import io.bloomoperator.status.StatusReport;
import io.bloomoperator.status.StorageFullFailures;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.objectstore.DefaultStores;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.objectstore.S3ChunkStore;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.publish.ChunkWriters;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.publish.StoreBudget;
import io.bloomoperator.publish.StoreUnavailableException;
import io.bloomoperator.publish.WriteBudgetExceeded;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.KeySources;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.source.SourceException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
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
import java.util.Map;
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
    // Deletions reach reconcile (StoreObjectsFinalizer), and the finalizer is added only to the
    // filters that use an object store, not to all of them as a Cleaner would.
    triggerReconcilerOnAllEvents = true,
    informer = @Informer(onUpdateFilter = ReconcileTriggers.class))
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

  /** Backs off filters whose build made the operator die. */
  private final BuildCrashes crashes;

  /** This replica's identity, stamped on what it writes; null for none. */
  private final String publisher;

  /** Asked before the janitor's deletes and each manifest write. */
  private final WriteFence fence;

  /** Whether a published manifest is the one this operator wrote, before anything of it is used. */
  private final OwnManifests ownManifests = new OwnManifests();

  /** Whether the filter a reconcile is handed may lag the status this operator last wrote. */
  private final OwnStatusWrites ownStatus = new OwnStatusWrites();

  /** How reader reports are counted into status.readers. */
  private ReaderSettings readerSettings = ReaderSettings.defaults();

  /** Build, plan and apply, under the operator-wide build and write bounds. */
  private final BuildAndPublish act;

  /** The object stores filters may keep their chunks in. */
  private final ObjectStores stores;

  /** Creates chunks several at once, shared by every publish (BLOOM_PUBLISH_WRITERS). */
  private final ChunkWriters chunkWriters;

  /** Deletes a deleted filter's objects from its store. */
  private final StoreObjectsFinalizer storeObjects;

  /** The stores a filter moved away from, whose objects the janitor removes. */
  private final FormerStores formerStores;

  /** The canary records this process wrote, ahead of the cached status. */
  private final CanaryRecords canaryRecords = new CanaryRecords();

  /** The reader aggregation, once the controller registered it: canaries are judged from it. */
  private volatile ReaderRollouts readerRollouts;

  /** The BloomStores large filters naming none go to; set when the event sources are prepared. */
  private volatile DefaultStores defaultStores;

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
    this(
        settings,
        clock,
        metrics,
        publisher,
        fence,
        new ObjectStores(
            StoreSettings.fromEnvironment(Map.of()), settings.sources().http().egress()));
  }

  /**
   * As the other constructor, with the object stores filters may use.
   *
   * @param stores resolves and connects to {@code spec.snapshot.store}
   */
  public BloomFilterReconciler(
      OperatorSettings settings,
      Clock clock,
      BuildMetrics metrics,
      String publisher,
      WriteFence fence,
      ObjectStores stores) {
    this.stores = stores;
    this.storeObjects = new StoreObjectsFinalizer(stores);
    this.formerStores = new FormerStores(stores, clock);
    this.publisher = publisher;
    this.fence = fence;
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
    this.crashes = new BuildCrashes(clock.instant(), metrics);
    this.act = new BuildAndPublish(settings, metrics, ownManifests);
    this.chunkWriters = ChunkWriters.of(settings.builds().limits().publishWriters());
  }

  /**
   * How reader reports are counted (default: {@link ReaderSettings#defaults()}); set before the
   * reconciler is registered.
   */
  public BloomFilterReconciler withReaderSettings(ReaderSettings settings) {
    this.readerSettings = java.util.Objects.requireNonNull(settings, "settings");
    return this;
  }

  /**
   * Watches the operator's manifest ConfigMaps, so a manifest deleted or edited by someone else is
   * repaired, without caching them ({@link ManifestEvents}: look-alikes cost no memory). Chunks are
   * never watched. Counts the readers' reports into status.readers ({@link ReaderRollouts}).
   */
  @Override
  public List<EventSource<?, BloomFilter>> prepareEventSources(
      EventSourceContext<BloomFilter> context) {
    defaultStores = new DefaultStores(context.getClient());
    return List.of(
        defaultStores,
        new ManifestEvents(
            context.getClient(),
            context.getControllerConfiguration().getEffectiveNamespaces(),
            context.getPrimaryCache()),
        readerRollouts =
            new ReaderRollouts(
                context.getClient(),
                context.getControllerConfiguration().getEffectiveNamespaces(),
                context.getPrimaryCache(),
                readerSettings,
                fence,
                act.statusBudget(),
                clock,
                new RolloutReporting(context.getClient(), clock, metrics)));
  }

  private StatusReport report(
      BloomFilter filter, KubernetesClient client, EventRecorder events, Instant now) {
    return new StatusReport(
        filter, client, act.statusBudget(), events, metrics, storageFull, ownStatus, now);
  }

  private CanaryRollout canaries() {
    return new CanaryRollout(
        act, ownManifests, () -> readerRollouts, readerSettings.statusInterval());
  }

  @Override
  public UpdateControl<BloomFilter> reconcile(BloomFilter handed, Context<BloomFilter> context) {
    if (context.isPrimaryResourceDeleted()) {
      ownStatus.forget(handed);
      return UpdateControl.noUpdate(); // gone: the garbage collector takes its ConfigMaps
    }
    KubernetesClient client = context.getClient();
    // Everything below decides on and writes back this status: never one older than our own.
    BloomFilter filter = ownStatus.current(handed, client);
    Instant now = clock.instant();
    EventRecorder events = new EventRecorder(client, clock);
    if (filter.isMarkedForDeletion()) {
      return storeObjects.finish(filter, context, events, now);
    }
    StatusReport report = report(filter, client, events, now);
    report.trackingCanary(canaryRecords);
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
      report = report(filter, client, events, now);
      report.trackingCanary(canaryRecords);
    }
    // Before anything reads the source: a source that made the operator die must not do it again
    // right after the restart.
    Optional<UpdateControl<BloomFilter>> crashed = crashes.check(filter, report, now);
    if (crashed.isPresent()) {
      return crashed.get();
    }
    FilterRun ctx;
    try {
      ctx = open(filter, client, now, report, events);
    } catch (IllegalArgumentException e) {
      // What the schema could not reject; retrying cannot help, a spec change reconciles anyway.
      return report.failed(Reasons.INVALID_SPEC, e.getMessage(), false);
    }
    try {
      ctx = inObjectStore(ctx, context);
      Observed seen = observe(ctx);
      String token = ctx.source().changeToken();
      Decision decision =
          Decision.decide(
              Decision.Published.of(seen.current()),
              token,
              filter.getMetadata().getGeneration(),
              RebuildRequest.pending(filter),
              ctx.spec().refresh(),
              settings.publishing().minInterval(),
              now);
      PublishedSnapshot current = seen.current();
      Optional<Duration> graceLeft = seen.graceLeft();
      Optional<PinOutcome> pin = pin(ctx, current, token);
      if (pin.isPresent() && pin.get().failure() != null) {
        return pin.get().failure();
      }
      if (pin.isPresent() && pin.get().rolledBack() != null) {
        current = pin.get().rolledBack();
        graceLeft = Optional.of(ctx.spec().retainPrevious());
        report.published(current);
        report.retained(RetainedVersions.of(current.configMap()));
        // Readers already serve the pinned payload: nothing to build until the source changes.
        return report.ready(
            Reasons.ROLLOUT_PINNED,
            pinNote(filter),
            Decision.nextCheck(
                ctx.spec().refresh(), token != null, now, wake(current, graceLeft, now), now));
      }
      if (current != null && current.manifest() != null) {
        CanaryRollout.Step canary = canaries().step(ctx, current);
        if (canary.done() != null) {
          return canary.done();
        }
        current = canary.current();
      }
      if (decision.action() == Decision.Action.BUILD
          && current != null
          && current.manifest() != null
          && RolloutGate.heldIsCurrent(
              filter, token, ctx.spec().refresh(), now, RebuildRequest.pending(filter))) {
        // The held build still stands for the source: reading it again would hold the same.
        report.published(current);
        return held(ctx, current, report.held(), token, graceLeft);
      }
      switch (decision.action()) {
        case WAIT -> {
          LOG.debug(
              "{}/{}: next publish allowed in {}", ctx.namespace(), ctx.name(), decision.delay());
          return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(decision.delay());
        }
        case BUILD -> {
          Optional<BuildAndPublish.Published> published =
              act.run(ctx, current, token, decision.routine());
          if (published.isEmpty()) {
            // The namespace has its share of reconcile threads building: give this one back.
            return UpdateControl.<BloomFilter>noUpdate()
                .rescheduleAfter(NamespaceBuilds.retryDelay());
          }
          if (published.get().held() != null) {
            report.held(published.get().held());
            return held(ctx, current, published.get().held(), token, graceLeft);
          }
          current = published.get().state();
          if (published.get().canary() != null) {
            CanaryRollout canaries = canaries();
            return report.ready(
                Reasons.CANARY_RUNNING,
                CanaryRollout.note(report.canary()),
                Optional.of(canaries.judgeAgain()));
          }
          if (published.get().plan().newVersion()) {
            graceLeft = Optional.of(ctx.spec().retainPrevious()); // the version just replaced
          }
        }
        case UP_TO_DATE -> {
          current = restampIfDue(ctx, current);
          report.published(current);
        }
      }
      Optional<Duration> next =
          Decision.nextCheck(
              ctx.spec().refresh(),
              token != null,
              current.builtAt(),
              wake(current, graceLeft, now),
              now);
      if (RolloutGate.rollout(filter).getPinVersion() != null) {
        return report.ready(Reasons.ROLLOUT_PINNED, pinNote(filter), next);
      }
      return report.ready(next);
    } catch (SourceException | PublishException | IOException | WriteFence.NotLeaderException e) {
      return failed(ctx, e);
    }
  }

  /**
   * The pin step: with spec.rollout.pinVersion set, the published version must serve that retained
   * version's payload; if it does not yet, it is published again as a new version ({@link
   * BuildAndPublish#rollBack}). Only a retained manifest that matches the operator's record in
   * {@code status.retainedVersions} is published again.
   *
   * @param rolledBack the state after a rollback publish
   * @param failure the finished reconcile when the pin cannot be served
   */
  private record PinOutcome(PublishedSnapshot rolledBack, UpdateControl<BloomFilter> failure) {}

  private Optional<PinOutcome> pin(FilterRun ctx, PublishedSnapshot current, String token)
      throws PublishException {
    Long pin = RolloutGate.rollout(ctx.filter()).getPinVersion();
    if (pin == null) {
      ctx.report().pinned(null);
      return Optional.empty();
    }
    Manifest published = current == null ? null : current.manifest();
    if (published != null && published.version() == pin) {
      ctx.report().pinned(pin);
      return Optional.empty();
    }
    Optional<Manifest> target =
        published == null
            ? Optional.empty()
            : RetainedVersions.of(current.configMap())
                .trusted(ctx.filter().getStatus())
                .first(SnapshotStore.keepVersions(ctx.filter()))
                .version(pin);
    if (target.isEmpty()) {
      return Optional.of(
          new PinOutcome(
              null,
              ctx.report()
                  .failed(
                      Reasons.VERSION_NOT_RETAINED,
                      "spec.rollout.pinVersion "
                          + pin
                          + " is not a retained version (status.retainedVersions; keep more with"
                          + " spec.snapshot.keepVersions); the published version keeps serving",
                      false)));
    }
    ctx.report().pinned(pin);
    if (target.get().sha256().equals(published.sha256())) {
      return Optional.empty(); // serving it already
    }
    PublishedSnapshot rolledBack = act.rollBack(ctx, current, target.get(), token);
    String message =
        "version "
            + rolledBack.manifest().version()
            + " serves the payload of retained version "
            + pin
            + " ("
            + target.get().keyCount()
            + " keys), replacing version "
            + published.version();
    LOG.info("{}/{}: {}", ctx.namespace(), ctx.name(), message);
    ctx.events().normal(ctx.filter(), "RolledBack", message);
    return Optional.of(new PinOutcome(rolledBack, null));
  }

  private static String pinNote(BloomFilter filter) {
    return "; pinned to the payload of version "
        + RolloutGate.rollout(filter).getPinVersion()
        + ", new builds are held";
  }

  /**
   * The status of a reconcile whose build the rollout controls hold: Ready stays True while paused
   * or pinned (readers serve what the author chose), False for a dropped key count (the source
   * needs a look, and an approval); one event per newly held content.
   */
  private UpdateControl<BloomFilter> held(
      FilterRun ctx,
      PublishedSnapshot current,
      HeldBuild held,
      String token,
      Optional<Duration> graceLeft) {
    BloomFilter filter = ctx.filter();
    HeldBuild before = filter.getStatus() == null ? null : filter.getStatus().getHeld();
    boolean fresh = before == null || !String.valueOf(held.getSha256()).equals(before.getSha256());
    String note =
        "; a build of "
            + held.getKeys()
            + " keys (sha256 "
            + abbreviate(held.getSha256())
            + ") is held: "
            + switch (held.getReason()) {
              case Reasons.ROLLOUT_PAUSED -> "spec.rollout.paused";
              case Reasons.ROLLOUT_PINNED -> "spec.rollout.pinVersion";
              case Reasons.CANARY_HALTED ->
                  "it is the content of the halted canary, held until the source changes";
              case Reasons.CANARY_ABORTED ->
                  "it is the content of the aborted canary, held until the source changes";
              default ->
                  "its key count is more than spec.rollout.maxKeyCountDropPercent below "
                      + held.getPublishedKeys()
                      + "; approve with `kubectl bloom approve`";
            };
    Optional<Duration> next =
        Decision.nextCheck(
            ctx.spec().refresh(),
            token != null,
            RolloutGate.builtAt(held),
            wake(current, graceLeft, ctx.now()),
            ctx.now());
    if (Reasons.KEY_COUNT_DROPPED.equals(held.getReason())
        || Reasons.CANARY_HALTED.equals(held.getReason())) {
      UpdateControl<BloomFilter> control =
          ctx.report()
              .failed(
                  held.getReason(),
                  "version " + current.manifest().version() + " keeps serving" + note,
                  false);
      return next.map(control::rescheduleAfter).orElse(control);
    }
    if (fresh) {
      ctx.events().normal(filter, held.getReason(), "version kept serving" + note);
    }
    return ctx.report().ready(held.getReason(), note, next);
  }

  private static String abbreviate(String sha256) {
    return sha256 == null || sha256.length() < 12
        ? String.valueOf(sha256)
        : sha256.substring(0, 12);
  }

  /** Everything one reconcile works with, composed once. */
  private FilterRun open(
      BloomFilter filter,
      KubernetesClient client,
      Instant now,
      StatusReport report,
      EventRecorder events) {
    String namespace = filter.getMetadata().getNamespace();
    ResolvedSpec spec = ResolvedSpec.of(filter.getSpec(), settings.sources().minRefreshInterval());
    CanaryRollout.validate(filter);
    metrics.refreshInterval(filter, spec.refresh());
    KeySource source =
        KeySources.from(
            filter.getSpec().getSource(),
            client,
            new SecretAccess(
                client,
                namespace,
                filter.getMetadata().getName(),
                settings.sources().secretAccess()),
            settings.sources().http(),
            settings.sources().jdbc());
    // One store per reconcile: reads, the janitor, publishing and re-stamping all go through its
    // fenced, stamped, etcd-budget-charged manifest writer and its chunk store.
    SnapshotStore store =
        new SnapshotStore(client, filter, settings.publishing().signingKey())
            .writingAs(publisher, fence)
            .writingChunksWith(chunkWriters)
            .chargingManifestsTo(act.etcdWrites(), clock);
    return new FilterRun(filter, client, now, spec, source, store, report, events);
  }

  /**
   * {@code ctx} with its chunks in the object store its spec names (or, naming none, the default
   * store for its size: {@link DefaultStores}), the store resolved (it exists, allows the
   * namespace, and is reachable as configured) and the finalizer that deletes the filter's objects
   * in place before anything is written there.
   */
  private FilterRun inObjectStore(FilterRun ctx, Context<BloomFilter> context)
      throws PublishException {
    var snapshot = ctx.filter().getSpec().getSnapshot();
    String name = snapshot == null ? null : snapshot.getStore();
    if (name == null) {
      DefaultStores defaults = defaultStores;
      name = defaults == null ? null : defaults.forFilter(ctx.client(), ctx.filter()).orElse(null);
    }
    if (name == null) {
      return ctx;
    }
    ObjectStores.Store store = stores.resolve(ctx.client(), name, ctx.namespace());
    BloomFilter filter = StoreObjectsFinalizer.ensure(ctx.filter(), context);
    S3ChunkStore chunks =
        store.chunks(ctx.namespace(), ctx.name(), ctx.spec().retainPrevious(), clock);
    StoreBudget budget = store.budget(ctx.namespace());
    return new FilterRun(
        filter,
        ctx.client(),
        ctx.now(),
        ctx.spec(),
        ctx.source(),
        ctx.store().inObjectStore(chunks, name, budget),
        ctx.report(),
        ctx.events());
  }

  /** The published state, read once and trusted, after the chunk clean-up. */
  private record Observed(PublishedSnapshot current, Optional<Duration> graceLeft) {}

  /**
   * Reads the manifest once, keeps of it only what {@link OwnManifests} trusts, and lets the
   * janitor clean by that state (never by a foreign manifest): leftovers of an interrupted publish
   * go before anything is written under their names.
   */
  private Observed observe(FilterRun ctx) throws PublishException, IOException {
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
            ctx.store()
                .leaving(
                    formerStores.of(
                        ctx.client(),
                        ctx.namespace(),
                        ctx.name(),
                        checked.usable(),
                        ctx.store().storeName(),
                        ctx.spec().retainPrevious())),
            checked.usable(),
            ctx.spec().retainPrevious(),
            SnapshotStore.keepVersions(ctx.filter()),
            ctx.now());
    return new Observed(cleaned.state(), cleaned.graceLeft());
  }

  /** When to wake up besides the refresh: the end of a grace period or the next re-stamp. */
  private Optional<Duration> wake(
      PublishedSnapshot current, Optional<Duration> graceLeft, Instant now) {
    return SnapshotStore.restampDue(settings.publishing().signingKey(), current, now)
        .map(d -> d.compareTo(Decision.MIN_DELAY) < 0 ? Decision.MIN_DELAY : d)
        .map(d -> graceLeft.filter(g -> g.compareTo(d) < 0).orElse(d))
        .or(() -> graceLeft);
  }

  /** The status, metric and retry of a failed reconcile. */
  private UpdateControl<BloomFilter> failed(FilterRun ctx, Exception e) {
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
    var unavailable = StoreUnavailableException.in(e);
    if (unavailable.isPresent()) {
      metrics.publishFailed(Reasons.STORE_UNAVAILABLE);
      return report.failed(
          Reasons.STORE_UNAVAILABLE,
          unavailable.get().getMessage() + "; the published version keeps serving",
          true);
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
  private PublishedSnapshot restampIfDue(FilterRun ctx, PublishedSnapshot current)
      throws PublishException {
    if (settings.publishing().signingKey() == null
        || !ctx.store().restampIfDue(current, ctx.now())) {
      return current;
    }
    ownManifests.wrote(ctx.filter(), ctx.store().written());
    return ctx.store().written();
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
    BloomFilter current;
    try {
      current = ownStatus.current(filter, context.getClient());
    } catch (KubernetesClientException unreadable) {
      // The status write below would most likely be refused too; it is only a report.
      current = filter;
    }
    KubernetesClient client = context.getClient();
    report(current, client, new EventRecorder(client, clock), clock.instant())
        .failed(
            Reasons.RECONCILE_ERROR,
            "unexpected " + e.getClass().getSimpleName() + "; see the operator log",
            false);
    return ErrorStatusUpdateControl.noStatusUpdate();
  }
}
