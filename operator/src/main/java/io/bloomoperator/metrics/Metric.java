package io.bloomoperator.metrics;

import java.util.List;

/**
 * One metric of the operator's catalogue ({@link MetricCatalogue}).
 *
 * @param name the Micrometer name (dots)
 * @param type how it is exported
 * @param unit Micrometer base unit appended to the Prometheus name, or null
 * @param tags tag keys, every one with a bounded set of values
 * @param meaning what it measures, as documented
 */
public record Metric(String name, Type type, String unit, List<String> tags, String meaning) {

  /** How a metric is exported in the Prometheus text format. */
  public enum Type {
    /** {@code <name>_seconds_count}, {@code _sum}, {@code _max}. */
    TIMER,
    /**
     * A timer with fixed buckets: {@code <name>_seconds_bucket} (one series per bound of {@link
     * MetricCatalogue#durationBuckets} and {@code +Inf}), {@code _count}, {@code _sum}, {@code
     * _max}.
     */
    HISTOGRAM,
    /** {@code <name>[_<unit>]_count}, {@code _sum}, {@code _max}. */
    SUMMARY,
    /** {@code <name>_total}. */
    COUNTER,
    /** {@code <name>[_<unit>]}. */
    GAUGE
  }

  /** The Prometheus family name (what a PromQL expression names, before type suffixes). */
  public String prometheusName() {
    String family = name.replace('.', '_');
    String exportedUnit = type == Type.TIMER || type == Type.HISTOGRAM ? "seconds" : unit;
    // Micrometer appends the unit unless the name already ends with it.
    if (exportedUnit != null && !family.endsWith("_" + exportedUnit)) {
      family += "_" + exportedUnit;
    }
    return type == Type.COUNTER ? family + "_total" : family;
  }

  /** Every series name a scrape of {@code /metrics} shows for this metric. */
  public List<String> seriesNames() {
    String family = prometheusName();
    return switch (type) {
      case TIMER, SUMMARY -> List.of(family + "_count", family + "_sum", family + "_max");
      case HISTOGRAM ->
          List.of(family + "_bucket", family + "_count", family + "_sum", family + "_max");
      case COUNTER, GAUGE -> List.of(family);
    };
  }
}
