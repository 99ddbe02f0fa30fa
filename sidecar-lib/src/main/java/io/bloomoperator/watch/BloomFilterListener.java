package io.bloomoperator.watch;

import java.time.Duration;

/**
 * Told about every snapshot swap and every failed load of a {@link LiveBloomFilter}. Both methods
 * run on the watcher's single background thread, so a slow listener delays the next load;
 * exceptions they throw are logged and otherwise ignored.
 */
public interface BloomFilterListener {

  /**
   * A verified snapshot is now being served: swapped in, or set in the served bits in place (an
   * add-only delta of the stable chain, {@link LiveBloomFilter#deltasAppliedInPlace()}: its chunks
   * and signature verified, its whole payload checked on a copy within {@link
   * BloomFilterWatcher.Builder#inPlaceDeltas the check interval}). For the first snapshot this runs
   * before {@link LiveBloomFilter#awaitReady(Duration)} returns, so a listener must not wait for
   * readiness.
   *
   * @param oldVersion the version served before, or {@link LiveBloomFilter#NO_VERSION} for the
   *     first one
   * @param newVersion the version served from now on
   * @param loadDuration time spent fetching and verifying the snapshot
   */
  default void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {}

  /**
   * A snapshot could not be loaded (missing chunk, digest mismatch, wrong key type, unreadable
   * manifest, API error); the previous filter, if any, is still being served and the load will be
   * retried.
   *
   * <p>What {@code exception} means:
   *
   * <ul>
   *   <li>{@link io.bloomoperator.snapshot.SnapshotRefusedException}: the manifest was refused
   *       before anything was fetched (too large, another filter's, unsigned or badly signed, a
   *       rollback); see its {@code reason()}. Not retried until the manifest changes.
   *   <li>another {@link io.bloomoperator.snapshot.SnapshotVerificationException}: the manifest is
   *       unreadable or announces another key type, or the snapshot failed a check (digest, size,
   *       header). An unreadable manifest or another key type is not retried until the manifest
   *       changes; a failed check of the chunks is.
   *   <li>{@link java.io.IOException}: a chunk ConfigMap holds no or not the announced amount of
   *       data, or the filter did not fit in the heap beside the current one; an {@link
   *       io.bloomoperator.snapshot.ObjectStoreException} when an object store refused this
   *       reader's credentials or did not answer (see its {@code reason()}); retried with backoff.
   *   <li>a {@link RuntimeException} (typically fabric8's {@code KubernetesClientException}): the
   *       API server did not answer; retried with backoff.
   * </ul>
   *
   * @param version the version that failed, or {@link LiveBloomFilter#NO_VERSION} when the manifest
   *     itself could not be read
   * @param exception why
   */
  default void onFailure(long version, Exception exception) {}
}
