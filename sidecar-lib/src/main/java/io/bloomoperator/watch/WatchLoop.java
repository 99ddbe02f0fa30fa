package io.bloomoperator.watch;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides what a {@link LiveBloomFilter} serves: reacts to manifest events and resync polls, loads new
 * snapshots, retries failed ones with backoff, and hands verified ones to the filter to swap in.
 *
 * <p>Rules: a manifest announcing the snapshot already served (same version and digest, e.g. after the
 * operator edited an annotation) changes nothing. Any other manifest is the operator's current truth and
 * is loaded, even a lower version (a re-created filter counts from 1 again), unless keys are trusted:
 * then a manifest whose version is not above the served one is refused as a rollback (a replayed old
 * signed manifest would otherwise be accepted). A failed load is retried
 * (initial backoff doubling up to the maximum) until it succeeds or a different manifest arrives; the
 * current filter keeps serving meanwhile. A deleted manifest also changes nothing being served.
 *
 * <p>All methods except {@link #start()} and {@link #close()} run on the {@link WatcherThread}.
 */
final class WatchLoop implements ManifestInformer.Events {

  private static final Logger LOG = LoggerFactory.getLogger(WatchLoop.class);

  private final KubernetesClient client;
  private final String namespace;
  private final String manifestName;
  private final LiveBloomFilter<?> filter;
  private final ApiSnapshotLoader loader;
  private final LocalSnapshotCache cache; // null without a local snapshot directory
  private final Duration resync;
  private final WatcherThread thread;
  private final ManifestInformer informer;
  private final Backoff retryBackoff;
  private final boolean refuseRollback;

  // Confined to the watcher thread.
  private Announcement pending; // announced but not loaded yet (in progress or waiting for a retry)
  private ScheduledFuture<?> retry;

  private volatile boolean closed;

  WatchLoop(KubernetesClient client, LiveBloomFilter<?> filter, LocalSnapshotCache cache,
      Duration resync, Duration backoffInitial, Duration backoffMax, SnapshotLimits limits,
      TrustedKeys trustedKeys) {
    this.client = client;
    this.namespace = filter.namespace();
    this.manifestName = SnapshotNames.manifestName(filter.filterName());
    this.filter = filter;
    this.loader = new ApiSnapshotLoader(client, namespace, filter.filterName(),
        filter.keyType().keyType(), limits, trustedKeys);
    this.refuseRollback = !trustedKeys.isEmpty();
    this.cache = cache;
    this.resync = resync;
    this.thread = new WatcherThread("bloom-watch-" + namespace + "/" + filter.filterName());
    this.retryBackoff = new Backoff(backoffInitial, backoffMax);
    this.informer = new ManifestInformer(client, namespace, manifestName, this, thread,
        new Backoff(backoffInitial, backoffMax));
  }

  /**
   * Serves the local snapshot if there is a valid one (synchronously, so the filter is ready when this
   * returns, whatever the API server does), then starts watching in the background.
   */
  void start() {
    if (cache != null) {
      long started = System.nanoTime();
      cache.read(filter.keyType().keyType()).ifPresent(snapshot -> {
        LOG.info("serving local snapshot v{} of {}/{} until the API server answers", snapshot.version(),
            namespace, filter.filterName());
        filter.install(snapshot, Duration.ofNanos(System.nanoTime() - started));
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
  void close() {
    if (closed) {
      return;
    }
    closed = true;
    Runnable stop = () -> {
      informer.close();
      cancelRetry();
    };
    if (thread.isCurrent()) {
      stop.run();
    } else {
      thread.callAndWait(() -> {
        stop.run();
        return null;
      });
    }
    thread.shutdown();
  }

  ManifestInformer informer() {
    return informer;
  }

  @Override
  public void manifestChanged(ConfigMap configMap) {
    thread.execute(() -> onManifest(configMap));
  }

  @Override
  public void manifestDeleted() {
    thread.execute(() -> onManifestDeleted(true));
  }

  /** Test hook: runs a resync poll on the watcher thread now and waits for it. */
  void pollForTest() {
    thread.callAndWait(() -> {
      poll();
      return null;
    });
  }

  /** The safety net behind the watch: read the manifest directly, as if it had just been announced. */
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
    LoadedSnapshot serving = filter.snapshot();
    if (serving != null && serving.isSameAs(manifest)) {
      // Re-announced (annotation edit, relist, resync): nothing to load, and nothing older to retry.
      cancelRetry();
      pending = null;
      return;
    }
    if (pending != null && LoadedSnapshot.same(pending.manifest(), manifest) && retry != null) {
      return; // already waiting to retry exactly this
    }
    if (refuseRollback && serving != null && manifest.version() <= serving.version()) {
      refuse(manifest.version(), new SnapshotRefusedException(
          SnapshotRefusedException.Reason.ROLLBACK, "signed manifest of " + namespace + "/"
          + filter.filterName() + " announces v" + manifest.version() + ", not newer than the served v"
          + serving.version() + "; refused as a rollback"));
      return;
    }
    if (serving != null && manifest.version() < serving.version()) {
      LOG.warn("manifest {}/{} went back from v{} to v{} (filter re-created?); loading it", namespace,
          manifestName, serving.version(), manifest.version());
    }
    cancelRetry();
    retryBackoff.reset();
    pending = announced;
    attemptLoad();
  }

  /**
   * A manifest that is not loaded at all (unreadable or refused): nothing to retry until the
   * manifest changes; an older announcement still pending is dropped as well.
   */
  private void refuse(long version, SnapshotVerificationException e) {
    cancelRetry();
    pending = null;
    LOG.warn("not loading manifest {}/{}, still serving v{}: {}", namespace, manifestName,
        filter.currentVersion(), e.getMessage());
    filter.reportFailure(version, e);
  }

  private void onManifestDeleted(boolean fromWatch) {
    if (fromWatch || pending != null) {
      LOG.info("manifest {}/{} is gone; still serving v{}", namespace, manifestName,
          filter.currentVersion());
    }
    // Its chunks go with it: retrying the old announcement could only fail. Re-creation is an add event.
    cancelRetry();
    pending = null;
  }

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
        loaded = loader.load(announced);
      } catch (OutOfMemoryError e) {
        // The new filter did not fit beside the current one (old + new + one chunk): report it
        // and retry like any other failed load; the old filter is still complete and served.
        throw new IOException("not enough heap to load v" + manifest.version() + " ("
            + manifest.totalBytes() + " bytes) beside the current filter", e);
      }
    } catch (SnapshotVerificationException | IOException | RuntimeException e) {
      if (closed) {
        return;
      }
      filter.reportFailure(manifest.version(), e);
      long delayMillis = retryBackoff.next().toMillis();
      LOG.warn("could not load v{} of {}/{}, still serving v{}, retrying in {} ms: {}",
          manifest.version(), namespace, filter.filterName(), filter.currentVersion(), delayMillis,
          e.toString());
      retry = thread.schedule(this::attemptLoad, delayMillis, TimeUnit.MILLISECONDS);
      return;
    }
    pending = null;
    retryBackoff.reset();
    filter.install(loaded, Duration.ofNanos(System.nanoTime() - started));
    if (cache != null) {
      try {
        cache.write(loaded); // after the swap: the disk must never delay serving
      } catch (IOException | RuntimeException e) {
        LOG.warn("could not write local snapshot of {}/{}: {}", namespace, filter.filterName(),
            e.toString());
      }
    }
  }

  private void cancelRetry() {
    if (retry != null) {
      retry.cancel(false);
      retry = null;
    }
  }
}
