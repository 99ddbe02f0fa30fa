package io.bloomoperator.changes;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The heap all stream reads under way may hold, operator-wide ({@link StreamLimits#readBytes()}),
 * and one namespace's share of it ({@link StreamLimits#namespaceReadBytes()}). A read reserves its
 * bytes before it asks the broker for anything and keeps them until its keys are published: one
 * read may collect {@link StreamLimits#maxReadBytes()} of keys, and without a bound on all of them
 * together, every open stream reading at once would hold that many times it.
 *
 * <p>A read takes what is free, up to what it could use and up to a fair part of the budget: the
 * budget divided among the namespaces holding some of it or deferred for it lately (at least the
 * read's least). When less than a full read is granted, it collects fewer keys (the rest are read
 * next time), and only when not even {@link StreamLimits#minReadBytes()} is free is it deferred. So
 * a small budget slows streams down but lets every one of them publish: the fair part keeps the
 * first namespace to ask from taking all there is while others wait, and the namespace share keeps
 * one namespace from taking it all.
 */
public final class StreamReadBudget {

  private final long total;
  private final long perNamespace;
  private final Map<String, Long> byNamespace = new HashMap<>();
  private final Map<String, Long> deferredAt = new HashMap<>();
  private final LongSupplier nanos;
  private long used;
  private long peak;

  /**
   * How long a namespace deferred for bytes counts as contending: a deferred read is asked again at
   * its filter's next reconcile, every {@code publishEvery} (2 s by default).
   */
  static final Duration CONTENDING = Duration.ofSeconds(10);

  public StreamReadBudget(long total, long perNamespace) {
    this(total, perNamespace, System::nanoTime);
  }

  StreamReadBudget(long total, long perNamespace, LongSupplier nanos) {
    if (perNamespace > total || perNamespace < 0) {
      throw new IllegalArgumentException("a namespace's share is more than the budget");
    }
    this.total = total;
    this.perNamespace = perNamespace;
    this.nanos = nanos;
  }

  /**
   * Reserves up to {@code want} bytes for a read of {@code namespace}, at least {@code least};
   * empty when fewer are free, in all or in the namespace's share.
   */
  public synchronized Optional<Grant> take(String namespace, long least, long want) {
    if (least <= 0 || want < least) {
      throw new IllegalArgumentException("a read reserves at least one byte, and what it wants");
    }
    long now = nanos.getAsLong();
    deferredAt.values().removeIf(at -> now - at > CONTENDING.toNanos());
    long inNamespace = byNamespace.getOrDefault(namespace, 0L);
    long free = Math.min(total - used, perNamespace - inNamespace);
    if (free < least) {
      deferredAt.put(namespace, now);
      return Optional.empty();
    }
    Set<String> contending = new HashSet<>(byNamespace.keySet());
    contending.addAll(deferredAt.keySet());
    contending.add(namespace);
    long fair = Math.max(least, total / contending.size());
    long bytes = Math.min(Math.min(want, free), fair);
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
