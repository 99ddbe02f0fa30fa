package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.FilterTooLargeException;
import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.KeySources;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.publish.NamespaceBudget;
import io.bloomoperator.source.SourceException;
import io.fabric8.kubernetes.api.model.Condition;
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
import java.io.IOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a BloomFilter into a published snapshot: read the source, build, publish chunks then
 * manifest, retire old versions, report status and events.
 *
 * <p>Failures of the source or of a publish leave the last good snapshot published and untouched,
 * set Ready=False with a reason, and retry with a backoff that grows with the time the failure has
 * lasted (no hot loop, no state outside the resource).
 */
@ControllerConfiguration(name = BloomFilterReconciler.NAME,
    generationAwareEventProcessing = false,
    informer = @Informer(onUpdateFilter = RebuildRequest.class))
@GradualRetry(maxAttempts = -1, initialInterval = 1000, intervalMultiplier = 2,
    maxInterval = 300_000)
public class BloomFilterReconciler implements Reconciler<BloomFilter> {

  public static final String NAME = "bloomfilter";
  static final Duration MIN_BACKOFF = Duration.ofSeconds(2);
  static final Duration MAX_BACKOFF = Duration.ofMinutes(5);
  /** How often a ConfigMap or Secret source is checked when no refreshInterval is given. */
  static final Duration DEFAULT_SOURCE_CHECK = Duration.ofMinutes(1);

  private static final Logger LOG = LoggerFactory.getLogger(BloomFilterReconciler.class);

  private final OperatorSettings settings;
  private final Clock clock;
  private final BuildMetrics metrics;
  /**
   * Bounds the bit arrays alive at once (a build holds its array until the publish is done), so
   * the heap needed is known: maxConcurrentBuilds × maxSnapshotBytes plus a little.
   */
  private final Semaphore builds;

  public BloomFilterReconciler(OperatorSettings settings, Clock clock, BuildMetrics metrics) {
    this.settings = settings;
    this.clock = clock;
    this.metrics = metrics;
    this.builds = new Semaphore(settings.maxConcurrentBuilds(), true);
  }

  /**
   * Watches only the operator's manifest ConfigMaps (by label), so a manifest deleted or edited by
   * someone else is repaired. Chunks are never watched: an informer would hold them all in memory.
   */
  @Override
  public List<EventSource<?, BloomFilter>> prepareEventSources(
      EventSourceContext<BloomFilter> context) {
    var config = InformerEventSourceConfiguration.from(ConfigMap.class, BloomFilter.class)
        .withName("manifests")
        .withLabelSelector(SnapshotNames.LABEL_MANAGED_BY + "=" + SnapshotNames.MANAGED_BY + ","
            + SnapshotNames.LABEL_ROLE + "=" + SnapshotNames.ROLE_MANIFEST)
        .build();
    return List.of(new InformerEventSource<>(config, context));
  }

  @Override
  public UpdateControl<BloomFilter> reconcile(BloomFilter filter, Context<BloomFilter> context) {
    KubernetesClient client = context.getClient();
    Instant now = clock.instant();
    BloomFilterSpec spec = filter.getSpec();
    String namespace = filter.getMetadata().getNamespace();
    String name = filter.getMetadata().getName();
    long generation = filter.getMetadata().getGeneration();
    Optional<Condition> ready = ReadyCondition.of(filter);
    BloomFilterStatus status = copyOf(filter.getStatus());
    status.setObservedGeneration(generation);
    EventRecorder events = new EventRecorder(client, clock);

    Settings resolved;
    KeySource source;
    try {
      resolved = Settings.of(spec, settings);
      source = KeySources.from(spec.getSource(), client,
          new SecretAccess(client, namespace, name, settings.secretAccess()), settings.http());
    } catch (IllegalArgumentException e) {
      // The schema rejects most bad input; what it cannot express lands here. Retrying cannot
      // help, so nothing is rescheduled: a spec change triggers the next reconcile.
      fail(filter, status, ready, "InvalidSpec", e.getMessage(), generation, now, events);
      StatusWriter.write(client, filter, status);
      return UpdateControl.noUpdate();
    }

    SnapshotStore store = new SnapshotStore(client, filter);
    SnapshotJanitor janitor = new SnapshotJanitor(client);
    try {
      PublishedSnapshot current = store.read();
      String token = source.changeToken();
      if (needsBuild(current, token, generation, resolved, now) || RebuildRequest.pending(filter)) {
        Optional<Duration> wait = publishThrottle(current, settings.minPublishInterval(), now);
        if (wait.isPresent()) {
          // Too soon after the last publish: come back when the next one is allowed, leaving
          // the published version and its status as they are.
          LOG.debug("{}/{}: next publish allowed in {}", namespace, name, wait.get());
          return UpdateControl.<BloomFilter>noUpdate().rescheduleAfter(wait.get());
        }
        current = buildAndPublish(client, filter, source, token, resolved, current, status,
            events, now);
      } else {
        // Nothing to build: make sure the status describes what is published (it may lag
        // behind the manifest, e.g. after a restart or when this reconcile was caused by the
        // operator's own manifest write).
        describe(status, current.manifest(), filter.getMetadata().getName());
        status.setSourceToken(current.sourceToken());
        if (current.builtAt() != null) {
          status.setLastBuildTime(current.builtAt().toString());
        }
      }
      Optional<Duration> recheck = janitor.clean(namespace, name, current,
          resolved.retainPrevious(), now);
      String message = "version " + status.getVersion() + " published: " + status.getKeys()
          + " keys, " + status.getChunks() + " chunk(s), " + status.getSize();
      ReadyCondition.set(status, ready, true, ReadyCondition.PUBLISHED, message, generation, now);
      status.setPhase("Idle");
      filter.setStatus(status);
      StatusWriter.write(client, filter, status);
      UpdateControl<BloomFilter> control = UpdateControl.noUpdate();
      next(resolved, current, token != null, recheck, now).ifPresent(control::rescheduleAfter);
      return control;
    } catch (SourceException e) {
      return retryLater(client, fail(filter, status, ready, e.reason(),
          source.description() + ": " + e.getMessage(), generation, now, events), ready, now);
    } catch (PublishException e) {
      return retryLater(client, fail(filter, status, ready, e.reason(), e.getMessage(), generation, now,
          events), ready, now);
    }
  }

  /**
   * How long a new publish must wait so that publishes of one filter are at least
   * {@code minInterval} apart; empty when it may publish now.
   */
  static Optional<Duration> publishThrottle(PublishedSnapshot current, Duration minInterval,
      Instant now) {
    Instant last = current == null ? null : current.publishedAt();
    if (last == null || minInterval.isZero()) {
      return Optional.empty();
    }
    Duration left = Duration.between(now, last.plus(minInterval));
    return left.isNegative() || left.isZero() ? Optional.empty() : Optional.of(left);
  }

  /**
   * Whether the published version may not reflect the spec and the source: judged from the
   * build record on the manifest, never from the status, which can lag behind.
   */
  static boolean needsBuild(PublishedSnapshot current, String token, long generation,
      Settings settings, Instant now) {
    if (current == null || current.manifest() == null
        || current.specGeneration() != generation) {
      return true;
    }
    if (token != null) {
      return !token.equals(current.sourceToken());
    }
    // A source that cannot tell whether it changed is rebuilt once per refresh interval.
    Instant builtAt = current.builtAt();
    return settings.refresh() != null
        && (builtAt == null || !now.isBefore(builtAt.plus(settings.refresh())));
  }

  private PublishedSnapshot buildAndPublish(KubernetesClient client, BloomFilter filter,
      KeySource source, String token, Settings settings, PublishedSnapshot current,
      BloomFilterStatus status, EventRecorder events, Instant now)
      throws SourceException, PublishException {
    // A source that cannot tell whether it changed (JDBC) is rebuilt every interval; an event
    // for each of those would flood etcd, so only builds with a reason get BuildStarted and
    // Unchanged events (Published is always recorded).
    boolean routine = token == null && current != null && current.manifest() != null
        && current.specGeneration() == filter.getMetadata().getGeneration()
        && !RebuildRequest.pending(filter);
    if (!routine) {
      events.normal(filter, "BuildStarted", "building from " + source.description());
    }
    try {
      builds.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PublishException(PublishException.FAILED, "interrupted while waiting for a "
          + "build slot (operator stopping)", e);
    }
    try {
      return buildAndPublishInSlot(client, filter, source, token, settings, current, status,
          events, now, routine);
    } finally {
      builds.release();
    }
  }

  private PublishedSnapshot buildAndPublishInSlot(KubernetesClient client, BloomFilter filter,
      KeySource source, String token, Settings settings, PublishedSnapshot current,
      BloomFilterStatus status, EventRecorder events, Instant now, boolean routine)
      throws SourceException, PublishException {
    String name = filter.getMetadata().getName();
    BuildProgressReporter progress = new BuildProgressReporter(client, filter);
    progress.started();
    FilterBuilder.Result built;
    try {
      built = new FilterBuilder(progress).build(source, new FilterBuilder.Request(settings.keyType(),
          settings.falsePositiveRate(), settings.expectedInsertions(),
          settings.maxMalformedKeys() != null ? settings.maxMalformedKeys()
              : this.settings.maxMalformedKeys(), this.settings.maxSnapshotBytes()));
    } catch (FilterTooLargeException e) {
      throw new PublishException(PublishException.TOO_LARGE, e.getMessage()
          + " (operator limit BLOOM_MAX_SNAPSHOT_BYTES); nothing was published", e);
    }
    metrics.built(built.keys(), built.took());
    long size = SnapshotEncoder.payloadSize(built.bits());
    Manifest published = current == null ? null : current.manifest();
    SnapshotStore.BuildRecord record = new SnapshotStore.BuildRecord(token,
        filter.getMetadata().getGeneration(), now);
    // The digest pass only pays off when there is a same-sized version to compare with; the
    // publish computes the digest again anyway while writing the chunks.
    if (published != null && published.totalBytes() == size
        && sha256Of(built).equals(published.sha256())) {
      // Byte-identical payload: publishing it again would only make readers reload.
      metrics.unchanged();
      if (!routine) {
        events.normal(filter, "Unchanged", "rebuilt from " + source.description() + " in "
            + built.took().toMillis() + " ms: content identical to version "
            + published.version() + ", nothing published");
      }
      LOG.info("{}/{}: rebuilt from {}, content unchanged (version {})",
          filter.getMetadata().getNamespace(), name, source.description(), published.version());
      new SnapshotStore(client, filter, this.settings.signingKey()).confirm(current, record,
          built.bits(), built.keys(), settings.chunkSize());
    } else {
      checkNamespaceBudget(client, filter, size);
      long version = Math.max(published == null ? 0 : published.version(),
          status.getVersion() == null ? 0 : status.getVersion()) + 1;
      // Leftovers of an interrupted publish must not collide with the new version's names.
      new SnapshotJanitor(client).clean(filter.getMetadata().getNamespace(), name, current,
          settings.retainPrevious(), now);
      long publishStart = System.nanoTime();
      published = new SnapshotStore(client, filter, this.settings.signingKey())
          .publish(built.bits(), built.keys(), version, settings.chunkSize(), current, record, now);
      metrics.published(size, Duration.ofNanos(System.nanoTime() - publishStart));
      events.normal(filter, "Published", "version " + version + ": " + built.keys() + " keys, "
          + published.chunks().size() + " chunk(s), " + Bytes.human(size) + ", expected FPP "
          + String.format("%.3g", published.expectedFpp()) + ", built in "
          + built.took().toMillis() + " ms from " + source.description());
    }
    describe(status, published, name);
    status.setSourceToken(token);
    status.setRebuildRequest(RebuildRequest.of(filter));
    status.setKeysRead(built.keys());
    status.setMalformedKeys(built.malformed());
    status.setNullKeys(built.nulls());
    status.setProbableDuplicateKeys(built.probableDuplicates());
    status.setLastBuildTime(now.toString());
    status.setLastBuildDurationMillis(built.took().toMillis());
    // Re-read: the manifest's resourceVersion and build record changed.
    current = null;
    return new SnapshotStore(client, filter).read();
  }

  /**
   * Refuses a publish that would take the namespace's published snapshots over
   * {@code maxNamespaceBytes}, so one namespace cannot fill etcd for everyone.
   */
  private void checkNamespaceBudget(KubernetesClient client, BloomFilter filter, long size)
      throws PublishException {
    String namespace = filter.getMetadata().getNamespace();
    long others = NamespaceBudget.publishedBytesExcept(client, namespace,
        filter.getMetadata().getName());
    if (others + size > settings.maxNamespaceBytes()) {
      throw new PublishException(PublishException.NAMESPACE_QUOTA, "publishing "
          + Bytes.human(size) + " would take the snapshots of namespace " + namespace + " to "
          + Bytes.human(others + size) + ", over the operator limit of "
          + Bytes.human(settings.maxNamespaceBytes())
          + " (BLOOM_MAX_NAMESPACE_BYTES); nothing was published", null);
    }
  }

  /** Status fields that describe the published version. */
  private static void describe(BloomFilterStatus status, Manifest published, String name) {
    status.setVersion(published.version());
    status.setManifest(SnapshotNames.manifestName(name));
    status.setKeys(published.keyCount());
    status.setNumBits(published.numBits());
    status.setNumHashFunctions(published.numHashFunctions());
    // Three significant digits: exact enough to compare with the target, short in kubectl get.
    status.setExpectedFpp(new BigDecimal(published.expectedFpp())
        .round(new MathContext(3)).doubleValue());
    status.setSizeBytes(published.totalBytes());
    status.setSize(Bytes.human(published.totalBytes()));
    status.setChunks(published.chunks().size());
    status.setSha256(published.sha256());
  }

  /** The payload digest, computed without keeping the payload (one buffer of output at a time). */
  private static String sha256Of(FilterBuilder.Result built) {
    try {
      return SnapshotEncoder.writeTo(built.bits(), OutputStream.nullOutputStream()).sha256();
    } catch (IOException e) {
      throw new UncheckedIOException("a null stream cannot fail", e);
    }
  }

  @Override
  public ErrorStatusUpdateControl<BloomFilter> updateErrorStatus(BloomFilter filter,
      Context<BloomFilter> context, Exception e) {
    BloomFilterStatus status = copyOf(filter.getStatus());
    // The exception's text may come from anywhere (a driver, a server): the log has it, the
    // status only names the kind of error.
    LOG.warn("{}/{}: unexpected error", filter.getMetadata().getNamespace(),
        filter.getMetadata().getName(), e);
    ReadyCondition.set(status, ReadyCondition.of(filter), false, "ReconcileError",
        "unexpected " + e.getClass().getSimpleName() + "; see the operator log",
        filter.getMetadata().getGeneration(), clock.instant());
    filter.setStatus(status);
    StatusWriter.write(context.getClient(), filter, status);
    return ErrorStatusUpdateControl.noStatusUpdate();
  }

  private Optional<BloomFilter> fail(BloomFilter filter, BloomFilterStatus status,
      Optional<Condition> ready, String reason, String message, long generation, Instant now,
      EventRecorder events) {
    boolean reasonChanged = ready.map(c -> !"False".equals(c.getStatus())
        || !reason.equals(c.getReason())).orElse(true);
    if (reasonChanged) {
      // One event per new failure, not one per retry.
      events.warning(filter, reason, message);
    }
    metrics.failed(reason);
    LOG.warn("{}/{}: {}: {}", filter.getMetadata().getNamespace(),
        filter.getMetadata().getName(), reason, message);
    ReadyCondition.set(status, ready, false, reason, message, generation, now);
    status.setPhase("Failed");
    filter.setStatus(status);
    return Optional.of(filter);
  }

  private static UpdateControl<BloomFilter> retryLater(KubernetesClient client,
      Optional<BloomFilter> failed,
      Optional<Condition> previous, Instant now) {
    BloomFilter filter = failed.orElseThrow();
    StatusWriter.write(client, filter, filter.getStatus());
    UpdateControl<BloomFilter> control = UpdateControl.noUpdate();
    return control.rescheduleAfter(backoff(previous, now));
  }

  /**
   * Retry delay that grows with how long the resource has been failing: the time since Ready
   * turned False, clamped to [2s, 5m]. Stateless, so it survives operator restarts.
   */
  static Duration backoff(Optional<Condition> previous, Instant now) {
    Duration failingFor = previous.filter(c -> "False".equals(c.getStatus()))
        .map(c -> Duration.between(Instant.parse(c.getLastTransitionTime()), now))
        .orElse(Duration.ZERO);
    if (failingFor.compareTo(MIN_BACKOFF) < 0) {
      return MIN_BACKOFF;
    }
    return failingFor.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : failingFor;
  }

  /**
   * When to look again: at the next refresh (a source with a change token is checked a full
   * interval from now; one without is rebuilt an interval after its last build) or when the
   * previous version's grace period ends, whichever is first.
   */
  private static Optional<Duration> next(Settings settings, PublishedSnapshot current,
      boolean hasToken, Optional<Duration> recheck, Instant now) {
    Optional<Duration> refresh = Optional.empty();
    if (settings.refresh() != null) {
      Duration left = settings.refresh();
      if (!hasToken && current != null && current.builtAt() != null) {
        left = Duration.between(now, current.builtAt().plus(settings.refresh()));
      }
      refresh = Optional.of(left.compareTo(MIN_BACKOFF) < 0 ? MIN_BACKOFF : left);
    }
    if (recheck.isPresent() && refresh.isPresent()) {
      return Optional.of(recheck.get().compareTo(refresh.get()) < 0 ? recheck.get()
          : refresh.get());
    }
    return recheck.isPresent() ? recheck : refresh;
  }

  private static BloomFilterStatus copyOf(BloomFilterStatus status) {
    return status == null ? new BloomFilterStatus()
        : io.fabric8.kubernetes.client.utils.Serialization.clone(status);
  }

  /** The spec with defaults applied and durations parsed. */
  record Settings(io.bloomoperator.snapshot.KeyType keyType, double falsePositiveRate,
      Long expectedInsertions, Duration refresh, int chunkSize, Duration retainPrevious,
      Long maxMalformedKeys) {

    /**
     * Applies defaults and checks the bounds the CRD also enforces, for resources admitted by an
     * older CRD.
     *
     * @throws IllegalArgumentException naming the field that is out of bounds
     */
    static Settings of(BloomFilterSpec spec, OperatorSettings limits) {
      if (spec == null || spec.getFalsePositiveRate() == null) {
        throw new IllegalArgumentException("spec.falsePositiveRate is required");
      }
      double p = spec.getFalsePositiveRate();
      if (!(p >= BloomFilterSpec.MIN_FALSE_POSITIVE_RATE && p < 1)) {
        throw new IllegalArgumentException("spec.falsePositiveRate must be in ["
            + BloomFilterSpec.MIN_FALSE_POSITIVE_RATE + ", 1), got " + p);
      }
      if (spec.getExpectedInsertions() != null
          && spec.getExpectedInsertions() > BloomFilterSpec.MAX_EXPECTED_INSERTIONS) {
        throw new IllegalArgumentException("spec.expectedInsertions must be at most "
            + BloomFilterSpec.MAX_EXPECTED_INSERTIONS);
      }
      SnapshotSpec snapshot = spec.getSnapshot() == null ? new SnapshotSpec() : spec.getSnapshot();
      int chunkSize = snapshot.getChunkSizeBytes() == null ? SnapshotSpec.DEFAULT_CHUNK_BYTES
          : snapshot.getChunkSizeBytes();
      if (chunkSize < 1024 || chunkSize > SnapshotSpec.MAX_CHUNK_BYTES) {
        throw new IllegalArgumentException("spec.snapshot.chunkSizeBytes must be in 1024.."
            + SnapshotSpec.MAX_CHUNK_BYTES);
      }
      Duration refresh;
      if (spec.getRefreshInterval() != null) {
        refresh = Durations.parse(spec.getRefreshInterval());
        if (refresh.compareTo(limits.minRefreshInterval()) < 0) {
          throw new IllegalArgumentException("spec.refreshInterval " + spec.getRefreshInterval()
              + " is below the operator's minimum of "
              + Durations.format(limits.minRefreshInterval()) + " (BLOOM_MIN_REFRESH_INTERVAL)");
        }
      } else if (spec.getSource() != null && spec.getSource().getInline() == null) {
        // Sources outside the resource are not watched (the operator watches only its own
        // ConfigMaps); checking one is a single GET, and it rebuilds only when it changed.
        refresh = DEFAULT_SOURCE_CHECK;
      } else {
        refresh = null;
      }
      Duration retain = Durations.parse(snapshot.getRetainPreviousFor() == null
          ? SnapshotSpec.DEFAULT_RETAIN : snapshot.getRetainPreviousFor());
      if (retain.compareTo(SnapshotSpec.MAX_RETAIN) > 0) {
        throw new IllegalArgumentException("spec.snapshot.retainPreviousFor must be at most "
            + Durations.format(SnapshotSpec.MAX_RETAIN));
      }
      return new Settings(
          spec.getKeyType() == null ? io.bloomoperator.snapshot.KeyType.STRING
              : spec.getKeyType(),
          p, spec.getExpectedInsertions(), refresh, chunkSize, retain,
          spec.getMaxMalformedKeys());
    }
  }
}
