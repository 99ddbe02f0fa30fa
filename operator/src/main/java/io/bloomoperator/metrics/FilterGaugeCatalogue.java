package io.bloomoperator.metrics;

import static io.bloomoperator.metrics.MetricCatalogue.TAG_FILTER;
import static io.bloomoperator.metrics.MetricCatalogue.TAG_NAMESPACE;

import io.bloomoperator.metrics.MetricCatalogue.Metric;
import io.bloomoperator.metrics.MetricCatalogue.Type;
import java.util.List;

/**
 * The per-filter gauges of the catalogue ({@link MetricCatalogue#all} lists them too): one series
 * per BloomFilter, dropped when the filter is deleted.
 */
public final class FilterGaugeCatalogue {

  private FilterGaugeCatalogue() {}

  public static final Metric FILTER_READY =
      new Metric(
          "bloom.filter.ready",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "1 while the filter's Ready condition is True, 0 while it is False");

  public static final Metric FILTER_SNAPSHOT_VERSION =
      new Metric(
          "bloom.filter.snapshot.version",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "the published version");

  public static final Metric FILTER_BASE_VERSION =
      new Metric(
          "bloom.filter.base.version",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "the version whose whole snapshot the published delta chain starts from (= the"
              + " published version when it is whole)");

  public static final Metric FILTER_DELTAS =
      new Metric(
          "bloom.filter.deltas",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "deltas after the base in the published chain (0: a whole snapshot)");

  public static final Metric FILTER_LAST_PUBLISH =
      new Metric(
          "bloom.filter.last.publish",
          Type.GAUGE,
          "bytes",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "bytes the published version's own chunks hold: its delta, or its whole payload");

  public static final Metric FILTER_SNAPSHOT_TIMESTAMP =
      new Metric(
          "bloom.filter.snapshot.timestamp",
          Type.GAUGE,
          "seconds",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "when the published version was written (Unix time)");

  public static final Metric FILTER_VERIFIED_TIMESTAMP =
      new Metric(
          "bloom.filter.verified.timestamp",
          Type.GAUGE,
          "seconds",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "when the operator last found the published version current (built it, or saw the"
              + " source unchanged; Unix time): what the staleness alert compares");

  public static final Metric FILTER_REFRESH_INTERVAL =
      new Metric(
          "bloom.filter.refresh.interval",
          Type.GAUGE,
          "seconds",
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "how often the source is checked (absent for inline keys, which have no interval)");

  public static final Metric FILTER_READERS =
      new Metric(
          "bloom.filter.readers",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers that report, from live pods (status.readers.total)");

  public static final Metric FILTER_READERS_CURRENT =
      new Metric(
          "bloom.filter.readers.current",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers serving the published version; the rest are on other versions or stale");

  public static final Metric FILTER_READERS_STALE =
      new Metric(
          "bloom.filter.readers.stale",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers without a heartbeat within the bound they declared");

  public static final Metric FILTER_READERS_FAILING =
      new Metric(
          "bloom.filter.readers.failing",
          Type.GAUGE,
          null,
          List.of(TAG_NAMESPACE, TAG_FILTER),
          "readers failing to load a newer version than the one they serve");
}
