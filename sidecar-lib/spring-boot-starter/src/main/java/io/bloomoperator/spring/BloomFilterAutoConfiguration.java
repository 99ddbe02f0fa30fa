package io.bloomoperator.spring;

import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.metrics.LiveBloomFilterMetrics;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.health.CompositeHealthContributor;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * sidecar-lib for Spring Boot 3.5: a {@link LiveBloomFilter} bean per {@code bloom.filters.<bean>}
 * entry ({@link LiveBloomFilterRegistrar}); with Actuator, the health contributor {@value
 * #HEALTH_CONTRIBUTOR} with one indicator per filter bean (for the readiness group); with
 * Micrometer, the reader metrics of every filter bean, bound by Boot to each registry.
 */
@AutoConfiguration
@Import(LiveBloomFilterRegistrar.class)
public class BloomFilterAutoConfiguration {

  /** The health contributor's name: {@code /actuator/health/bloomFilters/<bean>}. */
  public static final String HEALTH_CONTRIBUTOR = "bloomFilters";

  @Bean(LiveBloomFilterRegistrar.FACTORY_BEAN)
  LiveBloomFilterFactory bloomLiveBloomFilterFactory(ObjectProvider<KubernetesClient> client) {
    return new LiveBloomFilterFactory(client);
  }

  /** Health, only with Actuator on the class path. */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(HealthIndicator.class)
  static class Health {

    /** Every LiveBloomFilter bean, the application's own included, by bean name. */
    @Bean(HEALTH_CONTRIBUTOR + "HealthContributor")
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
    MeterBinder bloomFilterMetrics(ObjectProvider<LiveBloomFilter<?>> filters) {
      return registry ->
          filters
              .orderedStream()
              .forEach(filter -> new LiveBloomFilterMetrics(filter).bindTo(registry));
    }
  }
}
