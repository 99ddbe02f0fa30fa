package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.backend.SnapshotBackends;
import io.bloomoperator.build.BuildCrashes;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.run.Pipeline;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.source.SourceException;
import io.bloomoperator.status.StatusReport;
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
import java.time.Instant;
import java.util.List;

/**
 * Turns a BloomFilter into a published snapshot: guards (deleted, storage full, crash loop, invalid
 * spec), then the {@link Pipeline} of steps ({@link FilterRuns#pipeline}: observe, pin, canary,
 * held, build); the run's {@link Outcome} is written into the status once, a failure of any step
 * becomes an outcome in {@link Failures}, and the last good snapshot stays published.
 */
@ControllerConfiguration(
    name = BloomFilterReconciler.NAME,
    generationAwareEventProcessing = false,
    // Deletions reach reconcile (the store-objects finalizer, only on filters using a store).
    triggerReconcilerOnAllEvents = true,
    informer = @Informer(onUpdateFilter = ReconcileTriggers.class))
@GradualRetry(
    maxAttempts = -1,
    initialInterval = 1000,
    intervalMultiplier = 2,
    maxInterval = 300_000)
public class BloomFilterReconciler implements Reconciler<BloomFilter> {

  public static final String NAME = "bloomfilter";

  private final Clock clock;
  private final SnapshotBackends backends;
  private final FilterRuns runs;
  private final Guards guards;
  private ReaderSettings readerSettings = ReaderSettings.defaults();
  private Pipeline pipeline;

  /** The reader aggregation, once the controller registered it: canaries are judged from it. */
  private volatile ReaderRollouts readerRollouts;

  /**
   * @param publisher this replica's identity, stamped on every snapshot ConfigMap it writes; null
   *     for none
   * @param fence asked before the janitor's deletes and each manifest write: a replica that lost
   *     the leader Lease while frozen must not touch what the new leader publishes
   * @param stores resolves and connects to {@code spec.snapshot.store}
   */
  public BloomFilterReconciler(
      OperatorSettings settings,
      Clock clock,
      BuildMetrics metrics,
      String publisher,
      WriteFence fence,
      ObjectStores stores) {
    this.clock = clock;
    this.backends = new SnapshotBackends(stores, clock, settings.snapshots());
    this.runs =
        new FilterRuns(
            settings, clock, metrics, new FilterRuns.Identity(publisher, fence), backends);
    this.guards = new Guards(runs, new BuildCrashes(clock.instant(), metrics, settings.builds()));
    this.pipeline = runs.pipeline(readerSettings, () -> readerRollouts);
  }

  /** How reader reports are counted (default: {@link ReaderSettings#defaults()}). */
  public BloomFilterReconciler withReaderSettings(ReaderSettings settings) {
    this.readerSettings = java.util.Objects.requireNonNull(settings, "settings");
    this.pipeline = runs.pipeline(readerSettings, () -> readerRollouts);
    return this;
  }

  /** The default stores, the manifest ConfigMaps (never cached) and the readers' reports. */
  @Override
  public List<EventSource<?, BloomFilter>> prepareEventSources(
      EventSourceContext<BloomFilter> context) {
    readerRollouts = runs.readerRollouts(context, readerSettings);
    return List.of(
        backends.defaultStores(context.getClient()), runs.manifestEvents(context), readerRollouts);
  }

  @Override
  public UpdateControl<BloomFilter> reconcile(BloomFilter handed, Context<BloomFilter> context) {
    if (context.isPrimaryResourceDeleted()) {
      runs.forget(handed);
      return UpdateControl.noUpdate(); // gone: the garbage collector takes its ConfigMaps
    }
    KubernetesClient client = context.getClient();
    // Everything below decides on and writes back this status: never one older than our own.
    BloomFilter filter = runs.ownWrites().current(handed, client);
    Instant now = clock.instant();
    EventRecorder events = new EventRecorder(client, clock);
    if (filter.isMarkedForDeletion()) {
      return runs.slots().finish(filter, context, events, now); // then the backends' finalizer
    }
    Guards.Passed guarded = guards.check(filter, client, events, now);
    if (guarded.stop() != null) {
      return guarded.stop();
    }
    StatusReport report = guarded.report();
    FilterRun run;
    try {
      run = runs.open(filter, context, now, report, events);
    } catch (IllegalArgumentException e) { // what the schema could not reject: no retry helps
      return report.record(Outcome.failed(Reasons.INVALID_SPEC, e.getMessage(), false));
    }
    try {
      return report.record(pipeline.run(backends.resolve(run, context)));
    } catch (SourceException | PublishException | IOException | WriteFence.NotLeaderException e) {
      return report.record(runs.failures().of(run, e));
    }
  }

  @Override
  public ErrorStatusUpdateControl<BloomFilter> updateErrorStatus(
      BloomFilter filter, Context<BloomFilter> context, Exception e) {
    // Etcd full: no status can be written either, java-operator-sdk retries with its backoff.
    if (!Failures.logged(filter, e)) {
      KubernetesClient client = context.getClient();
      BloomFilter current = Failures.current(filter, runs.ownWrites(), client);
      runs.report(current, client, new EventRecorder(client, clock), clock.instant())
          .record(Failures.unexpected(e));
    }
    return ErrorStatusUpdateControl.noStatusUpdate();
  }
}
