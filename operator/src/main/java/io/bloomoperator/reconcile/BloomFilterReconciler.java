package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ByteSizes;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
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
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.KeySources;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.source.SourceException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.ErrorStatusUpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
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

  /** Bytes each namespace and filter wrote to etcd in the last hour. */
  private final WriteBudget writeBudget;

  /** This replica's identity, stamped on what it writes; null for none. */
  private final String publisher;

  /** Asked before the janitor's deletes and each manifest write. */
  private final WriteFence fence;

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
    this.writeBudget = new WriteBudget(settings.writes(), metrics::etcdWritten);
  }

  /**
   * Watches only the operator's manifest ConfigMaps (by label), so a manifest deleted or edited by
   * someone else is repaired. Chunks are never watched: an informer would hold them all in memory.
   */
  @Override
  public List<EventSource<?, BloomFilter>> prepareEventSources(
      EventSourceContext<BloomFilter> context) {
    var config =
        InformerEventSourceConfiguration.from(ConfigMap.class, BloomFilter.class)
            .withName("manifests")
            .withLabelSelector(
                SnapshotNames.LABEL_MANAGED_BY
                    + "="
                    + SnapshotNames.MANAGED_BY
                    + ","
                    + SnapshotNames.LABEL_ROLE
                    + "="
                    + SnapshotNames.ROLE_MANIFEST)
            .build();
    return List.of(new InformerEventSource<>(config, context));
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
              settings.http());
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
          new SnapshotJanitor(client, publisher)
              .clean(namespace, name, read, spec.retainPrevious(), now);
      Optional<Duration> graceLeft = cleaned.graceLeft();
      // A janitor that retired the previous versions updated the manifest: publishing against the
      // copy read before would fail its resourceVersion precondition (409) after writing chunks.
      PublishedSnapshot current = cleaned.manifestTouched() ? store.read() : read;
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
          Publication.Outcome outcome =
              build(
                  new Attempt(filter, client, events, report, now),
                  source,
                  spec,
                  current,
                  token,
                  decision.routine());
          current = outcome.published();
          if (outcome.newVersion()) {
            graceLeft = Optional.of(spec.retainPrevious()); // the version just replaced
          }
        }
        case UP_TO_DATE -> report.published(current);
      }
      return report.ready(
          Decision.nextCheck(spec.refresh(), token != null, current.builtAt(), graceLeft, now));
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
    try (BuildSlots.Slot slot = buildSlots.slot()) {
      FilterBuilder.Result built = buildFilter(filter, client, source, spec, current, slot);
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
      var manifest = outcome.manifest();
      if (outcome.newVersion()) {
        metrics.published(manifest.versionBytes(), Duration.ofNanos(System.nanoTime() - start));
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
      BloomFilter filter,
      KubernetesClient client,
      KeySource source,
      ResolvedSpec spec,
      PublishedSnapshot current,
      FilterBuilder.Reservation slot)
      throws SourceException, PublishException {
    BuildProgressReporter progress = new BuildProgressReporter(client, filter);
    progress.started();
    try {
      FilterBuilder.Result built =
          new FilterBuilder(progress)
              .build(
                  source,
                  new FilterBuilder.Request(
                      spec.keyType(),
                      spec.falsePositiveRate(),
                      spec.expectedInsertions(),
                      spec.maxMalformedKeys() != null
                          ? spec.maxMalformedKeys()
                          : settings.maxMalformedKeys(),
                      settings.maxSnapshotBytes(),
                      publishedGeometry(current, spec)),
                  slot);
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
