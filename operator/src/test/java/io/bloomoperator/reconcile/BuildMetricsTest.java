package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
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
  void aDeletedFilterLeavesNoSeriesEvenWhenAReconcileEndsLater() {
    BloomFilter filter = filter("ids", "uid-1");
    metrics.refreshInterval(filter, Duration.ofMinutes(5));
    metrics.snapshot(filter, 3, Instant.ofEpochSecond(1_000));
    metrics.ready(filter, true, Instant.ofEpochSecond(2_000));
    assertThat(filterMeters()).hasSize(5);
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
