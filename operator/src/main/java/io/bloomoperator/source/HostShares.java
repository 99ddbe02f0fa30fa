package io.bloomoperator.source;

import java.io.InterruptedIOException;
import java.util.HashMap;
import java.util.Map;

/**
 * A namespace's share of the shared pool's connections to one host: at most {@link #PER_NAMESPACE},
 * half of {@link HttpClients#MAX_PER_ROUTE}. A namespace may run up to {@code
 * BLOOM_MAX_BUILDS_PER_NAMESPACE} builds (8) at once, as many as the pool has connections to a
 * host; without a share, one tenant's builds reading slowly from a shared host (an export service,
 * an object store's endpoint) would make every other tenant's source on that host wait for the
 * whole {@code BLOOM_HTTP_MAX_READ_TIME}. A request holds its share from before it asks the pool
 * for a connection until its response is closed.
 *
 * <p>Only shares in use are remembered, so the table holds at most one entry per request under way
 * (bounded by the reconcile threads), however many hosts tenants name.
 */
final class HostShares {

  /** Connections to one host that one namespace's requests may hold at once. */
  static final int PER_NAMESPACE = HttpClients.MAX_PER_ROUTE / 2;

  /** The operator's one table: the pool it divides is shared by every source too. */
  static final HostShares SHARED = new HostShares();

  /** A share held by one request; {@link #close} gives it back (once). */
  interface Held extends AutoCloseable {
    @Override
    void close();
  }

  /** No share became free before the request's deadline. */
  static final class Exhausted extends InterruptedIOException {
    Exhausted() {
      super("no share of the host's connections left to this namespace");
    }
  }

  private record Key(String namespace, String scheme, String host, int port) {}

  private final Map<Key, Integer> held = new HashMap<>();

  /**
   * Takes one of the namespace's shares of {@code target}'s host, waiting at most {@code nanos} for
   * one to be given back.
   *
   * @throws Exhausted when none was given back in time
   */
  Held take(String namespace, HttpTarget target, long nanos)
      throws Exhausted, InterruptedIOException {
    Key key = new Key(namespace, target.scheme(), target.host(), target.port());
    long deadline = System.nanoTime() + nanos;
    synchronized (this) {
      while (held.getOrDefault(key, 0) >= PER_NAMESPACE) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new Exhausted();
        }
        try {
          wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted while waiting for a connection share");
        }
      }
      held.merge(key, 1, Integer::sum);
    }
    return new Held() {
      private boolean closed;

      @Override
      public void close() {
        synchronized (HostShares.this) {
          if (closed) {
            return;
          }
          closed = true;
          held.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
          HostShares.this.notifyAll();
        }
      }
    };
  }

  /** Shares in use, for tests. */
  synchronized int inUse() {
    return held.values().stream().mapToInt(Integer::intValue).sum();
  }
}
