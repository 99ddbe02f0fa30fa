package io.bloomoperator.spring;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code bloom.*}: the switch, and one {@code LiveBloomFilter} bean per {@code
 * bloom.filters.<bean>} entry, named by its key. The configuration processor turns these fields'
 * comments into the descriptions IDEs and {@code /actuator/configprops} show.
 *
 * <pre>
 * bloom.filters.productIds.name=product-ids
 * bloom.filters.productIds.key-type=Long
 * bloom.filters.productIds.fail-mode=fail-closed
 * </pre>
 */
@ConfigurationProperties(BloomFiltersProperties.PREFIX)
public class BloomFiltersProperties {

  /** The property prefix. */
  public static final String PREFIX = "bloom";

  /**
   * Whether the starter is on: false defines no bean (no filter, health contributor or metrics) and
   * starts no watch.
   */
  private boolean enabled = true;

  /** The filters, by bean name: each a LiveBloomFilter bean following one BloomFilter resource. */
  private Map<String, BloomFilterProperties> filters = new LinkedHashMap<>();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public Map<String, BloomFilterProperties> getFilters() {
    return filters;
  }

  public void setFilters(Map<String, BloomFilterProperties> filters) {
    this.filters = filters;
  }
}
