package io.bloomoperator.watch.metrics;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The catalogue of the reader metrics {@link LiveBloomFilterMetrics} registers: Micrometer names,
 * tag keys and values, and the names the Prometheus registry exposes them under. Dashboards and
 * alert rules are written against these names (a test checks them against this class); renaming one
 * is a breaking change. Free of Micrometer types, so it loads without Micrometer.
 *
 * <p>Every meter carries the tags {@value #TAG_NAMESPACE} and {@value #TAG_FILTER} (the BloomFilter
 * resource).
 */
public final class ReaderMetricNames {

  /** Gauge: version of the served snapshot; -1 before the first. */
  public static final String SNAPSHOT_VERSION = "bloomreader.snapshot.version";

  /** Gauge, seconds: time since the served snapshot was built (manifest createdAt); NaN before. */
  public static final String SNAPSHOT_AGE = "bloomreader.snapshot.age";

  /** Counter: snapshots swapped in (the first one and one read from the local directory count). */
  public static final String SWAPS = "bloomreader.swaps";

  /** Counter, tag {@value #TAG_REASON}: failed load attempts. */
  public static final String LOAD_FAILURES = "bloomreader.load.failures";

  /** Counter: mightContain calls. */
  public static final String LOOKUPS = "bloomreader.lookups";

  /** Counter: mightContain calls that answered "maybe present". */
  public static final String MAYBE_PRESENT = "bloomreader.maybe.present";

  /**
   * Gauge: the served snapshot's expected false-positive probability at its actual key count (the
   * manifest's {@code expectedFpp}); NaN before the first snapshot.
   */
  public static final String FPP_EXPECTED = "bloomreader.fpp.expected";

  /**
   * Gauge: the false-positive rate estimated from the outcomes the application reported for the
   * served version ({@link io.bloomoperator.watch.FalsePositiveObservation#rate()}); NaN until
   * there is data.
   */
  public static final String FPP_OBSERVED = "bloomreader.fpp.observed";

  /** Counter, tag {@value #TAG_RESULT}: outcomes reported with recordOutcome, all versions. */
  public static final String OUTCOMES = "bloomreader.outcomes";

  /** Gauge: keys added with addLocal that no served version has shown yet (held in the overlay). */
  public static final String LOCAL_ADDS = "bloomreader.local.adds";

  /** Counter: addLocal calls refused because the overlay's bound was reached. */
  public static final String LOCAL_ADDS_REFUSED = "bloomreader.local.adds.refused";

  /**
   * Counter: keys added with addLocal and dropped when their TTL passed before a served version
   * showed them. Above zero, IDs created in this pod do not reach the published filter in time.
   */
  public static final String LOCAL_ADDS_EXPIRED = "bloomreader.local.adds.expired";

  /** Counter: keys added with addLocal and dropped because a served version showed them. */
  public static final String LOCAL_ADDS_ARRIVED = "bloomreader.local.adds.arrived";

  /**
   * Counter: versions applied to the served bits in place (deltas that only add keys) instead of
   * swapped in; each is also counted in {@link #SWAPS}.
   */
  public static final String DELTAS_IN_PLACE = "bloomreader.deltas.in.place";

  /**
   * Counter: checks that found the payload of bits changed in place not to match its manifest's
   * SHA-256; each reloaded the version from scratch. Above zero, memory or the writer is not to be
   * trusted.
   */
  public static final String IN_PLACE_DIGEST_MISMATCHES = "bloomreader.in.place.digest.mismatches";

  /** Tag on every meter: namespace of the BloomFilter. */
  public static final String TAG_NAMESPACE = "namespace";

  /** Tag on every meter: name of the BloomFilter. */
  public static final String TAG_FILTER = "filter";

  /**
   * Tag of {@link #LOAD_FAILURES}: a {@link
   * io.bloomoperator.snapshot.LoadFailureReason#tagValue()}.
   */
  public static final String TAG_REASON = "reason";

  /** Tag of {@link #OUTCOMES}: {@link #RESULT_TRUE_POSITIVE} or {@link #RESULT_FALSE_POSITIVE}. */
  public static final String TAG_RESULT = "result";

  /** {@link #TAG_RESULT} value: the store had the key. */
  public static final String RESULT_TRUE_POSITIVE = "true_positive";

  /** {@link #TAG_RESULT} value: the store did not have the key. */
  public static final String RESULT_FALSE_POSITIVE = "false_positive";

  /** Base unit of {@link #SNAPSHOT_AGE}. */
  public static final String UNIT_SECONDS = "seconds";

  /**
   * Each Micrometer name above with the name Micrometer's Prometheus registry exposes it under
   * (dots to underscores, {@code _seconds} for the base unit, {@code _total} for counters), in the
   * order above.
   */
  public static final Map<String, String> PROMETHEUS_NAMES = prometheusNames();

  private ReaderMetricNames() {}

  private static Map<String, String> prometheusNames() {
    Map<String, String> names = new LinkedHashMap<>();
    names.put(SNAPSHOT_VERSION, "bloomreader_snapshot_version");
    names.put(SNAPSHOT_AGE, "bloomreader_snapshot_age_seconds");
    names.put(SWAPS, "bloomreader_swaps_total");
    names.put(LOAD_FAILURES, "bloomreader_load_failures_total");
    names.put(LOOKUPS, "bloomreader_lookups_total");
    names.put(MAYBE_PRESENT, "bloomreader_maybe_present_total");
    names.put(FPP_EXPECTED, "bloomreader_fpp_expected");
    names.put(FPP_OBSERVED, "bloomreader_fpp_observed");
    names.put(OUTCOMES, "bloomreader_outcomes_total");
    names.put(LOCAL_ADDS, "bloomreader_local_adds");
    names.put(LOCAL_ADDS_REFUSED, "bloomreader_local_adds_refused_total");
    names.put(LOCAL_ADDS_EXPIRED, "bloomreader_local_adds_expired_total");
    names.put(LOCAL_ADDS_ARRIVED, "bloomreader_local_adds_arrived_total");
    names.put(DELTAS_IN_PLACE, "bloomreader_deltas_in_place_total");
    names.put(IN_PLACE_DIGEST_MISMATCHES, "bloomreader_in_place_digest_mismatches_total");
    return java.util.Collections.unmodifiableMap(names);
  }
}
