package io.bloomoperator.changes;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Bounds the stream reads of one namespace under way at once ({@link
 * StreamLimits#readsPerNamespace()}). A read holds one of java-operator-sdk's reconcile threads,
 * which every namespace shares, for up to {@link StreamLimits#maxCallTime()}: without this bound a
 * namespace with many streams on a slow broker would hold that many threads. A read over the bound
 * does not wait: it is deferred to the filter's next reconcile.
 */
public final class StreamReadPlaces {

  private final int max;
  private final Map<String, Integer> reading = new HashMap<>();

  public StreamReadPlaces(int max) {
    this.max = max;
  }

  /** A place for one read of {@code namespace}, or empty when it has {@code max} under way. */
  public synchronized Optional<Place> enter(String namespace) {
    int now = reading.getOrDefault(namespace, 0);
    if (now >= max) {
      return Optional.empty();
    }
    reading.put(namespace, now + 1);
    return Optional.of(new Place(namespace));
  }

  /** Reads of {@code namespace} under way now. */
  public synchronized int reading(String namespace) {
    return reading.getOrDefault(namespace, 0);
  }

  private synchronized void leave(String namespace) {
    reading.merge(namespace, -1, (a, b) -> a + b == 0 ? null : a + b);
  }

  /** One read's place; closing it (again) frees it once. */
  public final class Place implements AutoCloseable {
    private final String namespace;
    private boolean open = true;

    private Place(String namespace) {
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
