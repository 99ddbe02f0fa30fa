package io.bloomoperator.source;

import java.util.HashMap;
import java.util.Map;

/**
 * The operator's bound on the extra connections partitioned reads hold at once, one reading thread
 * each, and one namespace's share of them: one table per source kind ({@link JdbcConnectionShares}
 * for jdbc partitions, {@link HttpSourceSettings#partitionConnections()} for http URL lists). Every
 * build already reads on one connection of its own, bounded by {@code
 * BLOOM_MAX_BUILDS_PER_NAMESPACE}; a partitioned read asks here for the others and never waits: it
 * gets what is free within its namespace's share and the operator's total, possibly none, and reads
 * its partitions on the connections it has, one after the other. So a namespace declaring 64
 * partitions (or URLs) holds its share, not 64 connections (nor threads), and no other namespace
 * waits for it: each build still reads, on its own connection at least.
 *
 * <p>Only namespaces holding a share are remembered, so the table is bounded by the reads under
 * way.
 */
class PartitionShares {

  private final int total;
  private final int perNamespace;
  private final Map<String, Integer> held = new HashMap<>();
  private int inUse;

  /**
   * @param total extra connections across the operator
   * @param perNamespace extra connections of one namespace; at most {@code total}
   */
  PartitionShares(int total, int perNamespace) {
    if (total < 0 || perNamespace < 0) {
      throw new IllegalArgumentException("connection shares must not be negative");
    }
    this.total = total;
    this.perNamespace = Math.min(perNamespace, total);
  }

  /** Extra connections held by {@link #take}; {@link #close} gives them back (once). */
  final class Held implements AutoCloseable {
    private final String namespace;
    private final int count;
    private boolean closed;

    private Held(String namespace, int count) {
      this.namespace = namespace;
      this.count = count;
    }

    /** How many extra connections were granted (0 to the number asked for). */
    int count() {
      return count;
    }

    @Override
    public void close() {
      synchronized (PartitionShares.this) {
        if (closed || count == 0) {
          closed = true;
          return;
        }
        closed = true;
        held.computeIfPresent(namespace, (k, n) -> n == count ? null : n - count);
        inUse -= count;
      }
    }
  }

  /** Up to {@code wanted} extra connections for {@code namespace}, as many as are free now. */
  synchronized Held take(String namespace, int wanted) {
    int mine = held.getOrDefault(namespace, 0);
    int granted = Math.max(0, Math.min(wanted, Math.min(perNamespace - mine, total - inUse)));
    if (granted > 0) {
      held.put(namespace, mine + granted);
      inUse += granted;
    }
    return new Held(namespace, granted);
  }

  /** Extra connections held now, by all namespaces. */
  synchronized int inUse() {
    return inUse;
  }

  /** Extra connections {@code namespace} holds now. */
  synchronized int heldBy(String namespace) {
    return held.getOrDefault(namespace, 0);
  }

  int perNamespace() {
    return perNamespace;
  }

  /** Equal limits: settings compare by what the administrator set, not by what is held now. */
  @Override
  public boolean equals(Object o) {
    return o != null
        && o.getClass() == getClass()
        && ((PartitionShares) o).total == total
        && ((PartitionShares) o).perNamespace == perNamespace;
  }

  @Override
  public int hashCode() {
    return 31 * total + perNamespace;
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[total=" + total + ", perNamespace=" + perNamespace + "]";
  }

  int total() {
    return total;
  }
}
