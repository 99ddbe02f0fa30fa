package io.bloomoperator.watch.metrics;

import static io.bloomoperator.watch.metrics.ReaderMetricNames.DELTAS_IN_PLACE;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.FPP_EXPECTED;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.FPP_OBSERVED;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.IN_PLACE_DIGEST_MISMATCHES;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.LOAD_FAILURES;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.LOCAL_ADDS;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.LOCAL_ADDS_ARRIVED;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.LOCAL_ADDS_EXPIRED;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.LOCAL_ADDS_REFUSED;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.LOOKUPS;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.MAYBE_PRESENT;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.OUTCOMES;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.RESULT_FALSE_POSITIVE;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.RESULT_TRUE_POSITIVE;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.SNAPSHOT_AGE;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.SNAPSHOT_VERSION;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.SWAPS;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.TAG_FILTER;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.TAG_NAMESPACE;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.TAG_REASON;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.TAG_RESULT;
import static io.bloomoperator.watch.metrics.ReaderMetricNames.UNIT_SECONDS;

import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.ManifestView;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Objects;
import java.util.function.ToDoubleFunction;

/**
 * Registers a {@link LiveBloomFilter}'s reader metrics ({@link ReaderMetricNames}) with a
 * Micrometer registry; plain Java, no framework needed:
 *
 * <pre>{@code
 * new LiveBloomFilterMetrics(ids).bindTo(registry);
 * }</pre>
 *
 * <p>Every meter reads the filter's own counters when the registry is scraped, so binding costs the
 * lookup path nothing. Meters hold the filter strongly: bind a filter for as long as it lives (a
 * closed filter keeps reporting its last state). Counters for every {@link LoadFailureReason} are
 * registered up front, so an alert on a reason sees a zero rather than no series.
 */
public final class LiveBloomFilterMetrics implements MeterBinder {

  private final LiveBloomFilter<?> filter;
  private final Tags tags;

  /** Metrics of {@code filter}, tagged with its namespace and name. */
  public LiveBloomFilterMetrics(LiveBloomFilter<?> filter) {
    this(filter, Tags.empty());
  }

  /** Metrics of {@code filter}, tagged with its namespace and name and {@code extraTags}. */
  public LiveBloomFilterMetrics(LiveBloomFilter<?> filter, Iterable<Tag> extraTags) {
    this.filter = Objects.requireNonNull(filter, "filter");
    this.tags =
        Tags.of(TAG_NAMESPACE, filter.namespace(), TAG_FILTER, filter.filterName()).and(extraTags);
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    gauge(
            SNAPSHOT_VERSION,
            "Version of the served snapshot, -1 before the first",
            f -> f.currentVersion())
        .register(registry);
    gauge(
            SNAPSHOT_AGE,
            "Time since the served snapshot was built",
            f -> f.snapshotAge().map(LiveBloomFilterMetrics::seconds).orElse(Double.NaN))
        .baseUnit(UNIT_SECONDS)
        .register(registry);
    gauge(
            FPP_EXPECTED,
            "Expected false-positive probability of the served snapshot at its key count",
            f -> f.currentManifest().map(ManifestView::expectedFpp).orElse(Double.NaN))
        .register(registry);
    gauge(
            FPP_OBSERVED,
            "False-positive rate estimated from the outcomes reported for the served version",
            f -> f.observedFalsePositives().rate())
        .register(registry);
    counter(SWAPS, "Snapshots swapped in", LiveBloomFilter::loads, tags).register(registry);
    counter(LOOKUPS, "mightContain calls", LiveBloomFilter::lookups, tags).register(registry);
    counter(
            MAYBE_PRESENT,
            "mightContain calls answered maybe present",
            LiveBloomFilter::maybePresent,
            tags)
        .register(registry);
    counter(
            OUTCOMES,
            "Reported outcomes of maybe-present answers",
            LiveBloomFilter::truePositives,
            tags.and(TAG_RESULT, RESULT_TRUE_POSITIVE))
        .register(registry);
    counter(
            OUTCOMES,
            "Reported outcomes of maybe-present answers",
            LiveBloomFilter::falsePositives,
            tags.and(TAG_RESULT, RESULT_FALSE_POSITIVE))
        .register(registry);
    gauge(LOCAL_ADDS, "Keys added locally that no served version has shown yet", f -> f.localAdds())
        .register(registry);
    counter(
            LOCAL_ADDS_REFUSED,
            "Local adds refused because the bound was reached",
            LiveBloomFilter::localAddsRefused,
            tags)
        .register(registry);
    counter(
            LOCAL_ADDS_EXPIRED,
            "Keys added locally that no served version showed before their TTL passed",
            LiveBloomFilter::localAddsExpired,
            tags)
        .register(registry);
    counter(
            LOCAL_ADDS_ARRIVED,
            "Keys added locally and dropped because a served version showed them",
            LiveBloomFilter::localAddsArrived,
            tags)
        .register(registry);
    counter(
            DELTAS_IN_PLACE,
            "Versions applied to the served bits in place instead of swapped in",
            LiveBloomFilter::deltasAppliedInPlace,
            tags)
        .register(registry);
    counter(
            IN_PLACE_DIGEST_MISMATCHES,
            "Payload checks of bits changed in place that did not match the manifest",
            LiveBloomFilter::inPlaceDigestMismatches,
            tags)
        .register(registry);
    for (LoadFailureReason reason : LoadFailureReason.values()) {
      counter(
              LOAD_FAILURES,
              "Failed snapshot loads",
              f -> f.failures(reason),
              tags.and(TAG_REASON, reason.tagValue()))
          .register(registry);
    }
  }

  private Gauge.Builder<LiveBloomFilter<?>> gauge(
      String name, String description, ToDoubleFunction<LiveBloomFilter<?>> value) {
    return Gauge.builder(name, filter, value)
        .description(description)
        .tags(tags)
        .strongReference(true);
  }

  private FunctionCounter.Builder<LiveBloomFilter<?>> counter(
      String name, String description, ToDoubleFunction<LiveBloomFilter<?>> value, Tags meterTags) {
    return FunctionCounter.builder(name, filter, value).description(description).tags(meterTags);
  }

  private static double seconds(Duration duration) {
    return duration.toNanos() / 1e9;
  }
}
