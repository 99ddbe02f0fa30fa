package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
    assertThat(registry.get("bloom.filter.snapshot.version").gauge().value()).isEqualTo(3.0);
    assertThat(registry.get("bloom.filter.base.version").gauge().value()).isEqualTo(1.0);
    assertThat(registry.get("bloom.filter.deltas").gauge().value()).isEqualTo(2.0);
    assertThat(registry.get("bloom.filter.last.publish").gauge().value()).isEqualTo(16.0);
    assertThat(registry.get("bloom.filter.refresh.interval").gauge().value()).isEqualTo(300.0);
    assertThat(registry.get("bloom.filter.verified.timestamp").gauge().value()).isEqualTo(2000.0);

    metrics.forget("shop", "ids", "uid-1");
    metrics.ready(filter, false, Instant.ofEpochSecond(3_000)); // a reconcile still running
    assertThat(filterMeters()).isEmpty();

    // The same name created again is a new object: its series come back.
    metrics.ready(filter("ids", "uid-2"), true, Instant.ofEpochSecond(4_000));
    assertThat(filterMeters()).hasSize(2);
  }

  @Test
  void aRefreshIntervalRemovedFromTheSpecRemovesItsSeries() {
    BloomFilter filter = filter("ids", "uid-1");
    metrics.refreshInterval(filter, Duration.ofMinutes(5));
    metrics.refreshInterval(filter, null);
    assertThat(registry.find("bloom.filter.refresh.interval").meters()).isEmpty();
  }

  private List<String> reasons(MetricCatalogue.Metric metric) {
    return registry.find(metric.name()).counters().stream()
        .map(c -> c.getId().getTag(MetricCatalogue.TAG_REASON))
        .toList();
  }

  private List<Meter> filterMeters() {
    return registry.getMeters().stream()
        .filter(m -> m.getId().getName().startsWith("bloom.filter."))
        .toList();
  }

  private static BloomFilter filter(String name, String uid) {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(
        new ObjectMetaBuilder().withNamespace("shop").withName(name).withUid(uid).build());
    return filter;
  }
}
