package io.bloomoperator.metrics;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/**
 * Every metric the operator exports beside java-operator-sdk's {@code operator_sdk_*}: the one
 * place their names, types, tags and meanings are defined. {@link BuildMetrics} registers them from
 * here, docs/configuration.md's metrics table and the dashboard and alert rules in
 * deploy/monitoring/ are tested against {@link #all()}.
 *
 * <p>Tag values are bounded: {@code reason} is one of {@link io.bloomoperator.api.Reasons}, {@code
 * namespace} and {@code filter} name an existing BloomFilter (its series go when it is deleted).
 * Nothing read from a source is ever a tag value.
 */
public final class MetricCatalogue {

  /** Tag: a condition reason from {@link io.bloomoperator.api.Reasons}. */
  public static final String TAG_REASON = "reason";

  /** Tag: the BloomFilter's namespace. */
  public static final String TAG_NAMESPACE = "namespace";

  /** Tag: the BloomFilter's name. */
  public static final String TAG_FILTER = "filter";

  /** Tag: the operator's version (its jar's Implementation-Version; {@code dev} from classes). */
  public static final String TAG_VERSION = "version";

  /** Tag: the Java runtime's feature version, e.g. {@code 17}. */
  public static final String TAG_JAVA = "java";

  /** Tag: what a change-stream event or failure was (a fixed set of values). */
  public static final String TAG_KIND = "kind";

  public static final Metric BUILD_INFO =
      new Metric(
          "bloomoperator.build.info",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_VERSION, TAG_JAVA),
          "always 1: which operator version runs (and whether any is scraped at all)");

  public static final Metric BUILD_DURATION =
      new Metric(
          "bloomoperator.build.duration",
          Metric.Type.HISTOGRAM,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "time to read the source and build the filter, per build");

  public static final Metric BUILD_KEYS =
      new Metric(
          "bloomoperator.build.keys", Metric.Type.SUMMARY, null, List.of(), "keys read per build");

  public static final Metric PUBLISH_DURATION =
      new Metric(
          "bloomoperator.publish.duration",
          Metric.Type.HISTOGRAM,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "time to write the chunks and the manifest of a new version");

  public static final Metric SNAPSHOT_BYTES =
      new Metric(
          "bloomoperator.snapshot.bytes",
          Metric.Type.SUMMARY,
          "bytes",
          List.of(),
          "payload bytes per published version (`_sum`: bytes published)");

  public static final Metric PUBLISHED =
      new Metric(
          "bloomoperator.published",
          Metric.Type.COUNTER,
          null,
          List.of(),
          "new versions published");

  public static final Metric ETCD_WRITTEN =
      new Metric(
          "bloomoperator.etcd.written.bytes",
          Metric.Type.COUNTER,
          null,
          List.of(),
          "bytes charged to the etcd write budgets: new versions (chunks and manifests, 2 KiB"
              + " per object for its metadata) and status writes (the whole BloomFilter each);"
              + " refusals count in bloomoperator_publish_failures_total"
              + "{reason=\"WriteBudgetExceeded\"}");

  public static final Metric REBUILDS_UNCHANGED =
      new Metric(
          "bloomoperator.rebuilds.unchanged",
          Metric.Type.COUNTER,
          null,
          List.of(),
          "rebuilds whose payload equalled the published one (nothing written)");

  public static final Metric FAILURES =
      new Metric(
          "bloomoperator.failures",
          Metric.Type.COUNTER,
          null,
          List.of(TAG_REASON),
          "reconciles that set Ready=False, by reason");

  public static final Metric PUBLISH_FAILURES =
      new Metric(
          "bloomoperator.publish.failures",
          Metric.Type.COUNTER,
          null,
          List.of(TAG_REASON),
          "builds whose result was not published (too large, quota, name conflict, signing key,"
              + " etcd full, API server refusal), by reason");

  public static final Metric SOURCE_ERRORS =
      new Metric(
          "bloomoperator.source.errors",
          Metric.Type.COUNTER,
          null,
          List.of(TAG_REASON),
          "failed reads of a source (not found, unreadable, timeout, malformed keys, ...), by"
              + " reason");

  public static final Metric BUILD_CRASHES =
      new Metric(
          "bloomoperator.build.crashes",
          Metric.Type.COUNTER,
          null,
          List.of(),
          "builds found unfinished after an operator restart (the operator died during them); each"
              + " backs off before its filter builds again (reason BuildCrashed)");

  public static final Metric FILTER_READY =
      new Metric(
          "bloomoperator.filter.ready",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "1 while the filter's Ready condition is True, 0 while it is False");

  public static final Metric FILTER_SNAPSHOT_VERSION =
      new Metric(
          "bloomoperator.filter.snapshot.version",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "the published version");

  public static final Metric FILTER_BASE_VERSION =
      new Metric(
          "bloomoperator.filter.base.version",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "the version whose whole snapshot the published delta chain starts from (= the"
              + " published version when it is whole)");

  public static final Metric FILTER_DELTAS =
      new Metric(
          "bloomoperator.filter.deltas",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "deltas after the base in the published chain (0: a whole snapshot)");

  public static final Metric FILTER_LAST_PUBLISH =
      new Metric(
          "bloomoperator.filter.last.publish",
          Metric.Type.GAUGE,
          "bytes",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "bytes the published version's own chunks hold: its delta, or its whole payload");

  public static final Metric FILTER_SNAPSHOT_TIMESTAMP =
      new Metric(
          "bloomoperator.filter.snapshot.timestamp",
          Metric.Type.GAUGE,
          "seconds",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "when the published version was written (Unix time)");

  public static final Metric FILTER_VERIFIED_TIMESTAMP =
      new Metric(
          "bloomoperator.filter.verified.timestamp",
          Metric.Type.GAUGE,
          "seconds",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "when the operator last found the published version current (built it, or saw the"
              + " source unchanged; Unix time): what the staleness alert compares");

  public static final Metric FILTER_REFRESH_INTERVAL =
      new Metric(
          "bloomoperator.filter.refresh.interval",
          Metric.Type.GAUGE,
          "seconds",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "how often the source is checked (absent for inline keys, which have no interval)");

  public static final Metric ROLLOUT_DURATION =
      new Metric(
          "bloomoperator.rollout.duration",
          Metric.Type.HISTOGRAM,
          null,
          List.of(),
          "time from a publish to every reader with a recent heartbeat serving it (reader reports,"
              + " docs/reader-protocol.md)");

  public static final Metric FILTER_READERS =
      new Metric(
          "bloomoperator.filter.readers",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers that report, from live pods (status.readers.total)");

  public static final Metric FILTER_READERS_CURRENT =
      new Metric(
          "bloomoperator.filter.readers.current",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers serving the published version; the rest are on other versions or stale");

  public static final Metric FILTER_READERS_STALE =
      new Metric(
          "bloomoperator.filter.readers.stale",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers without a heartbeat within the bound they declared");

  public static final Metric FILTER_READERS_FAILING =
      new Metric(
          "bloomoperator.filter.readers.failing",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers failing to load a newer version than the one they serve");

  public static final Metric STREAM_EVENTS =
      new Metric(
          "bloomoperator.stream.events",
          Metric.Type.COUNTER,
          null,
          List.of(TAG_KIND),
          "change-stream events published, by kind: add, delete (applied by the next full build),"
              + " malformed");

  public static final Metric STREAM_FAILURES =
      new Metric(
          "bloomoperator.stream.failures",
          Metric.Type.COUNTER,
          null,
          List.of(TAG_KIND),
          "change-stream reads that failed, by kind: refused (spec, topic or egress),"
              + " position_lost (a full build follows), unavailable");

  public static final Metric STREAM_READS_DEFERRED =
      new Metric(
          "bloomoperator.stream.reads.deferred",
          Metric.Type.COUNTER,
          null,
          List.of(TAG_REASON),
          "change-stream reads put off to a later reconcile, by reason: backoff (the stream failed"
              + " lately), reads (the namespace has its share of reads under way), bytes (too"
              + " little of the read heap is free)");

  public static final Metric STREAM_READ_BYTES =
      new Metric(
          "bloomoperator.stream.read",
          Metric.Type.GAUGE,
          "bytes",
          List.of(),
          "heap reserved by the change-stream reads under way, from each read's start to its"
              + " publish (at most BLOOM_STREAM_READ_BYTES)");

  public static final Metric STREAM_PUBLISH_DELAY =
      new Metric(
          "bloomoperator.stream.publish.delay",
          Metric.Type.HISTOGRAM,
          null,
          List.of(),
          "time from the oldest event of a published stream delta (its record timestamp) to the"
              + " delta's publish");

  public static final Metric FILTER_STREAM_LAG =
      new Metric(
          "bloomoperator.filter.stream.lag",
          Metric.Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "events in the filter's change stream after its last read (status.stream.lag)");

  /**
   * Bucket bounds of {@link #BUILD_DURATION}: from an inline list (well under a second) to a build
   * stopped by {@code BLOOM_MAX_BUILD_TIME} (15 minutes by default).
   */
  private static final List<Duration> BUILD_BUCKETS =
      seconds(0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900);

  /** Bucket bounds of {@link #PUBLISH_DURATION}: one small ConfigMap to 256 chunks of 1 MiB. */
  private static final List<Duration> PUBLISH_BUCKETS =
      seconds(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60);

  /** Bucket bounds of {@link #ROLLOUT_DURATION}: a swap within a second to a stalled hour. */
  private static final List<Duration> ROLLOUT_BUCKETS =
      seconds(1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600);

  /** Bucket bounds of {@link #STREAM_PUBLISH_DELAY}: the 2 s freshness goal is a bound. */
  private static final List<Duration> STREAM_DELAY_BUCKETS =
      seconds(0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 300);

  private MetricCatalogue() {}

  /**
   * The bucket bounds of a {@link Type#HISTOGRAM}: few and fixed, so each filter adds a known
   * number of series (bounds + 4: {@code +Inf}, {@code _count}, {@code _sum}, {@code _max}).
   */
  public static List<Duration> durationBuckets(Metric metric) {
    if (metric.equals(BUILD_DURATION)) {
      return BUILD_BUCKETS;
    }
    if (metric.equals(PUBLISH_DURATION)) {
      return PUBLISH_BUCKETS;
    }
    if (metric.equals(ROLLOUT_DURATION)) {
      return ROLLOUT_BUCKETS;
    }
    if (metric.equals(STREAM_PUBLISH_DELAY)) {
      return STREAM_DELAY_BUCKETS;
    }
    throw new IllegalArgumentException(metric.name() + " is not a histogram");
  }

  private static List<Duration> seconds(double... bounds) {
    return Arrays.stream(bounds).mapToObj(b -> Duration.ofMillis(Math.round(b * 1000))).toList();
  }

  /** Every metric above, in declaration order. */
  public static List<Metric> all() {
    return List.of(
        BUILD_INFO,
        BUILD_DURATION,
        BUILD_KEYS,
        PUBLISH_DURATION,
        SNAPSHOT_BYTES,
        PUBLISHED,
        ETCD_WRITTEN,
        REBUILDS_UNCHANGED,
        FAILURES,
        PUBLISH_FAILURES,
        SOURCE_ERRORS,
        BUILD_CRASHES,
        FILTER_READY,
        FILTER_SNAPSHOT_VERSION,
        FILTER_BASE_VERSION,
        FILTER_DELTAS,
        FILTER_LAST_PUBLISH,
        FILTER_SNAPSHOT_TIMESTAMP,
        FILTER_VERIFIED_TIMESTAMP,
        FILTER_REFRESH_INTERVAL,
        ROLLOUT_DURATION,
        FILTER_READERS,
        FILTER_READERS_CURRENT,
        FILTER_READERS_STALE,
        FILTER_READERS_FAILING,
        STREAM_EVENTS,
        STREAM_FAILURES,
        STREAM_READS_DEFERRED,
        STREAM_READ_BYTES,
        STREAM_PUBLISH_DELAY,
        FILTER_STREAM_LAG);
  }
}
