package io.bloomoperator.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.BeforeFirstSnapshot;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.bloomoperator.watch.metrics.ReaderMetricNames;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.ResolvableType;

/**
 * The starter in a real Spring application context against the real API server: filter beans from
 * properties, loading and swapping, health, metrics, and the Kubernetes client reused or created.
 */
@RealKubernetes
class BloomFilterAutoConfigurationTest {

  private static final Duration READY = Duration.ofSeconds(15);

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  BloomFilterAutoConfiguration.class,
                  MetricsAutoConfiguration.class,
                  SimpleMetricsExportAutoConfiguration.class,
                  CompositeMeterRegistryAutoConfiguration.class));

  @Test
  void filterBeanFromPropertiesLoadsSwapsAndReportsHealthAndMetrics(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "product-ids");
    // The application's own client bean (Spring closes it with the context).
    KubernetesClient applicationClient = cluster.newClient();
    runner
        .withBean(KubernetesClient.class, () -> applicationClient)
        .withPropertyValues(
            "bloom.filters.productIds.name=product-ids",
            "bloom.filters.productIds.namespace=" + ns.name(),
            "bloom.filters.productIds.key-type=Long",
            "bloom.filters.productIds.fail-mode=fail-closed",
            "bloom.filters.productIds.max-snapshot-bytes=1MB",
            "bloom.filters.productIds.resync=30s",
            "bloom.filters.productIds.local-adds-max-entries=1",
            "bloom.filters.productIds.local-adds-ttl=1h")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasBean("productIds");
              // Typed by its key type: injectable as LiveBloomFilter<Long>.
              LiveBloomFilter<Long> filter =
                  context
                      .<LiveBloomFilter<Long>>getBeanProvider(
                          ResolvableType.forClassWithGenerics(LiveBloomFilter.class, Long.class))
                      .getObject();
              assertThat(context.getBean("productIds")).isSameAs(filter);
              assertThat(filter.namespace()).isEqualTo(ns.name());
              assertThat(filter.filterName()).isEqualTo("product-ids");
              assertThat(filter.beforeFirstSnapshot()).isEqualTo(BeforeFirstSnapshot.FAIL_CLOSED);
              assertThat(
                      context
                          .getBeanProvider(
                              ResolvableType.forClassWithGenerics(
                                  LiveBloomFilter.class, String.class))
                          .getIfAvailable())
                  .isNull();

              HealthIndicator health = indicator(context.getBean(CompositeHealthContributor.class));
              Health before = health.health();
              assertThat(before.getStatus()).isEqualTo(Status.DOWN); // fail-closed, nothing loaded
              assertThat(before.getDetails()).containsEntry("version", -1L);
              assertThat(filter.mightContain(7L)).isFalse();

              publisher.publish(longs(7, 8, 9), 3, 1);
              assertThat(filter.awaitReady(READY)).isTrue();
              assertThat(filter.mightContain(7L)).isTrue();
              Health up = health.health();
              assertThat(up.getStatus()).isEqualTo(Status.UP);
              assertThat(up.getDetails())
                  .containsEntry("version", 1L)
                  .containsEntry("keyCount", 3L)
                  .containsKey("snapshotAgeSeconds");

              // The pod that creates ID 10 sees it at once; the bound of 1 refuses a second.
              assertThat(filter.mightContain(10L)).isFalse();
              assertThat(filter.addLocal(10L)).isTrue();
              assertThat(filter.addLocal(11L)).isFalse();
              assertThat(filter.mightContain(10L)).isTrue();
              assertThat(filter.localAddsRefused()).isEqualTo(1);

              publisher.publish(longs(7, 8, 9, 10), 4, 2);
              await().atMost(READY).until(() -> filter.currentVersion() == 2);
              assertThat(filter.mightContain(10L)).isTrue();
              await().atMost(READY).until(() -> filter.localAdds() == 0); // arrived: dropped
              assertThat(filter.localAddsArrived()).isEqualTo(1);
              assertThat(health.health().getDetails()).containsEntry("version", 2L);

              MeterRegistry registry = context.getBean(MeterRegistry.class);
              assertThat(
                      registry
                          .get(ReaderMetricNames.SNAPSHOT_VERSION)
                          .tag("namespace", ns.name())
                          .tag("filter", "product-ids")
                          .gauge()
                          .value())
                  .isEqualTo(2);
              assertThat(registry.get(ReaderMetricNames.SWAPS).functionCounter().count())
                  .isEqualTo(2);
              assertThat(registry.get(ReaderMetricNames.LOOKUPS).functionCounter().count())
                  .isEqualTo(filter.lookups());

              // The application's client was used: the starter built none of its own.
              assertThat(context.getBean(LiveBloomFilterFactory.class).ownsClient()).isFalse();
            });
  }

  @Test
  void streamDeltasAreSetInPlaceUnlessTheCheckIntervalTurnsThemOff(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) {
    List<String> base = List.of("a", "b", "c");
    List<String> added = List.of("d", "e");
    BloomFilterBits v1 = TestKeys.stringFilter(1_000, base);
    BloomFilterBits v2 = TestKeys.stringFilter(1_000, base, added);
    Map<String, Manifest> firsts = new java.util.HashMap<>();
    for (String name : List.of("in-place", "swapped")) {
      SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), name);
      firsts.put(name, publisher.publish(v1, base.size(), 1).manifest());
    }
    KubernetesClient applicationClient = cluster.newClient(); // Spring closes it with the context
    runner
        .withBean(KubernetesClient.class, () -> applicationClient)
        .withPropertyValues(
            "bloom.filters.inPlace.name=in-place",
            "bloom.filters.inPlace.namespace=" + ns.name(),
            "bloom.filters.swapped.name=swapped",
            "bloom.filters.swapped.namespace=" + ns.name(),
            "bloom.filters.swapped.in-place-check-interval=0s")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              LiveBloomFilter<?> inPlace = context.getBean("inPlace", LiveBloomFilter.class);
              LiveBloomFilter<?> swapped = context.getBean("swapped", LiveBloomFilter.class);
              for (LiveBloomFilter<?> filter : List.of(inPlace, swapped)) {
                assertThat(filter.awaitReady(READY)).isTrue();
                new SnapshotPublisher(client, ns.name(), filter.filterName())
                    .publishDelta(firsts.get(filter.filterName()), v1, v2, 5, 2);
                await().atMost(READY).until(() -> filter.currentVersion() == 2);
              }
              // The default sets an add-only delta in the served bits; 0s swaps it in whole.
              assertThat(inPlace.deltasAppliedInPlace()).isEqualTo(1);
              assertThat(swapped.deltasAppliedInPlace()).isZero();
              @SuppressWarnings("unchecked")
              LiveBloomFilter<String> answers = (LiveBloomFilter<String>) swapped;
              assertThat(answers.mightContain("e")).isTrue();
            });
  }

  @Test
  void withoutAClientBeanTheStarterBuildsOneFromTheEnvironment(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) {
    new SnapshotPublisher(client, ns.name(), "ids")
        .publish(TestKeys.stringFilter(100, List.of("a", "b")), 2, 1);
    Map<String, String> properties =
        Map.of(
            "kubeconfig", cluster.kubeconfig().toString(), // fabric8's default configuration
            "kubernetes.namespace", ns.name()); // stands in for a pod's service-account namespace
    Map<String, String> saved = new java.util.HashMap<>();
    properties.forEach((key, value) -> saved.put(key, System.setProperty(key, value)));
    try {
      runner
          .withPropertyValues("bloom.filters.ids.name=ids") // no namespace: the client's
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                LiveBloomFilter<?> filter = context.getBean("ids", LiveBloomFilter.class);
                assertThat(filter.namespace()).isEqualTo(ns.name());
                assertThat(filter.awaitReady(READY)).isTrue();
                assertThat(filter.currentVersion()).isEqualTo(1);
                assertThat(context.getBean(LiveBloomFilterFactory.class).ownsClient()).isTrue();
              });
    } finally {
      saved.forEach(
          (key, value) -> {
            if (value == null) {
              System.clearProperty(key);
            } else {
              System.setProperty(key, value);
            }
          });
    }
  }

  @Test
  void withoutActuatorAndMicrometerOnlyTheFilterBeansAreCreated(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) {
    new SnapshotPublisher(client, ns.name(), "ids")
        .publish(TestKeys.stringFilter(100, List.of("a")), 1, 1);
    KubernetesClient applicationClient = cluster.newClient();
    new ApplicationContextRunner()
        .withClassLoader(
            new FilteredClassLoader("io.micrometer", "org.springframework.boot.health"))
        .withConfiguration(AutoConfigurations.of(BloomFilterAutoConfiguration.class))
        .withBean(KubernetesClient.class, () -> applicationClient)
        .withPropertyValues(
            "bloom.filters.ids.name=ids", "bloom.filters.ids.namespace=" + ns.name())
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean("ids", LiveBloomFilter.class).awaitReady(READY)).isTrue();
              assertThat(context)
                  .doesNotHaveBean("bloomFiltersHealthContributor")
                  .doesNotHaveBean("bloomFilterMetrics");
            });
  }

  private static HealthIndicator indicator(CompositeHealthContributor contributor) {
    return (HealthIndicator) contributor.getContributor("productIds");
  }

  private static BloomFilterBits longs(long... keys) {
    return TestKeys.longFilter(100, keys);
  }
}
