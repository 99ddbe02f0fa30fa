package io.bloomoperator.watch;

import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several listeners told in order as one: a listener that throws is logged and does not keep the
 * others (or the watcher) from going on.
 */
final class Listeners implements BloomFilterListener {

  private static final Logger LOG = LoggerFactory.getLogger(Listeners.class);

  private final List<BloomFilterListener> listeners;

  Listeners(List<BloomFilterListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
    for (BloomFilterListener listener : listeners) {
      try {
        listener.onUpdate(oldVersion, newVersion, loadDuration);
      } catch (RuntimeException e) {
        LOG.warn("listener {} failed in onUpdate", listener, e);
      }
    }
  }

  @Override
  public void onFailure(long version, Exception exception) {
    for (BloomFilterListener listener : listeners) {
      try {
        listener.onFailure(version, exception);
      } catch (RuntimeException e) {
        LOG.warn("listener {} failed in onFailure", listener, e);
      }
    }
  }
}
