package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.publish.WriteBudgetExceeded;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.readers.ReaderSettings;
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

  /** Backs off filters whose build made the operator die. */
  private final BuildCrashes crashes;

  /** This replica's identity, stamped on what it writes; null for none. */
  private final String publisher;

  /** Asked before the janitor's deletes and each manifest write. */
  private final WriteFence fence;

  /** Whether a published manifest is the one this operator wrote, before anything of it is used. */
  private final OwnManifests ownManifests = new OwnManifests();

  /** How reader reports are counted into status.readers. */
  private ReaderSettings readerSettings = ReaderSettings.defaults();

  /** Build, plan and apply, under the operator-wide build and write bounds. */
  private final BuildAndPublish act;

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
    this.crashes = new BuildCrashes(clock.instant(), metrics);
    this.act = new BuildAndPublish(settings, metrics, ownManifests);
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
    return List.of(
        new ManifestEvents(
            context.getClient(),
            context.getControllerConfiguration().getEffectiveNamespaces(),
            context.getPrimaryCache()),
        new ReaderRollouts(
            context.getClient(),
            context.getControllerConfiguration().getEffectiveNamespaces(),
            context.getPrimaryCache(),
            readerSettings,
            fence,
            clock,
            new RolloutReporting(context.getClient(), clock, metrics)));
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
          Optional<BuildAndPublish.Published> published =
              act.run(ctx, current, token, decision.routine());
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
