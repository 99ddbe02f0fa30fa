package io.bloomoperator.watch;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows one filter's manifest and holds the snapshot served for it: the whole path from "manifest
 * changed" to "filter swapped" reads top to bottom here ({@link #onManifest}, {@link #attemptLoad},
 * {@link #install}). {@link LiveBloomFilter} only reads {@link #serving()}.
 *
 * <p>Rules: a manifest announcing the snapshot already served (same version and digest, e.g. after
 * the operator edited an annotation) changes nothing. Any other manifest is the operator's current
 * truth and is loaded, even a lower version (a re-created filter counts from 1 again), unless keys
 * are trusted: then a manifest not {@linkplain Manifest#publishedAfter published after} the served
 * one is refused as a rollback (a replayed old signed manifest would otherwise be accepted); a
 * re-created filter's version 1 was created later, so it loads. With a maximum manifest age, a
 * manifest created longer ago than that is refused too (the only defence of a reader that starts
 * with nothing served against a replayed old signed version). A failed load is retried (initial
 * backoff doubling up to the maximum) until it succeeds or a different manifest arrives; the
 * current filter keeps serving meanwhile. A deleted manifest also changes nothing being served.
 *
 * <p>Manifest events, polls, loads and swaps all run on the one {@link WatcherThread}; only {@link
 * #start()}, {@link #close()} and the read-only accessors are called from other threads.
 */
final class WatchLoop implements SnapshotSource {

  private static final Logger LOG = LoggerFactory.getLogger(WatchLoop.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String filterName;
  private final String manifestName;
  private final KeyType keyType;
  private final List<BloomFilterListener> listeners;
  private final ApiSnapshotLoader loader;
  private final LocalSnapshotCache cache; // null without a local snapshot directory
  private final Duration resync;
  private final WatcherThread thread;
  private final ManifestInformer informer;
  private final Backoff retryBackoff;
  private final boolean refuseRollback;
  private final Duration maxManifestAge; // null: any age
  private final Clock clock;

  // What is served: written on the watcher thread (or by start() for the local snapshot), read
  // anywhere.
  private volatile LoadedSnapshot current;
  private final LongAdder loads = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final CountDownLatch ready = new CountDownLatch(1);

  // Confined to the watcher thread.
  private Announcement pending; // announced but not loaded yet (in progress or waiting for a retry)
  private ScheduledFuture<?> retry;

  private volatile boolean closed;

  WatchLoop(
      KubernetesClient client,
      String namespace,
      String filterName,
      KeyType keyType,
      List<BloomFilterListener> listeners,
      LocalSnapshotCache cache,
      Duration resync,
      Duration backoffInitial,
      Duration backoffMax,
      SnapshotLimits limits,
      TrustedKeys trustedKeys,
      Duration maxManifestAge,
      Clock clock,
      Consumer<SharedIndexInformer<ConfigMap>> onInformerCreated) {
    this.client = client;
    this.namespace = namespace;
    this.filterName = filterName;
    this.manifestName = SnapshotNames.manifestName(filterName);
    this.keyType = keyType;
    this.listeners = List.copyOf(listeners);
    this.loader =
        new ApiSnapshotLoader(client, namespace, filterName, keyType, limits, trustedKeys);
    this.refuseRollback = !trustedKeys.isEmpty();
    this.maxManifestAge = maxManifestAge;
    this.clock = clock;
    this.cache = cache;
    this.resync = resync;
    this.thread = new WatcherThread("bloom-watch-" + namespace + "/" + filterName);
    this.retryBackoff = new Backoff(backoffInitial, backoffMax);
    this.informer =
        new ManifestInformer(
            client,
            namespace,
            manifestName,
            thread,
            new Backoff(backoffInitial, backoffMax),
            onInformerCreated,
            this::onManifest,
            () -> onManifestDeleted(true));
  }

  /**
   * Serves the local snapshot if there is a valid one (synchronously, so the filter is ready when
   * this returns, whatever the API server does), then starts watching in the background.
   */
  void start() {
    if (cache != null) {
      long started = System.nanoTime();
      cache
          .read(keyType)
          .ifPresent(
              snapshot -> {
                LOG.info(
                    "serving local snapshot v{} of {}/{} until the API server answers",
                    snapshot.version(),
                    namespace,
                    filterName);
                install(snapshot, Duration.ofNanos(System.nanoTime() - started));
              });
    }
    informer.start();
    if (!resync.isZero()) {
      thread.scheduleWithFixedDelay(this::poll, resync.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Stops watching. Waits for a load or local write in progress to finish, so no file is left half
   * written by this watcher. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Runnable stop =
        () -> {
          informer.close();
          cancelRetry();
        };
    if (thread.isCurrent()) {
      stop.run();
    } else {
      thread.callAndWait(
          () -> {
            stop.run();
            return null;
          });
    }
    thread.shutdown();
  }

  /** The snapshot served, or null before the first: one volatile read. */
  @Override
  public LoadedSnapshot serving() {
    return current;
  }

  @Override
  public long loads() {
    return loads.sum();
  }

  @Override
  public long failures() {
    return failures.sum();
  }

  /** Waits until a snapshot is served. */
  @Override
  public boolean awaitReady(Duration timeout) throws InterruptedException {
    return ready.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * The safety net behind the watch: read the manifest directly, as if it had just been announced.
   */
  private void poll() {
    ConfigMap configMap;
    try {
      configMap = client.configMaps().inNamespace(namespace).withName(manifestName).get();
    } catch (KubernetesClientException e) {
      LOG.debug("resync of {}/{} failed: {}", namespace, manifestName, e.toString());
      return;
    }
    if (configMap == null) {
      onManifestDeleted(false);
    } else {
      onManifest(configMap);
    }
  }

  /** A manifest was announced (watch event or poll): decide whether to load it. */
  private void onManifest(ConfigMap configMap) {
    if (closed) {
      return;
    }
    Announcement announced;
    try {
      announced = loader.readManifest(configMap);
    } catch (SnapshotVerificationException e) {
      refuse(LiveBloomFilter.NO_VERSION, e);
      return;
    }
    Manifest manifest = announced.manifest();
    try {
      loader.check(announced);
    } catch (SnapshotVerificationException e) {
      refuse(manifest.version(), e);
      return;
    }
    LoadedSnapshot serving = current;
    if (serving != null && serving.isSameAs(manifest)) {
      // Re-announced (annotation edit, relist, resync): nothing to load, and nothing older to
      // retry.
      cancelRetry();
      pending = null;
      return;
    }
    if (pending != null && LoadedSnapshot.same(pending.manifest(), manifest) && retry != null) {
      return; // already waiting to retry exactly this
    }
    if (maxManifestAge != null
        && manifest.created().isBefore(clock.instant().minus(maxManifestAge))) {
      // A restarted reader holds nothing to compare with: a genuinely signed old version,
      // restored by whoever may write ConfigMaps, would pass every other check.
      refuse(
          manifest.version(),
          new SnapshotRefusedException(
              SnapshotRefusedException.Reason.TOO_OLD,
              "signed manifest of "
                  + namespace
                  + "/"
                  + filterName
                  + " announces v"
                  + manifest.version()
                  + " created "
                  + manifest.createdAt()
                  + ", more than "
                  + maxManifestAge
                  + " ago; refused as too old"));
      return;
    }
    if (refuseRollback && serving != null && !manifest.publishedAfter(serving.manifest())) {
      refuse(
          manifest.version(),
          new SnapshotRefusedException(
              SnapshotRefusedException.Reason.ROLLBACK,
              "signed manifest of "
                  + namespace
                  + "/"
                  + filterName
                  + " announces v"
                  + manifest.version()
                  + " created "
                  + manifest.createdAt()
                  + ", not published after the served v"
                  + serving.version()
                  + " created "
                  + serving.manifest().createdAt()
                  + "; refused as a rollback"));
      return;
    }
    if (serving != null && manifest.version() < serving.version()) {
      LOG.warn(
          "manifest {}/{} went back from v{} to v{} (filter re-created?); loading it",
          namespace,
          manifestName,
          serving.version(),
          manifest.version());
    }
    cancelRetry();
    retryBackoff.reset();
    pending = announced;
    attemptLoad();
  }

  /** Loads the pending announcement; on failure, tries again after the backoff. */
  private void attemptLoad() {
    Announcement announced = pending;
    retry = null;
    if (announced == null || closed) {
      return;
    }
    Manifest manifest = announced.manifest();
    long started = System.nanoTime();
    LoadedSnapshot loaded;
    try {
      try {
        loaded = loader.load(announced, current);
      } catch (OutOfMemoryError e) {
        // The new filter did not fit beside the current one (old + new + one chunk): report it
        // and retry like any other failed load; the old filter is still complete and served.
        throw new IOException(
            "not enough heap to load v"
                + manifest.version()
                + " ("
                + manifest.totalBytes()
                + " bytes) beside the current filter",
            e);
      }
    } catch (SnapshotVerificationException | IOException | RuntimeException e) {
      if (closed) {
        return;
      }
      reportFailure(manifest.version(), e);
      long delayMillis = retryBackoff.next().toMillis();
      LOG.warn(
          "could not load v{} of {}/{}, still serving v{}, retrying in {} ms: {}",
          manifest.version(),
          namespace,
          filterName,
          servedVersion(),
          delayMillis,
          e.toString());
      retry = thread.schedule(this::attemptLoad, delayMillis, TimeUnit.MILLISECONDS);
      return;
    }
    pending = null;
    retryBackoff.reset();
    install(loaded, Duration.ofNanos(System.nanoTime() - started));
    if (cache != null) {
      try {
        cache.write(loaded); // after the swap: the disk must never delay serving
      } catch (IOException | RuntimeException e) {
        LOG.warn(
            "could not write local snapshot of {}/{}: {}", namespace, filterName, e.toString());
      }
    }
  }

  /**
   * Serves {@code snapshot} from now on: one volatile write. Its key type was checked by the
   * loader.
   */
  private void install(LoadedSnapshot snapshot, Duration loadDuration) {
    if (snapshot.bits().keyType() != keyType) {
      throw new IllegalStateException(
          "refusing to serve "
              + snapshot.bits().keyType()
              + " keys as "
              + keyType); // the loaders check this first; this guards against a future code path
      // that does not
    }
    long oldVersion = servedVersion();
    current = snapshot;
    loads.increment();
    LOG.info(
        "{}/{}: serving v{} (was v{}), loaded in {} ms",
        namespace,
        filterName,
        snapshot.version(),
        oldVersion,
        loadDuration.toMillis());
    for (BloomFilterListener listener : listeners) {
      try {
        listener.onUpdate(oldVersion, snapshot.version(), loadDuration);
      } catch (RuntimeException e) {
        LOG.warn("listener {} failed in onUpdate", listener, e);
      }
    }
    // After the listeners: whoever waited for readiness finds them up to date (e.g. the
    // observed-false-positive window of the served version already open).
    ready.countDown();
  }

  /**
   * A manifest that is not loaded at all (unreadable or refused): nothing to retry until the
   * manifest changes; an older announcement still pending is dropped as well.
   */
  private void refuse(long version, SnapshotVerificationException e) {
    cancelRetry();
    pending = null;
    LOG.warn(
        "not loading manifest {}/{}, still serving v{}: {}",
        namespace,
        manifestName,
        servedVersion(),
        e.getMessage());
    reportFailure(version, e);
  }

  /** Counts and reports a failed load; the served snapshot is unchanged. */
  private void reportFailure(long version, Exception exception) {
    failures.increment();
    for (BloomFilterListener listener : listeners) {
      try {
        listener.onFailure(version, exception);
      } catch (RuntimeException e) {
        LOG.warn("listener {} failed in onFailure", listener, e);
      }
    }
  }

  private void onManifestDeleted(boolean fromWatch) {
    if (fromWatch || pending != null) {
      LOG.info(
          "manifest {}/{} is gone; still serving v{}", namespace, manifestName, servedVersion());
    }
    // Its chunks go with it: retrying the old announcement could only fail. Re-creation is an add
    // event.
    cancelRetry();
    pending = null;
  }

  private long servedVersion() {
    LoadedSnapshot snapshot = current;
    return snapshot == null ? LiveBloomFilter.NO_VERSION : snapshot.version();
  }

  private void cancelRetry() {
    if (retry != null) {
      retry.cancel(false);
      retry = null;
    }
  }
}
