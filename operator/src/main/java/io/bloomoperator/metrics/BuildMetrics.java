package io.bloomoperator.metrics;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The operator's own metrics beside java-operator-sdk's, as defined in {@link MetricCatalogue}: how
 * long builds and publishes take, how big the results are, why things fail, and per filter whether
 * it is Ready and how fresh its snapshot is. Exported as Prometheus text on /metrics.
 *
 * <p>Per-filter series (gauges, and the build and publish duration histograms) are created at a
 * filter's first reconcile and removed by {@link #forget} when it is deleted, so their number
 * follows the number of BloomFilters (docs/configuration.md#metrics counts them).
 */
public final class BuildMetrics {

  /** How many deleted filters are remembered, so a reconcile still running does not revive one. */
  private static final int REMEMBERED_DELETIONS = 1024;

  private final MeterRegistry registry;
  private final DistributionSummary keys;
  private final DistributionSummary snapshotBytes;
  private final Counter published;
  private final Counter unchanged;
  private final Counter etcdWritten;
  private final Counter buildCrashes;
  private final Timer rolloutDuration;
  private final Timer streamDelay;
  private final Counter streamAdds;
  private final Counter streamDeletes;
  private final Counter streamMalformed;
  private final Map<String, FilterGauges> filters = new ConcurrentHashMap<>();
  private final Set<String> deletedUids =
      Collections.synchronizedSet(
          Collections.newSetFromMap(
              new LinkedHashMap<>() {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                  return size() > REMEMBERED_DELETIONS;
                }
              }));

  public BuildMetrics(MeterRegistry registry) {
    this.registry = registry;
    Gauge.builder(MetricCatalogue.BUILD_INFO.name(), () -> 1)
        .description(MetricCatalogue.BUILD_INFO.meaning())
        .tags(
            MetricCatalogue.TAG_VERSION,
            version(),
            MetricCatalogue.TAG_JAVA,
            Integer.toString(Runtime.version().feature()))
        .register(registry);
    this.keys = summary(MetricCatalogue.BUILD_KEYS);
    this.snapshotBytes = summary(MetricCatalogue.SNAPSHOT_BYTES);
    this.published = counter(MetricCatalogue.PUBLISHED, Tags.empty());
    this.unchanged = counter(MetricCatalogue.REBUILDS_UNCHANGED, Tags.empty());
    this.etcdWritten = counter(MetricCatalogue.ETCD_WRITTEN, Tags.empty());
    // Registered at start, so a scrape shows 0 before the first crash (alerts see the series).
    this.buildCrashes = counter(MetricCatalogue.BUILD_CRASHES, Tags.empty());
    // Operator-wide (one series set, however many filters), registered at start like the above.
    this.rolloutDuration = histogram(MetricCatalogue.ROLLOUT_DURATION);
    // The change-stream meters, at start too: a scrape shows them before any filter has a stream.
    this.streamDelay = histogram(MetricCatalogue.STREAM_PUBLISH_DELAY);
    this.streamAdds =
        counter(MetricCatalogue.STREAM_EVENTS, Tags.of(MetricCatalogue.TAG_KIND, "add"));
    this.streamDeletes =
        counter(MetricCatalogue.STREAM_EVENTS, Tags.of(MetricCatalogue.TAG_KIND, "delete"));
    this.streamMalformed =
        counter(MetricCatalogue.STREAM_EVENTS, Tags.of(MetricCatalogue.TAG_KIND, "malformed"));
    for (String reason : List.of("backoff", "reads", "bytes")) {
      streamDeferred(reason, 0);
    }
  }

  /** Reports {@code reserved} (read when scraped) as the heap the stream reads hold. */
  public void streamReadBytes(java.util.function.LongSupplier reserved) {
    io.micrometer.core.instrument.Gauge.builder(
            MetricCatalogue.STREAM_READ_BYTES.name(), () -> (double) reserved.getAsLong())
        .description(MetricCatalogue.STREAM_READ_BYTES.meaning())
        .baseUnit(MetricCatalogue.STREAM_READ_BYTES.unit())
        .register(registry);
  }

  /** A stream read put off to a later reconcile, by its reason (a fixed set of values). */
  public void streamDeferred(String reason) {
    streamDeferred(reason, 1);
  }

  private void streamDeferred(String reason, long count) {
    counter(MetricCatalogue.STREAM_READS_DEFERRED, Tags.of(MetricCatalogue.TAG_REASON, reason))
        .increment(count);
  }

  /** The jar's Implementation-Version, or {@code dev} when run from classes (tests, IDE). */
  static String version() {
    String version = BuildMetrics.class.getPackage().getImplementationVersion();
    return version == null ? "dev" : version;
  }

  /**
   * A stream delta of {@code filter} published: its events, and the delay from its oldest event
   * (null: not known) to {@code now}.
   */
  public void streamPublished(
      long adds, long deletes, long malformed, Instant oldestEvent, Instant now) {
    streamAdds.increment(adds);
    streamDeletes.increment(deletes);
    streamMalformed.increment(malformed);
    if (oldestEvent != null) {
      // A producer's clock may run ahead: never a negative delay.
      Duration delay = Duration.between(oldestEvent, now);
      streamDelay.record(delay.isNegative() ? Duration.ZERO : delay);
    }
  }

  /** A stream read of {@code filter} that failed, by its kind (a fixed set of values). */
  public void streamFailed(String kind) {
    counter(MetricCatalogue.STREAM_FAILURES, Tags.of(MetricCatalogue.TAG_KIND, kind)).increment();
  }

  /** The lag of {@code filter}'s stream after its last read; null: it has none (or not known). */
  public void streamLag(BloomFilter filter, Long lag) {
    gauges(filter).set(MetricCatalogue.FILTER_STREAM_LAG, lag == null ? null : lag.doubleValue());
  }

  /** Metrics that go nowhere, for tests and embedded use. */
  public static BuildMetrics discarding() {
    return new BuildMetrics(new SimpleMeterRegistry());
  }

  /** A finished build of {@code filter}: its keys, and its time in the filter's histogram. */
  public void built(BloomFilter filter, long keyCount, Duration took) {
    keys.record(keyCount);
    gauges(filter).record(MetricCatalogue.BUILD_DURATION, took);
  }

  /** A new version of {@code filter}: its bytes, and its time in the filter's histogram. */
  public void published(BloomFilter filter, long bytes, Duration took) {
    published.increment();
    snapshotBytes.record(bytes);
    gauges(filter).record(MetricCatalogue.PUBLISH_DURATION, took);
  }

  /** Bytes charged to the etcd write budgets. */
  public void etcdWritten(long bytes) {
    etcdWritten.increment(bytes);
  }

  public void unchanged() {
    unchanged.increment();
  }

  /** A reconcile that set Ready=False with {@code reason}. */
  public void failed(String reason) {
    counter(MetricCatalogue.FAILURES, reasonTag(reason)).increment();
  }

  /** A build whose result was not published, by the reason on the Ready condition. */
  public void publishFailed(String reason) {
    counter(MetricCatalogue.PUBLISH_FAILURES, reasonTag(reason)).increment();
  }

  /** A source that could not be read, by the reason on the Ready condition. */
  public void sourceFailed(String reason) {
    counter(MetricCatalogue.SOURCE_ERRORS, reasonTag(reason)).increment();
  }

  /** A build during which the operator died, found after a restart. */
  public void buildCrashed() {
    buildCrashes.increment();
  }

  /** The filter's refresh interval as resolved at this reconcile (null: none). */
  public void refreshInterval(BloomFilter filter, Duration refresh) {
    gauges(filter)
        .set(MetricCatalogue.FILTER_REFRESH_INTERVAL, refresh == null ? null : seconds(refresh));
  }

  /**
   * The version the filter has published, its delta chain, and when it was written (null: unknown).
   */
  public void snapshot(BloomFilter filter, Manifest published, Instant publishedAt) {
    FilterGauges gauges = gauges(filter);
    gauges.set(MetricCatalogue.FILTER_SNAPSHOT_VERSION, (double) published.version());
    gauges.set(MetricCatalogue.FILTER_BASE_VERSION, (double) published.baseVersion());
    gauges.set(MetricCatalogue.FILTER_DELTAS, (double) published.deltas().size());
    gauges.set(MetricCatalogue.FILTER_LAST_PUBLISH, (double) published.versionBytes());
    if (publishedAt != null) {
      gauges.set(MetricCatalogue.FILTER_SNAPSHOT_TIMESTAMP, epochSeconds(publishedAt));
    }
  }

  /**
   * The Ready condition just written; when True, {@code now} is also the time the published version
   * was last found current.
   */
  public void ready(BloomFilter filter, boolean ready, Instant now) {
    FilterGauges gauges = gauges(filter);
    gauges.set(MetricCatalogue.FILTER_READY, ready ? 1.0 : 0.0);
    if (ready) {
      gauges.set(MetricCatalogue.FILTER_VERIFIED_TIMESTAMP, epochSeconds(now));
    }
  }

  /** The reader counts just written to the filter's status.readers. */
  public void readers(BloomFilter filter, ReaderStatus readers) {
    FilterGauges gauges = gauges(filter);
    gauges.set(MetricCatalogue.FILTER_READERS, (double) readers.getTotal());
    gauges.set(MetricCatalogue.FILTER_READERS_CURRENT, (double) readers.getCurrent());
    gauges.set(MetricCatalogue.FILTER_READERS_STALE, (double) readers.getStale());
    gauges.set(MetricCatalogue.FILTER_READERS_FAILING, (double) readers.getFailing());
  }

  /** A rollout that completed {@code took} after its publish. */
  public void rolloutCompleted(Duration took) {
    rolloutDuration.record(took);
  }

  /**
   * Removes the series of a deleted BloomFilter.
   *
   * @param uid the deleted object's uid (a reconcile of it that finishes later is ignored), or null
   */
  public void forget(String namespace, String name, String uid) {
    if (uid != null) {
      deletedUids.add(uid);
    }
    FilterGauges gauges = filters.remove(key(namespace, name));
    if (gauges != null) {
      gauges.removeAll();
    }
  }

  /** The filter's gauges; a detached set (values go nowhere) when the filter was deleted. */
  private FilterGauges gauges(BloomFilter filter) {
    String namespace = filter.getMetadata().getNamespace();
    String name = filter.getMetadata().getName();
    String uid = filter.getMetadata().getUid();
    if (uid != null && deletedUids.contains(uid)) {
      return FilterGauges.detached(registry);
    }
    return filters.computeIfAbsent(
        key(namespace, name), k -> new FilterGauges(registry, namespace, name));
  }

  private static String key(String namespace, String name) {
    return namespace + "/" + name;
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static double epochSeconds(Instant t) {
    return t.toEpochMilli() / 1000.0;
  }

  /** A reason from {@link Reasons}; anything else is counted as ReconcileError. */
  private static Tags reasonTag(String reason) {
    return Tags.of(
        MetricCatalogue.TAG_REASON,
        Reasons.all().contains(reason) ? reason : Reasons.RECONCILE_ERROR);
  }

  private DistributionSummary summary(Metric m) {
    return DistributionSummary.builder(m.name())
        .baseUnit(m.unit())
        .description(m.meaning())
        .register(registry);
  }

  /** An operator-wide histogram with the catalogue's buckets. */
  private Timer histogram(Metric m) {
    return Timer.builder(m.name())
        .description(m.meaning())
        .serviceLevelObjectives(MetricCatalogue.durationBuckets(m).toArray(Duration[]::new))
        .register(registry);
  }

  private Counter counter(Metric m, Tags tags) {
    return Counter.builder(m.name()).description(m.meaning()).tags(tags).register(registry);
  }
}
