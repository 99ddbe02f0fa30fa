package io.bloomoperator.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.ResolvableType;

/**
 * The starter's switches and back-offs, and its test double, in a Spring context without any
 * cluster: nothing here may build a Kubernetes client or start a watch.
 */
class StarterConditionsTest {

  private static final String P = "bloom.filters.productIds.";

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(BloomFilterAutoConfiguration.class));

  @Test
  void bloomEnabledFalseDefinesNoBeanAndStartsNoWatch() {
    runner
        .withPropertyValues(
            "bloom.enabled=false", P + "name=product-ids", P + "namespace=switched-off")
        .run(
            context -> {
              assertThat(context)
                  .hasNotFailed()
                  .doesNotHaveBean("productIds")
                  .doesNotHaveBean(LiveBloomFilter.class)
                  .doesNotHaveBean(LiveBloomFilterFactory.class)
                  .doesNotHaveBean(BloomFiltersProperties.class)
                  .doesNotHaveBean("bloomFiltersHealthContributor")
                  .doesNotHaveBean("bloomFilterMetrics");
              assertThat(watcherThreads("switched-off")).isEmpty();
            });
  }

  @Test
  void fixedKeysServeATestDoubleWithoutACluster() {
    runner
        .withPropertyValues(P + "name=product-ids", P + "key-type=Long", P + "fixed-keys=7, 8,9")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              LiveBloomFilter<Long> filter =
                  context
                      .<LiveBloomFilter<Long>>getBeanProvider(
                          ResolvableType.forClassWithGenerics(LiveBloomFilter.class, Long.class))
                      .getObject();
              assertThat(filter.isReady()).isTrue();
              assertThat(filter.filterName()).isEqualTo("product-ids");
              assertThat(filter.mightContain(8L)).isTrue();
              assertThat(filter.mightContain(10L)).isFalse();
              assertThat(health(context.getBean(CompositeHealthContributor.class)).getStatus())
                  .isEqualTo(Status.UP);
              // No client was needed: none was built, none was asked for.
              assertThat(context.getBean(LiveBloomFilterFactory.class).ownsClient()).isFalse();
              assertThat(context).doesNotHaveBean(KubernetesClient.class);
            });
  }

  @Test
  void anApplicationsOwnFilterBeanOfTheSameNameWins() {
    LiveBloomFilter<Long> own = LiveBloomFilter.fixed("mine", LiveKeyType.LONG, List.of(1L));
    runner
        .withBean("productIds", LiveBloomFilter.class, () -> own)
        .withPropertyValues(P + "name=product-ids", P + "namespace=elsewhere")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LiveBloomFilter.class);
              assertThat(context.getBean("productIds")).isSameAs(own);
              assertThat(watcherThreads("elsewhere")).isEmpty();
              // The health contributor covers the application's filter as well.
              assertThat(health(context.getBean(CompositeHealthContributor.class)).getDetails())
                  .containsEntry("filter", "mine");
            });
  }

  @Test
  void anApplicationsOwnFactoryHealthContributorAndMetricsBinderWin() {
    LiveBloomFilterFactory factory =
        new LiveBloomFilterFactory(null) {
          @Override
          public LiveBloomFilter<?> create(String bean, BloomFilterProperties properties) {
            return LiveBloomFilter.fixed("from-own-factory", LiveKeyType.STRING, List.of());
          }
        };
    CompositeHealthContributor health = CompositeHealthContributor.fromMap(java.util.Map.of());
    MeterBinder metrics = registry -> {};
    runner
        .withBean("ownFactory", LiveBloomFilterFactory.class, () -> factory)
        .withBean("bloomFiltersHealthContributor", CompositeHealthContributor.class, () -> health)
        .withBean("bloomFilterMetrics", MeterBinder.class, () -> metrics)
        .withPropertyValues(P + "name=product-ids")
        .run(
            context -> {
              assertThat(context).hasNotFailed().hasSingleBean(LiveBloomFilterFactory.class);
              assertThat(context.getBean("productIds", LiveBloomFilter.class).filterName())
                  .isEqualTo("from-own-factory");
              assertThat(context.getBean(CompositeHealthContributor.class)).isSameAs(health);
              assertThat(context.getBean(MeterBinder.class)).isSameAs(metrics);
            });
  }

  @Test
  void theHealthIndicatorCanBeTurnedOffAlone() {
    runner
        .withPropertyValues(
            "management.health.bloomfilters.enabled=false",
            P + "name=product-ids",
            P + "fixed-keys=a")
        .run(
            context ->
                assertThat(context)
                    .hasNotFailed()
                    .hasBean("productIds")
                    .hasBean("bloomFilterMetrics")
                    .doesNotHaveBean("bloomFiltersHealthContributor"));
  }

  @Test
  void propertiesAreAConfigurationPropertiesBeanWithGeneratedMetadata() throws Exception {
    runner
        .withPropertyValues(P + "name=product-ids", P + "fixed-keys=a")
        .run(
            context ->
                assertThat(context.getBean(BloomFiltersProperties.class).getFilters())
                    .containsKey("productIds"));
    String metadata;
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated by spring-boot-configuration-processor").isNotNull();
      metadata = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(metadata)
        .contains("\"name\": \"bloom.enabled\"")
        .contains("\"name\": \"bloom.filters\"")
        .contains("io.bloomoperator.spring.BloomFilterProperties")
        .contains("Whether the starter is on");
  }

  private static Health health(CompositeHealthContributor contributor) {
    return ((HealthIndicator) contributor.getContributor("productIds")).health();
  }

  /** Threads of watchers on filters in {@code namespace} (named bloom-watch-namespace/filter). */
  private static List<Thread> watcherThreads(String namespace) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(thread -> thread.getName().startsWith("bloom-watch-" + namespace + "/"))
        .toList();
  }
}
