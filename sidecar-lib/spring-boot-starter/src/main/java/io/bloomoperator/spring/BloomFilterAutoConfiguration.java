package io.bloomoperator.spring;

import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.ObjectStore;
import io.bloomoperator.watch.metrics.LiveBloomFilterMetrics;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.CompositeHealthContributor;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * sidecar-lib for Spring Boot 4: a {@link LiveBloomFilter} bean per {@code bloom.filters.<bean>}
 * entry ({@link LiveBloomFilterRegistrar}); with Boot's health module (Actuator), the health
 * contributor {@value #HEALTH_CONTRIBUTOR} with one indicator per filter bean (for the readiness
 * group); with Micrometer, the reader metrics of every filter bean, bound by Boot to each registry.
 *
 * <p>{@code bloom.enabled=false} turns all of it off. Every bean backs off when the application
 * defines its own: a filter bean by its name, the factory by type, the health contributor and the
 * metrics binder by name. {@code management.health.bloomfilters.enabled=false} turns the health
 * contributor off alone.
 */
@AutoConfiguration
@ConditionalOnProperty(
    prefix = BloomFiltersProperties.PREFIX,
    name = "enabled",
    havingValue = "true",
    matchIfMissing = true)
@EnableConfigurationProperties(BloomFiltersProperties.class)
@Import(LiveBloomFilterRegistrar.class)
public class BloomFilterAutoConfiguration {

  /** The health contributor's name: {@code /actuator/health/bloomFilters/<bean>}. */
  public static final String HEALTH_CONTRIBUTOR = "bloomFilters";

  /**
   * The health indicator's name in {@code management.health.<name>.enabled} (Boot's form: lower
   * case).
   */
  public static final String HEALTH_INDICATOR_PROPERTY_NAME = "bloomfilters";

  /**
   * Creates the filter beans, each reading from the application's {@link ObjectStore} beans (by
   * bean name) when a manifest names one; the application's own {@link LiveBloomFilterFactory}
   * wins.
   */
  @Bean
  @ConditionalOnMissingBean
  LiveBloomFilterFactory bloomLiveBloomFilterFactory(
      ObjectProvider<KubernetesClient> client, ListableBeanFactory beans) {
    return new LiveBloomFilterFactory(client, () -> beans.getBeansOfType(ObjectStore.class));
  }

  /** Health, only with Boot's health module on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class Health {

    /**
     * Every LiveBloomFilter bean, the application's own included, by bean name. The enabled-check
     * sits here, not on the class: its condition class is only loadable once the health module is
     * known to be there.
     */
    @Bean(HEALTH_CONTRIBUTOR + "HealthContributor")
    @ConditionalOnEnabledHealthIndicator(HEALTH_INDICATOR_PROPERTY_NAME)
    @ConditionalOnMissingBean(name = HEALTH_CONTRIBUTOR + "HealthContributor")
    CompositeHealthContributor bloomFiltersHealthContributor(ListableBeanFactory beans) {
      Map<String, HealthIndicator> indicators = new LinkedHashMap<>();
      beans
          .getBeansOfType(LiveBloomFilter.class)
          .forEach(
              (bean, filter) -> indicators.put(bean, new LiveBloomFilterHealthIndicator(filter)));
      return CompositeHealthContributor.fromMap(indicators);
    }
  }

  /** Metrics, only with Micrometer on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterBinder.class)
  static class Metrics {

    /** Binds {@link LiveBloomFilterMetrics} of every LiveBloomFilter bean. */
    @Bean
    @ConditionalOnMissingBean(name = "bloomFilterMetrics")
    MeterBinder bloomFilterMetrics(ObjectProvider<LiveBloomFilter<?>> filters) {
      return registry ->
          filters
              .orderedStream()
              .forEach(filter -> new LiveBloomFilterMetrics(filter).bindTo(registry));
    }
  }
}
