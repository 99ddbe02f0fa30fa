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

  /** Deltas set in the served bits in place so far (each also counts as a load). */
  default long deltasInPlace() {
    return 0;
  }

  /** Payload checks so far that found bits changed in place not to match their manifest. */
  default long inPlaceMismatches() {
    return 0;
  }

  /** Stops following; the served snapshot stays. Idempotent. */
  void close();
}
