package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.Publication;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.StorageFull;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.publish.WriteBudgetExceeded;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.Manifest;
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
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a BloomFilter into a published snapshot, in four steps: <b>observe</b> (resolve the spec,
 * read the published manifest, clean up what no reader needs, ask the source for its change token),
 * <b>decide</b> ({@link Decision}: build, wait, or nothing to do), <b>act</b> (build, then {@link
 * Publication}) and <b>record</b> ({@link StatusReport}: status, events, next reconcile).
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

  public BloomFilterReconciler(OperatorSettings settings, Clock clock, BuildMetrics metrics) {
    this(settings, clock, metrics, null, WriteFence.NONE);
  }

  /**
   * @param publisher this replica's identity (its leader-election identity), stamped on every
   *     snapshot ConfigMap it writes as {@link SnapshotStore#ANNOTATION_PUBLISHED_BY}; null for
   *     none
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
    String namespace = filter.getMetadata().getNamespace();
    String name = filter.getMetadata().getName();
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

    ResolvedSpec spec;
    KeySource source;
    try {
      spec = ResolvedSpec.of(filter.getSpec(), settings.minRefreshInterval());
      metrics.refreshInterval(filter, spec.refresh());
      source =
          KeySources.from(
              filter.getSpec().getSource(),
              client,
              new SecretAccess(client, namespace, name, settings.secretAccess()),
              settings.http(),
              settings.jdbc());
    } catch (IllegalArgumentException e) {
      // What the schema could not reject; retrying cannot help, a spec change reconciles anyway.
      return report.failed(Reasons.INVALID_SPEC, e.getMessage(), false);
    }
    try {
      SnapshotStore store = new SnapshotStore(client, filter, null, publisher, fence);
      PublishedSnapshot read = store.read();
      // The janitor deletes by what it just read: a replica frozen since, and no longer the
      // leader, would delete the chunks of versions the new leader published.
      fence.check();
      // Leftovers of an interrupted publish go before anything is written under their names.
      SnapshotJanitor.Cleaned cleaned =
          new SnapshotJanitor(client, publisher).clean(filter, read, spec.retainPrevious(), now);
      Optional<Duration> graceLeft = cleaned.graceLeft();
      // A janitor that retired the previous versions updated the manifest: publishing against the
      // copy read before would fail its resourceVersion precondition (409) after writing chunks.
      OwnManifests.Checked checked =
          ownManifests.check(filter, cleaned.manifestTouched() ? store.read() : read, now);
      if (checked.foreign()) {
        LOG.warn("{}/{}: {}", namespace, name, checked.problem());
        events.warning(filter, OwnManifests.EVENT_REASON, checked.problem());
        report.sawVersion(checked.seenVersion());
      }
      PublishedSnapshot current = checked.usable();
      String token = source.changeToken();
      Decision decision =
          Decision.decide(
              Decision.Published.of(current),
              token,
              filter.getMetadata().getGeneration(),
              RebuildRequest.pending(filter),
              spec.refresh(),
              settings.minPublishInterval(),
              now);
      switch (decision.action()) {
        case WAIT -> {
          LOG.debug("{}/{}: next publish allowed in {}", namespace, name, decision.delay());
          return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(decision.delay());
        }
        case BUILD -> {
          // A build whose publish could not be written anyway would only load the source.
          Optional<WriteBudget.Refusal> spent = writeBudget.exhausted(namespace, name, now);
          if (spent.isPresent()) {
            throw WriteBudgetExceeded.exhausted(spent.get());
          }
          Optional<NamespaceBuilds.Entry> place = namespaceBuilds.enter(namespace);
          if (place.isEmpty()) {
            // The namespace has its share of reconcile threads building: give this one back.
            LOG.debug(
                "{}/{}: namespace at BLOOM_MAX_BUILDS_PER_NAMESPACE, deferred", namespace, name);
            return UpdateControl.<BloomFilter>noUpdate()
                .rescheduleAfter(NamespaceBuilds.retryDelay());
          }
          Publication.Outcome outcome;
          try (NamespaceBuilds.Entry entry = place.get()) {
            outcome =
                build(
                    new Attempt(filter, client, events, report, now),
                    source,
                    spec,
                    current,
                    token,
                    decision.routine());
          }
          current = outcome.published();
          if (outcome.newVersion()) {
            graceLeft = Optional.of(spec.retainPrevious()); // the version just replaced
          }
        }
        case UP_TO_DATE -> {
          current = restampIfDue(client, filter, current, now);
          report.published(current);
        }
      }
      // Also wake up for the next re-stamp: the earlier of the two.
      Optional<Duration> grace = graceLeft;
      Optional<Duration> wake =
          SnapshotStore.restampDue(settings.signingKey(), current, now)
              .map(d -> d.compareTo(Decision.MIN_DELAY) < 0 ? Decision.MIN_DELAY : d)
              .map(d -> grace.filter(g -> g.compareTo(d) < 0).orElse(d))
              .or(() -> grace);
      return report.ready(
          Decision.nextCheck(spec.refresh(), token != null, current.builtAt(), wake, now));
    } catch (SourceException e) {
      metrics.sourceFailed(e.reason());
      return report.failed(e.reason(), source.description() + ": " + e.getMessage(), true);
    } catch (WriteBudgetExceeded e) {
      metrics.publishFailed(e.reason());
      UpdateControl<BloomFilter> control = report.failed(e.reason(), e.getMessage(), true);
      // Not before the budget has room: an earlier retry would be refused again.
      return e.retryAfter(now)
          .map(left -> control.rescheduleAfter(left.plus(Decision.MIN_DELAY)))
          .orElse(control);
    } catch (PublishException e) {
      metrics.publishFailed(e.reason());
      return report.failed(e.reason(), e.getMessage(), true);
    } catch (WriteFence.NotLeaderException e) {
      // Not ours to report either: the status belongs to the leader. This replica's leader
      // elector notices at its next renewal and ends the process; if the Lease only could not be
      // read, try again soon.
      LOG.warn("{}/{}: not writing, not the leader: {}", namespace, name, e.getMessage());
      return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(NOT_LEADER_RETRY);
    }
  }

  /**
   * {@code current} (trusted) written again with a fresh, signed createdAt when the signed one is
   * older than the re-stamp interval, so readers with a maximum manifest age keep accepting it.
   */
  private PublishedSnapshot restampIfDue(
      KubernetesClient client, BloomFilter filter, PublishedSnapshot current, Instant now)
      throws PublishException {
    SnapshotStore signing =
        new SnapshotStore(client, filter, settings.signingKey(), publisher, fence);
    if (settings.signingKey() == null || !signing.restampIfDue(current, now)) {
      return current;
    }
    ownManifests.wrote(filter, signing.written());
    return signing.written();
  }

  /** One reconcile's resource, client, clock reading and where its results go. */
  private record Attempt(
      BloomFilter filter,
      KubernetesClient client,
      EventRecorder events,
      StatusReport report,
      Instant now) {}

  /** Builds from the source in a build slot and publishes the result. */
  private Publication.Outcome build(
      Attempt attempt,
      KeySource source,
      ResolvedSpec spec,
      PublishedSnapshot current,
      String token,
      boolean routine)
      throws SourceException, PublishException {
    BloomFilter filter = attempt.filter();
    KubernetesClient client = attempt.client();
    EventRecorder events = attempt.events();
    if (!routine) {
      events.normal(filter, "BuildStarted", "building from " + source.description());
    }
    // The slot is taken inside the build, once the source delivers keys, and held until the
    // publish is done: the bit array lives that long.
    try (BuildSlots.Slot slot = buildSlots.slot(filter.getMetadata().getNamespace())) {
      FilterBuilder.Result built = buildFilter(attempt, source, spec, current, slot);
      long start = System.nanoTime();
      Publication.Outcome outcome =
          new Publication(
                  client,
                  filter,
                  settings.signingKey(),
                  settings.maxNamespaceBytes(),
                  settings.deltas(),
                  publisher,
                  fence,
                  writeBudget)
              .publish(
                  built.bits(),
                  built.keys(),
                  current,
                  attempt.report().lastKnownVersion(),
                  new SnapshotStore.BuildRecord(
                      token, filter.getMetadata().getGeneration(), attempt.now()),
                  spec.chunkSize(),
                  attempt.now());
      ownManifests.wrote(filter, outcome.published());
      var manifest = outcome.manifest();
      if (outcome.newVersion()) {
        metrics.published(
            filter, manifest.versionBytes(), Duration.ofNanos(System.nanoTime() - start));
        events.normal(
            filter,
            "Published",
            "version "
                + manifest.version()
                + ": "
                + built.keys()
                + " keys, "
                + ByteSizes.human(manifest.totalBytes())
                + (manifest.chained()
                    ? " as a delta of "
                        + ByteSizes.human(manifest.versionBytes())
                        + " (delta "
                        + manifest.deltas().size()
                        + " on base version "
                        + manifest.baseVersion()
                        + ")"
                    : " in " + manifest.chunks().size() + " chunk(s)")
                + ", expected FPP "
                + String.format("%.3g", manifest.expectedFpp())
                + ", built in "
                + built.took().toMillis()
                + " ms from "
                + source.description());
      } else {
        metrics.unchanged();
        if (!routine) {
          events.normal(
              filter,
              "Unchanged",
              "rebuilt from "
                  + source.description()
                  + " in "
                  + built.took().toMillis()
                  + " ms: content identical to version "
                  + manifest.version()
                  + ", nothing published");
        }
        LOG.info(
            "{}/{}: rebuilt from {}, content unchanged (version {})",
            filter.getMetadata().getNamespace(),
            filter.getMetadata().getName(),
            source.description(),
            manifest.version());
      }
      attempt.report().published(outcome.published());
      attempt.report().built(built);
      return outcome;
    }
  }

  private FilterBuilder.Result buildFilter(
      Attempt attempt,
      KeySource source,
      ResolvedSpec spec,
      PublishedSnapshot current,
      BuildSlots.Slot slot)
      throws SourceException, PublishException {
    BuildProgressReporter progress = new BuildProgressReporter(attempt.client(), attempt.filter());
    progress.started(attempt.report().buildStarting());
    try (BuildGuard guard = new BuildGuard(source, settings.builds(), slot)) {
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
      metrics.built(attempt.filter(), built.keys(), built.took());
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
