package io.bloomoperator.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Tag values stay bounded: reasons from the catalogue only, per-filter series end with it. */
class BuildMetricsTest {

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final BuildMetrics metrics = new BuildMetrics(registry);

  @Test
  void aReasonOutsideTheCatalogueIsCountedAsReconcileError() {
    metrics.sourceFailed("ids.txt line 3: <script>secret</script>");
    metrics.publishFailed(Reasons.NAME_CONFLICT);
    metrics.failed("anything else");

    assertThat(reasons(MetricCatalogue.SOURCE_ERRORS)).containsExactly(Reasons.RECONCILE_ERROR);
    assertThat(reasons(MetricCatalogue.PUBLISH_FAILURES)).containsExactly(Reasons.NAME_CONFLICT);
    assertThat(reasons(MetricCatalogue.FAILURES)).containsExactly(Reasons.RECONCILE_ERROR);
  }

  @Test
  void aDeletedFilterLeavesNoSeriesEvenWhenAReconcileEndsLater() throws Exception {
    BloomFilter filter = filter("ids", "uid-1");
    metrics.refreshInterval(filter, Duration.ofMinutes(5));
    Manifest chained =
        Manifest.fromJson(
            """
            {"format":"guava-bloomfilter-chain-v1","version":3,"filterName":"ids","keyType":"String",
             "numBits":64,"numHashFunctions":1,"keyCount":1,"expectedFpp":0.1,"totalBytes":14,
             "sha256":"%2$s","createdAt":"2026-11-30T00:00:00Z",
             "chunks":[{"name":"ids-bloom-v1-0","bytes":14,"sha256":"%1$s"}],
             "chain":{"baseVersion":1,"baseSha256":"%1$s","deltas":[
               {"version":2,"bytes":15,"changedBits":1,"sha256":"%1$s",
                "chunks":[{"name":"ids-bloom-v2-0","bytes":15,"sha256":"%1$s"}]},
               {"version":3,"bytes":16,"changedBits":2,"sha256":"%2$s",
                "chunks":[{"name":"ids-bloom-v3-0","bytes":16,"sha256":"%1$s"}]}]}}
            """
                .formatted("a".repeat(64), "b".repeat(64)));
    metrics.snapshot(filter, chained, Instant.ofEpochSecond(1_000));
    metrics.ready(filter, true, Instant.ofEpochSecond(2_000));
    assertThat(filterMeters()).hasSize(8);
    assertThat(registry.get("bloomoperator.filter.snapshot.version").gauge().value())
        .isEqualTo(3.0);
    assertThat(registry.get("bloomoperator.filter.base.version").gauge().value()).isEqualTo(1.0);
    assertThat(registry.get("bloomoperator.filter.deltas").gauge().value()).isEqualTo(2.0);
    assertThat(registry.get("bloomoperator.filter.last.publish").gauge().value()).isEqualTo(16.0);
    assertThat(registry.get("bloomoperator.filter.refresh.interval").gauge().value())
        .isEqualTo(300.0);
    assertThat(registry.get("bloomoperator.filter.verified.timestamp").gauge().value())
        .isEqualTo(2000.0);

    metrics.forget("shop", "ids", "uid-1");
    metrics.ready(filter, false, Instant.ofEpochSecond(3_000)); // a reconcile still running
    assertThat(filterMeters()).isEmpty();

    // The same name created again is a new object: its series come back.
    metrics.ready(filter("ids", "uid-2"), true, Instant.ofEpochSecond(4_000));
    assertThat(filterMeters()).hasSize(2);
  }

  /**
   * Build and publish durations are histograms per filter with a fixed number of series each (the
   * number docs/configuration.md states), and a deleted filter's go with it, also when its build
   * ends after the deletion.
   */
  @Test
  void durationHistogramsArePerFilterWithAFixedNumberOfSeriesAndEndWithTheFilter() {
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    BuildMetrics metrics = new BuildMetrics(prometheus);
    BloomFilter ids = filter("ids", "uid-1");
    BloomFilter other = filter("other", "uid-2");
    metrics.built(ids, 10, Duration.ofMillis(300));
    metrics.built(ids, 10, Duration.ofSeconds(20));
    metrics.published(ids, 100, Duration.ofMillis(80));
    metrics.built(other, 5, Duration.ofMillis(50));

    String scrape = prometheus.scrape();
    String idsTags = "filter=\"ids\",namespace=\"shop\"";
    assertThat(scrape)
        .contains("bloomoperator_build_duration_seconds_bucket{" + idsTags + ",le=\"0.5\"} 1")
        .contains("bloomoperator_build_duration_seconds_bucket{" + idsTags + ",le=\"30.0\"} 2")
        .contains("bloomoperator_build_duration_seconds_bucket{" + idsTags + ",le=\"+Inf\"} 2")
        .contains("bloomoperator_build_duration_seconds_count{" + idsTags + "} 2")
        .contains("bloomoperator_publish_duration_seconds_bucket{" + idsTags + ",le=\"0.1\"} 1");
    int perHistogram = 10 + 4; // bounds, +Inf, _count, _sum, _max
    assertThat(MetricCatalogue.durationBuckets(MetricCatalogue.BUILD_DURATION)).hasSize(10);
    assertThat(MetricCatalogue.durationBuckets(MetricCatalogue.PUBLISH_DURATION)).hasSize(10);
    assertThat(durationSeries(scrape, "ids")).hasSize(2 * perHistogram);
    assertThat(durationSeries(scrape, "other")).hasSize(perHistogram);

    metrics.forget("shop", "ids", "uid-1");
    metrics.built(ids, 10, Duration.ofSeconds(1)); // a build that ends after the deletion
    metrics.published(ids, 100, Duration.ofSeconds(1));
    assertThat(durationSeries(prometheus.scrape(), "ids")).isEmpty();
    assertThat(durationSeries(prometheus.scrape(), "other")).hasSize(perHistogram);
  }

  @Test
  void aRefreshIntervalRemovedFromTheSpecRemovesItsSeries() {
    BloomFilter filter = filter("ids", "uid-1");
    metrics.refreshInterval(filter, Duration.ofMinutes(5));
    metrics.refreshInterval(filter, null);
    assertThat(registry.find("bloomoperator.filter.refresh.interval").meters()).isEmpty();
  }

  private List<String> reasons(Metric metric) {
    return registry.find(metric.name()).counters().stream()
        .map(c -> c.getId().getTag(MetricCatalogue.TAG_REASON))
        .toList();
  }

  private static List<String> durationSeries(String scrape, String filter) {
    return scrape
        .lines()
        .filter(
            l ->
                l.startsWith("bloomoperator_build_duration")
                    || l.startsWith("bloomoperator_publish_duration"))
        .filter(l -> l.contains("filter=\"" + filter + "\""))
        .toList();
  }

  private List<Meter> filterMeters() {
    return registry.getMeters().stream()
        .filter(m -> m.getId().getName().startsWith("bloomoperator.filter."))
        .toList();
  }

  private static BloomFilter filter(String name, String uid) {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(
        new ObjectMetaBuilder().withNamespace("shop").withName(name).withUid(uid).build());
    return filter;
  }
}
