package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.api.ResolvedSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.backend.SnapshotBackends;
import io.bloomoperator.build.BuildAndPublish;
import io.bloomoperator.build.BuildStep;
import io.bloomoperator.build.StreamStep;
import io.bloomoperator.changes.ChangeStreams;
import io.bloomoperator.changes.FilterChanges;
import io.bloomoperator.changes.PostgresLogicalStream;
import io.bloomoperator.changes.StreamException;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.observe.ObserveStep;
import io.bloomoperator.publish.ChunkWriters;
import io.bloomoperator.publish.OwnManifests;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.readers.ReaderRollouts;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.rollout.Republish;
import io.bloomoperator.rollout.Rollout;
import io.bloomoperator.rollout.RolloutReporting;
import io.bloomoperator.run.FilterRun;
import io.bloomoperator.run.Pipeline;
import io.bloomoperator.run.Step;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.KeySources;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.status.OwnWrites;
import io.bloomoperator.status.StatusReport;
import io.bloomoperator.status.StorageFullFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * What the reconciler composes for each reconcile, from the operator-wide parts it holds once: the
 * status report, the {@link FilterRun} (spec, source, the fenced and charged snapshot store) and
 * the {@link Pipeline} of steps. Adding a step is a line in {@link #pipeline}.
 */
final class FilterRuns {

  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(FilterRuns.class);

  private final OperatorSettings settings;
  private final Clock clock;
  private final BuildMetrics metrics;
  private final String publisher;
  private final WriteFence fence;
  private final SnapshotBackends backends;
  private final BuildAndPublish act;
  private final ChunkWriters chunkWriters;
  private final StorageFullFailures storageFull = new StorageFullFailures();
  private final OwnWrites ownWrites = new OwnWrites();
  private final OwnManifests ownManifests;
  private final Failures failures;
  private final ChangeStreams changeStreams;
  private final OwnSlots ownSlots;
  private final SlotFinalizer slots;

  FilterRuns(
      OperatorSettings settings,
      Clock clock,
      BuildMetrics metrics,
      Identity identity,
      SnapshotBackends backends) {
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
    this.publisher = identity.publisher();
    this.fence = identity.fence();
    this.backends = backends;
    // Beside the stream payloads, on the pod's own disk: a manifest written just before a kill is
    // still known as this operator's after the restart (OwnManifests).
    this.ownManifests =
        new OwnManifests(settings.sources().streams().heldDir().resolve("manifests"));
    this.act = new BuildAndPublish(settings, metrics, ownManifests);
    this.failures = new Failures(metrics);
    this.chunkWriters = ChunkWriters.of(settings.builds().limits().publishWriters());
    this.changeStreams =
        ChangeStreams.of(
            settings.sources().streams(),
            settings.sources().http().egress(),
            settings.sources().jdbc());
    this.ownSlots = new OwnSlots(ownManifests, changeStreams);
    this.slots = new SlotFinalizer(this, backends);
    metrics.streamReadBytes(changeStreams.reads().budget()::used);
  }

  /** Forgets what this process holds for a deleted filter: its own writes, its change stream. */
  void forget(BloomFilter filter) {
    ownWrites.forget(filter);
    ownManifests.forget(filter.getMetadata().getUid());
    changeStreams.close(filter.getMetadata().getUid());
    act.forget(filter.getMetadata().getUid());
  }

  /** Who this replica is: the stamp on what it writes, and the fence of its writes. */
  record Identity(String publisher, WriteFence fence) {}

  /** The deletion of a filter: its replication slot dropped, then its snapshot backends'. */
  SlotFinalizer slots() {
    return slots;
  }

  /** Publishes whose failure (etcd full) the status could not say yet. */
  StorageFullFailures storageFull() {
    return storageFull;
  }

  /** The one memory of this process's own status writes. */
  OwnWrites ownWrites() {
    return ownWrites;
  }

  /** The build and write bounds shared by every filter. */
  BuildAndPublish act() {
    return act;
  }

  /** Maps failed steps to outcomes. */
  Failures failures() {
    return failures;
  }

  /** Follows the manifest ConfigMaps (never cached), so edits by others are repaired. */
  ManifestEvents manifestEvents(EventSourceContext<BloomFilter> context) {
    return new ManifestEvents(
        context.getClient(),
        context.getControllerConfiguration().getEffectiveNamespaces(),
        context.getPrimaryCache());
  }

  /** The reader aggregation: counts reports into status.readers, judges canaries. */
  ReaderRollouts readerRollouts(EventSourceContext<BloomFilter> context, ReaderSettings readers) {
    KubernetesClient client = context.getClient();
    return new ReaderRollouts(
        client,
        context.getControllerConfiguration().getEffectiveNamespaces(),
        context.getPrimaryCache(),
        readers,
        fence,
        act.statusBudget(),
        clock,
        new RolloutReporting(client, clock, metrics));
  }

  /** The steps of every reconcile, in order. */
  Pipeline pipeline(ReaderSettings readers, Supplier<ReaderRollouts> rollouts) {
    Republish republish = new Republish(act.charges(), ownManifests, metrics);
    List<Step> steps = new ArrayList<>();
    steps.add(new ObserveStep(ownManifests, fence, backends, settings.publishing().minInterval()));
    steps.addAll(Rollout.steps(republish, ownManifests, rollouts, readers.statusInterval()));
    steps.add(new StreamStep(act, metrics));
    steps.add(new BuildStep(act, ownManifests, readers.statusInterval()));
    return new Pipeline(steps);
  }

  /** The status report of one reconcile of {@code filter}. */
  StatusReport report(
      BloomFilter filter, KubernetesClient client, EventRecorder events, Instant now) {
    return new StatusReport(
        filter, client, act.statusBudget(), events, metrics, storageFull, ownWrites, now);
  }

  /**
   * Everything one reconcile works with, composed once; its backend is resolved by the caller. A
   * filter with a PostgreSQL stream gets the slot finalizer first ({@link SlotFinalizer#ensure}).
   *
   * @throws IllegalArgumentException for what the schema could not reject
   */
  FilterRun open(
      BloomFilter handed,
      Context<BloomFilter> context,
      Instant now,
      StatusReport report,
      EventRecorder events) {
    KubernetesClient client = context.getClient();
    // Before the stream may create a slot: no slot without the finalizer that drops it.
    BloomFilter filter = SlotFinalizer.ensure(handed, context);
    ResolvedSpec spec = ResolvedSpec.of(filter.getSpec(), settings.sources().minRefreshInterval());
    Rollout.validate(filter);
    metrics.refreshInterval(filter, spec.refresh());
    // One store per reconcile: reads, the janitor, publishing and re-stamping all go through its
    // fenced, stamped, etcd-budget-charged manifest writer and its chunk store.
    SnapshotStore store =
        new SnapshotStore(client, filter, settings.publishing().signingKey())
            .on(backends.configMaps(client, filter))
            .writingAs(publisher, fence)
            .writingChunksWith(chunkWriters)
            .chargingManifestsTo(act.etcdWrites(), clock)
            .recordingIntentsIn(ownManifests);
    return new FilterRun(
        filter,
        client,
        now,
        spec,
        source(filter, client),
        store,
        report.draft(),
        events,
        changes(filter, spec, report, events, client, now));
  }

  /**
   * The filter's change stream, or null: none configured, or none may be opened now (said in the
   * status and an event; the filter is served from full builds meanwhile).
   */
  private FilterChanges changes(
      BloomFilter filter,
      ResolvedSpec spec,
      StatusReport report,
      EventRecorder events,
      KubernetesClient client,
      Instant now) {
    // Only a slot record the operator vouches for opens, reads or drops a slot (OwnSlots).
    BloomFilter vouched = ownSlots.checked(filter, client, report.draft(), events, now);
    String leftSlot =
        leftSlot(vouched, vouched.getStatus() == null ? null : vouched.getStatus().getStream());
    if (leftSlot != null) {
      // The spec no longer names the slot the operator created: drop it now, not at deletion
      // (the status would forget it). Until that works, the status keeps the record.
      try {
        if (dropSlot(vouched, client, events, now)) {
          report.draft().stream().setSlot(null);
          report.draft().stream().setRetainedWalBytes(null);
        }
      } catch (StreamException | RuntimeException e) {
        LOG.warn(
            "{}/{}: the replication slot of a former spec.changes is not dropped yet: {}",
            filter.getMetadata().getNamespace(),
            filter.getMetadata().getName(),
            e.getMessage());
      }
    }
    if (filter.getSpec().getChanges() == null
        && report.draft().stream() != null
        && report.draft().stream().getSlot() == null) {
      report.draft().stream(null);
      act.forgetStream(filter.getMetadata().getUid());
      metrics.streamLag(filter, null);
    }
    try {
      return changeStreams.of(vouched, spec.keyType(), secrets(filter, client));
    } catch (StreamException e) {
      metrics.streamFailed(e.tag());
      StreamStatus status = new StreamStatus();
      StreamStatus was = report.draft().stream();
      if (was == null || !e.getMessage().equals(was.getMessage())) {
        events.warning(filter, "ChangeStreamFailed", e.getMessage());
      }
      if (was != null) {
        // The slot the operator created stays recorded: only a recorded slot is ever dropped.
        status.setSlot(was.getSlot());
      }
      status.setMessage(e.getMessage());
      report.draft().stream(status);
      return null;
    }
  }

  private KeySource source(BloomFilter filter, KubernetesClient client) {
    return KeySources.from(
        filter.getSpec().getSource(),
        client,
        secrets(filter, client),
        settings.sources().http(),
        settings.sources().jdbc());
  }

  /** The slot the status records that the spec no longer names, or null. */
  private static String leftSlot(BloomFilter filter, StreamStatus stream) {
    String recorded = stream == null ? null : stream.getSlot();
    if (recorded == null) {
      return null;
    }
    var changes = filter.getSpec().getChanges();
    var postgres = changes == null ? null : changes.getPostgresLogical();
    return postgres != null && recorded.endsWith("/" + postgres.getSlot()) ? null : recorded;
  }

  /** The filter's Secrets, as its source (and its PostgreSQL stream) may read them. */
  private SecretAccess secrets(BloomFilter filter, KubernetesClient client) {
    return new SecretAccess(
        client,
        filter.getMetadata().getNamespace(),
        filter.getMetadata().getName(),
        settings.sources().secretAccess());
  }

  /**
   * Drops the replication slot the operator created for {@code filter} (being deleted), through its
   * open stream or a new one on the slot the operator vouches for ({@link OwnSlots}: never the
   * status's word alone, said in a Warning event when they differ); true when no slot of it is
   * left.
   */
  boolean dropSlot(BloomFilter filter, KubernetesClient client, EventRecorder events, Instant now)
      throws StreamException {
    String uid = filter.getMetadata().getUid();
    java.util.Optional<io.bloomoperator.changes.ChangeStream> open = changeStreams.stream(uid);
    if (open.isPresent() && open.get() instanceof PostgresLogicalStream stream) {
      boolean done = stream.dropSlot();
      changeStreams.close(uid);
      if (!done) {
        return false;
      }
      // The open stream may own nothing (its spec names a slot it refused) while the vouched
      // record names the slot a former spec created, whose drop failed before: drop that too, or
      // it would keep the database's write-ahead log after the filter is gone.
    }
    String recorded = ownSlots.vouched(filter, client, now);
    String inStatus = OwnSlots.recorded(filter);
    if (inStatus != null && !inStatus.equals(recorded)) {
      events.warning(filter, OwnSlots.EVENT_REASON, OwnSlots.REFUSED);
    }
    if (recorded == null) {
      return true; // the operator never recorded a slot of this filter
    }
    // The recorded identity names the slot, whatever the spec says now (it may have no stream).
    PostgresLogicalChangesSpec spec = new PostgresLogicalChangesSpec();
    spec.setSlot(recorded.substring(recorded.lastIndexOf('/') + 1));
    try (PostgresLogicalStream stream =
        ChangeStreams.postgres(
            OwnSlots.withRecord(filter, recorded),
            spec,
            io.bloomoperator.snapshot.KeyType.STRING,
            settings.sources().streams(),
            settings.sources().jdbc(),
            secrets(filter, client))) {
      return stream.dropSlot();
    }
  }
}
