package io.bloomoperator.watch;

import java.time.Duration;

/**
 * Where a {@link LiveBloomFilter} gets the snapshot it serves: the {@link WatchLoop} following a
 * BloomFilter in the cluster, or a {@link FixedSnapshot} built in memory (a test double).
 */
interface SnapshotSource {

  /** The snapshot served, or null before the first: one volatile read at most. */
  ServedSnapshot serving();

  /** Waits until a snapshot is served. */
  boolean awaitReady(Duration timeout) throws InterruptedException;

  /** Snapshots swapped in so far. */
  long loads();

  /** Failed load attempts so far. */
  long failures();

  /** Stops following; the served snapshot stays. Idempotent. */
  void close();
}
