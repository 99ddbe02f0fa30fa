package io.bloomoperator.spring;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.LiveBloomFilter;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link LiveBloomFilter} bean per {@code bloom.filters.<bean>} entry, named {@code
 * <bean>} and typed {@code LiveBloomFilter<String>} or {@code LiveBloomFilter<Long>} by its key
 * type, so applications inject it by name or by type. Properties are bound and checked here, while
 * the context is being configured: a bad entry stops the application before anything starts.
 */
class LiveBloomFilterRegistrar
    implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

  /** Name of the {@link LiveBloomFilterFactory} bean the filter beans are created by. */
  static final String FACTORY_BEAN = "bloomLiveBloomFilterFactory";

  private Environment environment;
  private BeanFactory beanFactory;

  @Override
  public void setEnvironment(Environment environment) {
    this.environment = environment;
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    this.beanFactory = beanFactory;
  }

  @Override
  public void registerBeanDefinitions(
      AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
    Map<String, BloomFilterProperties> filters =
        Binder.get(environment)
            .bind(BloomFiltersProperties.PREFIX, Bindable.of(BloomFiltersProperties.class))
            .map(BloomFiltersProperties::getFilters)
            .orElse(Map.of());
    filters.forEach(BloomFilterPropertiesValidator::validate);
    filters.forEach(
        (bean, properties) -> {
          RootBeanDefinition definition = new RootBeanDefinition(LiveBloomFilter.class);
          definition.setTargetType(
              ResolvableType.forClassWithGenerics(
                  LiveBloomFilter.class,
                  properties.getKeyType() == KeyType.LONG ? Long.class : String.class));
          definition.setInstanceSupplier(
              () ->
                  beanFactory
                      .getBean(FACTORY_BEAN, LiveBloomFilterFactory.class)
                      .create(bean, properties));
          // Closed before the factory, which may own the Kubernetes client the filter watches with.
          definition.setDependsOn(FACTORY_BEAN);
          definition.setDestroyMethodName("close");
          registry.registerBeanDefinition(bean, definition);
        });
  }
}
