package io.bloomoperator.watch.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The binder without any framework: every catalogued meter, its value and its Prometheus name. */
@RealKubernetes
class LiveBloomFilterMetricsTest {

  private static final Duration READY = Duration.ofSeconds(10);

  @Test
  void registersTheCatalogueAndReadsTheFiltersCounters(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "ids");
    Manifest v1 = publisher.publish(filter("a", "b"), 2, 1).manifest();
    MeterRegistry registry = new SimpleMeterRegistry();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .localAdds(1, Duration.ofMinutes(10))
            .start()) {
      new LiveBloomFilterMetrics(live).bindTo(registry);
      Tags tags = Tags.of("namespace", ns.name(), "filter", "ids");
      assertThat(live.awaitReady(READY)).isTrue();

      live.mightContain("a");
      live.mightContain("b");
      live.mightContain("zzz-surely-absent");
      live.recordOutcome("a", true);
      live.recordOutcome("b", false); // the store lost it

      Set<String> names =
          registry.getMeters().stream().map(m -> m.getId().getName()).collect(Collectors.toSet());
      assertThat(names)
          .containsExactlyInAnyOrderElementsOf(ReaderMetricNames.PROMETHEUS_NAMES.keySet());
      assertThat(registry.getMeters())
          .allSatisfy(meter -> assertThat(meter.getId().getTags()).containsAll(tags));

      assertThat(gauge(registry, ReaderMetricNames.SNAPSHOT_VERSION)).isEqualTo(1);
      assertThat(gauge(registry, ReaderMetricNames.SNAPSHOT_AGE)).isBetween(0.0, 60.0);
      assertThat(registry.get(ReaderMetricNames.SNAPSHOT_AGE).gauge().getId().getBaseUnit())
          .isEqualTo("seconds");
      assertThat(gauge(registry, ReaderMetricNames.FPP_EXPECTED)).isEqualTo(v1.expectedFpp());
      assertThat(counter(registry, ReaderMetricNames.SWAPS)).isEqualTo(1);
      assertThat(counter(registry, ReaderMetricNames.LOOKUPS)).isEqualTo(3);
      assertThat(counter(registry, ReaderMetricNames.MAYBE_PRESENT))
          .isEqualTo(live.maybePresent())
          .isGreaterThanOrEqualTo(2);
      assertThat(
              registry
                  .get(ReaderMetricNames.OUTCOMES)
                  .tag("result", "true_positive")
                  .functionCounter()
                  .count())
          .isEqualTo(1);
      assertThat(
              registry
                  .get(ReaderMetricNames.OUTCOMES)
                  .tag("result", "false_positive")
                  .functionCounter()
                  .count())
          .isEqualTo(1);
      assertThat(gauge(registry, ReaderMetricNames.FPP_OBSERVED))
          .isEqualTo(live.observedFalsePositives().rate())
          .isGreaterThan(0);
      assertThat(registry.get(ReaderMetricNames.LOAD_FAILURES).functionCounters())
          .extracting(c -> c.getId().getTag("reason"))
          .containsExactlyInAnyOrderElementsOf(
              Arrays.stream(LoadFailureReason.values()).map(LoadFailureReason::tagValue).toList());

      // A manifest of another filter is refused: counted under its reason, v1 still served.
      publisher.writeManifestJson(v1.toJson().replace("\"ids\"", "\"other\""));
      await()
          .atMost(READY)
          .until(
              () ->
                  registry
                          .get(ReaderMetricNames.LOAD_FAILURES)
                          .tag("reason", "wrong_filter")
                          .functionCounter()
                          .count()
                      == 1);
      assertThat(gauge(registry, ReaderMetricNames.SNAPSHOT_VERSION)).isEqualTo(1);
      assertThat(live.lastFailure())
          .hasValueSatisfying(
              f -> assertThat(f.reason()).isEqualTo(LoadFailureReason.WRONG_FILTER));

      // Local adds: held until a version shows them; the bound (1 here) refuses the second.
      assertThat(live.addLocal("c")).isTrue();
      assertThat(live.addLocal("d")).isFalse();
      assertThat(gauge(registry, ReaderMetricNames.LOCAL_ADDS)).isEqualTo(1);
      assertThat(counter(registry, ReaderMetricNames.LOCAL_ADDS_REFUSED)).isEqualTo(1);
      assertThat(counter(registry, ReaderMetricNames.LOCAL_ADDS_ARRIVED)).isZero();
      assertThat(counter(registry, ReaderMetricNames.LOCAL_ADDS_EXPIRED)).isZero();

      // A new version: swapped, counted, and the observed rate starts again (no data: NaN); the
      // key added locally is in it, so the watcher drops it from the overlay after the swap.
      publisher.publish(filter("a", "b", "c"), 3, 2);
      await().atMost(READY).until(() -> gauge(registry, ReaderMetricNames.SNAPSHOT_VERSION) == 2);
      await().atMost(READY).until(() -> live.observedFalsePositives().version() == 2);
      assertThat(counter(registry, ReaderMetricNames.SWAPS)).isEqualTo(2);
      assertThat(gauge(registry, ReaderMetricNames.FPP_OBSERVED)).isNaN();
      assertThat(counter(registry, ReaderMetricNames.LOOKUPS)).isEqualTo(3); // totals keep counting
      await().atMost(READY).until(() -> live.localAdds() == 0);
      assertThat(gauge(registry, ReaderMetricNames.LOCAL_ADDS)).isZero();
      assertThat(counter(registry, ReaderMetricNames.LOCAL_ADDS_ARRIVED)).isEqualTo(1);
      assertThat(counter(registry, ReaderMetricNames.LOCAL_ADDS_EXPIRED)).isZero();
    }
  }

  @Test
  void prometheusExposesTheCataloguedNames(KubernetesClient client, TestNamespace ns) {
    new SnapshotPublisher(client, ns.name(), "ids").publish(filter("a"), 1, 1);
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.watch(client, ns.name(), "ids", LiveKeyType.STRING)) {
      new LiveBloomFilterMetrics(live).bindTo(registry);
      assertThat(live.awaitReady(READY)).isTrue();
      String scrape = registry.scrape();
      List<String> sampleNames =
          scrape
              .lines()
              .filter(line -> !line.startsWith("#") && !line.isBlank())
              .map(line -> line.substring(0, line.indexOf('{')))
              .distinct()
              .toList();
      assertThat(sampleNames)
          .containsExactlyInAnyOrderElementsOf(ReaderMetricNames.PROMETHEUS_NAMES.values());
      assertThat(scrape)
          .contains(
              "bloomreader_snapshot_version{filter=\"ids\",namespace=\"" + ns.name() + "\"} 1.0");
    }
  }

  private static double gauge(MeterRegistry registry, String name) {
    return registry.get(name).gauge().value();
  }

  private static double counter(MeterRegistry registry, String name) {
    return registry.get(name).functionCounter().count();
  }

  private static BloomFilterBits filter(String... keys) {
    return TestKeys.stringFilter(100, List.of(keys));
  }
}
