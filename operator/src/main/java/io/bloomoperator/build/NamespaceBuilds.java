package io.bloomoperator.build;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Bounds the builds of one namespace in progress at once ({@link
 * io.bloomoperator.settings.BuildLimits#maxBuildsPerNamespace()}). A build occupies one of
 * java-operator-sdk's reconcile threads (a fixed pool, 50 by default in 5.x) from the moment its
 * source is opened, also while a query runs before its first row or a server has not answered yet,
 * when it holds no build slot. Without this bound one namespace with many such filters would occupy
 * every reconcile thread, and no other namespace's filter would even be looked at.
 *
 * <p>A reconcile over the bound does not wait on its thread: it is rescheduled after {@link
 * #retryDelay()} and the thread goes back to the pool.
 */
public final class NamespaceBuilds {

  /** Shortest wait before a deferred build is tried again; up to twice this, spread at random. */
  public static final Duration DEFER = Duration.ofSeconds(5);

  private final int max;
  private final Map<String, Integer> running = new HashMap<>();

  public NamespaceBuilds(int max) {
    this.max = max;
  }

  /** A place for one build of {@code namespace}, or empty when it has {@code max} under way. */
  public synchronized Optional<Entry> enter(String namespace) {
    int now = running.getOrDefault(namespace, 0);
    if (now >= max) {
      return Optional.empty();
    }
    running.put(namespace, now + 1);
    return Optional.of(new Entry(namespace));
  }

  private synchronized void leave(String namespace) {
    running.merge(namespace, -1, (a, b) -> a + b == 0 ? null : a + b);
  }

  /** When to try a deferred build again: spread, so deferred builds do not come back together. */
  public static Duration retryDelay() {
    return DEFER.plusMillis(ThreadLocalRandom.current().nextLong(DEFER.toMillis() + 1));
  }

  /** One build's place; closing it frees the place. */
  public final class Entry implements AutoCloseable {
    private final String namespace;
    private boolean open = true;

    private Entry(String namespace) {
      this.namespace = namespace;
    }

    @Override
    public void close() {
      if (open) {
        open = false;
        leave(namespace);
      }
    }
  }
}
