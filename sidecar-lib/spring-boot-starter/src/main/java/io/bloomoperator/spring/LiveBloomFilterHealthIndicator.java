package io.bloomoperator.spring;

import io.bloomoperator.watch.BeforeFirstSnapshot;
import io.bloomoperator.watch.LiveBloomFilter;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of one {@link LiveBloomFilter}: UP while a verified snapshot is served. Before the first,
 * DOWN if the filter fails closed (it would answer "definitely absent" to every key, so the pod
 * must not get traffic) and UNKNOWN if it fails open (answers are right, only unguarded). Details:
 * served version, snapshot age, key count, loads, failures and the last failure's reason, version
 * and time. Never a message: failure messages may quote manifest content.
 */
public final class LiveBloomFilterHealthIndicator implements HealthIndicator {

  private final LiveBloomFilter<?> filter;

  /** The indicator of {@code filter}. */
  public LiveBloomFilterHealthIndicator(LiveBloomFilter<?> filter) {
    this.filter = filter;
  }

  @Override
  public Health health() {
    Health.Builder health;
    if (filter.isReady()) {
      health = Health.up();
    } else if (filter.beforeFirstSnapshot() == BeforeFirstSnapshot.FAIL_CLOSED) {
      health = Health.down();
    } else {
      health = Health.unknown();
    }
    health
        .withDetail("namespace", filter.namespace())
        .withDetail("filter", filter.filterName())
        .withDetail("version", filter.currentVersion())
        .withDetail("failMode", filter.beforeFirstSnapshot().name());
    filter.snapshotAge().ifPresent(age -> health.withDetail("snapshotAgeSeconds", age.toSeconds()));
    filter.currentManifest().ifPresent(m -> health.withDetail("keyCount", m.keyCount()));
    health.withDetail("loads", filter.loads()).withDetail("failures", filter.failures());
    filter
        .lastFailure()
        .ifPresent(
            failure -> {
              Map<String, Object> last = new LinkedHashMap<>();
              last.put("reason", failure.reason().tagValue());
              last.put("version", failure.version());
              last.put("at", failure.at().toString());
              health.withDetail("lastFailure", last);
            });
    return health.build();
  }
}
