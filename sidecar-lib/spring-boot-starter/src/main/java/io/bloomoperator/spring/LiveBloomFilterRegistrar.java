package io.bloomoperator.spring;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.ObjectStore;
import java.util.Map;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
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
 * the context is being configured: a bad entry stops the application before anything starts. A bean
 * the application already defines under an entry's name is left alone (the by-name form of
 * {@code @ConditionalOnMissingBean}: filters of one key type share a type, so only the name tells
 * them apart).
 */
class LiveBloomFilterRegistrar
    implements ImportBeanDefinitionRegistrar, EnvironmentAware, BeanFactoryAware {

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
          if (registry.containsBeanDefinition(bean)) {
            return; // the application defines this bean itself (a test double, say): it wins
          }
          RootBeanDefinition definition = new RootBeanDefinition(LiveBloomFilter.class);
          definition.setTargetType(
              ResolvableType.forClassWithGenerics(
                  LiveBloomFilter.class,
                  properties.getKeyType() == KeyType.LONG ? Long.class : String.class));
          definition.setInstanceSupplier(() -> create(bean, properties));
          definition.setDestroyMethodName("close");
          registry.registerBeanDefinition(bean, definition);
        });
  }

  private LiveBloomFilter<?> create(String bean, BloomFilterProperties properties) {
    ListableBeanFactory beans = (ListableBeanFactory) beanFactory;
    for (String factory : beans.getBeanNamesForType(LiveBloomFilterFactory.class)) {
      // Closed before the factory, which may own the Kubernetes client the filter watches with.
      ((ConfigurableBeanFactory) beanFactory).registerDependentBean(factory, bean);
    }
    for (String store : beans.getBeanNamesForType(ObjectStore.class)) {
      // Likewise: an object store bean (closed with the context) outlives the filters reading it.
      ((ConfigurableBeanFactory) beanFactory).registerDependentBean(store, bean);
    }
    return beans.getBean(LiveBloomFilterFactory.class).create(bean, properties);
  }
}
