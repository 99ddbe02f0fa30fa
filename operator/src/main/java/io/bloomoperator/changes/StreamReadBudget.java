package io.bloomoperator.changes;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The heap all stream reads under way may hold, operator-wide ({@link StreamLimits#readBytes()}),
 * and one namespace's share of it ({@link StreamLimits#namespaceReadBytes()}). A read reserves its
 * bytes before it asks the broker for anything and keeps them until its keys are published: one
 * read may collect {@link StreamLimits#maxReadBytes()} of keys, and without a bound on all of them
 * together, every open stream reading at once would hold that many times it.
 *
 * <p>A read takes what is free, up to what it could use: when less than a full read is free, it
 * collects fewer keys (the rest are read next time), and only when not even {@link
 * StreamLimits#minReadBytes()} is free is it deferred. So a small budget slows streams down but
 * lets every one of them publish, and the namespace share keeps one namespace from taking it all.
 */
public final class StreamReadBudget {

  private final long total;
  private final long perNamespace;
  private final Map<String, Long> byNamespace = new HashMap<>();
  private long used;
  private long peak;

  public StreamReadBudget(long total, long perNamespace) {
    if (perNamespace > total || perNamespace < 0) {
      throw new IllegalArgumentException("a namespace's share is more than the budget");
    }
    this.total = total;
    this.perNamespace = perNamespace;
  }

  /**
   * Reserves up to {@code want} bytes for a read of {@code namespace}, at least {@code least};
   * empty when fewer are free, in all or in the namespace's share.
   */
  public synchronized Optional<Grant> take(String namespace, long least, long want) {
    if (least <= 0 || want < least) {
      throw new IllegalArgumentException("a read reserves at least one byte, and what it wants");
    }
    long inNamespace = byNamespace.getOrDefault(namespace, 0L);
    long free = Math.min(total - used, perNamespace - inNamespace);
    if (free < least) {
      return Optional.empty();
    }
    long bytes = Math.min(want, free);
    used += bytes;
    peak = Math.max(peak, used);
    byNamespace.put(namespace, inNamespace + bytes);
    return Optional.of(new Grant(namespace, bytes));
  }

  private synchronized void give(String namespace, long bytes) {
    used -= bytes;
    byNamespace.merge(namespace, -bytes, (a, b) -> a + b == 0 ? null : a + b);
  }

  /** Bytes reserved now, all namespaces together. */
  public synchronized long used() {
    return used;
  }

  /** The most bytes reserved at once since this budget was made. */
  public synchronized long peak() {
    return peak;
  }

  /** Bytes one read holds; closing it (again) gives them back once. */
  public final class Grant implements AutoCloseable {
    private final String namespace;
    private final long bytes;
    private boolean open = true;

    private Grant(String namespace, long bytes) {
      this.namespace = namespace;
      this.bytes = bytes;
    }

    /** The bytes reserved. */
    public long bytes() {
      return bytes;
    }

    @Override
    public void close() {
      synchronized (StreamReadBudget.this) {
        if (!open) {
          return;
        }
        open = false;
      }
      give(namespace, bytes);
    }
  }
}
