package io.bloomoperator.spring;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code bloom.filters.<bean>.*}: one {@code LiveBloomFilter} bean per entry, named by its key.
 *
 * <pre>
 * bloom.filters.productIds.name=product-ids
 * bloom.filters.productIds.key-type=Long
 * bloom.filters.productIds.fail-mode=fail-closed
 * </pre>
 */
public class BloomFiltersProperties {

  /** The property prefix. */
  public static final String PREFIX = "bloom";

  /** The filters, by bean name. */
  private Map<String, BloomFilterProperties> filters = new LinkedHashMap<>();

  public Map<String, BloomFilterProperties> getFilters() {
    return filters;
  }

  public void setFilters(Map<String, BloomFilterProperties> filters) {
    this.filters = filters;
  }
}
