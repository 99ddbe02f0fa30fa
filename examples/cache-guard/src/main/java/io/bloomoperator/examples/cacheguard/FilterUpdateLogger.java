package io.bloomoperator.examples.cacheguard;

import io.bloomoperator.watch.BloomFilterListener;
import io.bloomoperator.watch.LiveBloomFilter;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs each product-filter swap and failed load in the service's own log, so a refresh rolling out
 * (new products becoming visible without a restart) can be followed there.
 */
final class FilterUpdateLogger implements BloomFilterListener {

  private static final Logger LOG = LoggerFactory.getLogger(FilterUpdateLogger.class);

  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    if (oldVersion == LiveBloomFilter.NO_VERSION) {
      LOG.info(
          "product filter loaded: version {} ({} ms); ready", newVersion, loadDuration.toMillis());
    } else {
      LOG.info(
          "product filter refreshed: version {} -> {} ({} ms), no restart needed",
          oldVersion,
          newVersion,
          loadDuration.toMillis());
    }
  }

  @Override
  public void onFailure(long version, Exception exception) {
    // The previous version keeps serving; sidecar-lib retries with backoff.
    LOG.warn(
        "product filter version {} could not be loaded (still serving the previous one): {}",
        version,
        exception.toString());
  }
}
