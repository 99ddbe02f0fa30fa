package io.bloomoperator.spring;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BloomFilterWatcher;
import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Checks a {@code bloom.filters.<bean>} entry when the context starts, so that a wrong setting
 * fails the application with the property's name rather than a watcher that never loads. Messages
 * state the rule, not the value: values may come from anywhere the environment does.
 */
final class BloomFilterPropertiesValidator {

  /** Bean names: also the health contributor's path segment and a metrics-free identifier. */
  private static final Pattern BEAN_NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");

  /** A BloomFilter name is a DNS-1123 subdomain (what Kubernetes allows for the resource). */
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /** A namespace is a DNS-1123 label. */
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

  private BloomFilterPropertiesValidator() {}

  static String prefix(String bean) {
    return BloomFiltersProperties.PREFIX + ".filters." + bean + ".";
  }

  static void validate(String bean, BloomFilterProperties properties) {
    if (!BEAN_NAME.matcher(bean).matches()) {
      throw new IllegalStateException(
          "bloom.filters.<bean>: a bean name must start with a letter and hold at most 63"
              + " letters, digits, '-' or '_'");
    }
    String name = properties.getName();
    if (name == null || name.isEmpty()) {
      throw new IllegalStateException(prefix(bean) + "name is required (the BloomFilter resource)");
    }
    if (name.length() > 253 || !DNS_SUBDOMAIN.matcher(name).matches()) {
      throw new IllegalStateException(
          prefix(bean)
              + "name must be a Kubernetes resource name (lower-case DNS-1123 subdomain, at most"
              + " 253 characters)");
    }
    if (properties.getNamespace() != null) {
      checkNamespace(bean, properties.getNamespace());
    }
    if (properties.getKeyType() == null) {
      throw new IllegalStateException(prefix(bean) + "key-type must be String or Long");
    }
    if (properties.getFailMode() == null) {
      throw new IllegalStateException(prefix(bean) + "fail-mode must be fail-open or fail-closed");
    }
    if (properties.getMaxSnapshotBytes() != null
        && properties.getMaxSnapshotBytes().toBytes() <= 0) {
      throw new IllegalStateException(prefix(bean) + "max-snapshot-bytes must be positive");
    }
    if (properties.isMemoryMapped() && properties.getLocalCacheDir() == null) {
      throw new IllegalStateException(
          prefix(bean) + "memory-mapped needs local-cache-dir: the mapped file is kept there");
    }
    if (properties.getMaxChunks() != null && properties.getMaxChunks() <= 0) {
      throw new IllegalStateException(prefix(bean) + "max-chunks must be positive");
    }
    if (properties.getResync() != null && properties.getResync().isNegative()) {
      throw new IllegalStateException(prefix(bean) + "resync must not be negative");
    }
    Duration inPlace = properties.getInPlaceCheckInterval();
    if (inPlace != null
        && (inPlace.isNegative()
            || inPlace.compareTo(BloomFilterWatcher.MAX_IN_PLACE_CHECK_INTERVAL) > 0)) {
      throw new IllegalStateException(
          prefix(bean)
              + "in-place-check-interval must be in 0s.."
              + BloomFilterWatcher.MAX_IN_PLACE_CHECK_INTERVAL.toMinutes()
              + "m (0s turns in-place deltas off)");
    }
    if (properties.getLocalAddsMaxEntries() != null && properties.getLocalAddsMaxEntries() < 0) {
      throw new IllegalStateException(prefix(bean) + "local-adds-max-entries must not be negative");
    }
    if (properties.getLocalAddsTtl() != null
        && (properties.getLocalAddsTtl().isNegative() || properties.getLocalAddsTtl().isZero())) {
      throw new IllegalStateException(prefix(bean) + "local-adds-ttl must be positive");
    }
    if (properties.getLocalAddsMaxKeyLength() != null
        && properties.getLocalAddsMaxKeyLength() < 1) {
      throw new IllegalStateException(prefix(bean) + "local-adds-max-key-length must be positive");
    }
    if (properties.getTrustedKeys() == null || properties.getTrustedKeys().contains(null)) {
      throw new IllegalStateException(prefix(bean) + "trusted-keys must list key resources");
    }
    if (properties.getFixedKeys() != null) {
      checkFixedKeys(bean, properties);
    }
  }

  private static void checkFixedKeys(String bean, BloomFilterProperties properties) {
    for (String key : properties.getFixedKeys()) {
      if (key == null) {
        throw new IllegalStateException(prefix(bean) + "fixed-keys must not hold empty entries");
      }
      if (properties.getKeyType() == KeyType.LONG && !isLong(key)) {
        throw new IllegalStateException(
            prefix(bean) + "fixed-keys must be 64-bit integers when key-type is Long");
      }
    }
  }

  private static boolean isLong(String key) {
    try {
      Long.parseLong(key.strip());
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  static void checkNamespace(String bean, String namespace) {
    if (namespace.length() > 63 || !DNS_LABEL.matcher(namespace).matches()) {
      throw new IllegalStateException(
          prefix(bean)
              + "namespace must be a Kubernetes namespace name (lower-case DNS-1123 label, at most"
              + " 63 characters)");
    }
  }
}
