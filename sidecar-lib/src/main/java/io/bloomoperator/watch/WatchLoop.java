package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedCanary;
import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows one filter's manifest and holds the snapshot served for it: the whole path from "manifest
 * changed" to "filter swapped" reads top to bottom here ({@link #onManifest}, {@link #attemptLoad},
 * {@link #install}). Whether a manifest is loaded is {@link Acceptance}'s verdict alone; this class
 * carries it out. {@link LiveBloomFilter} only reads {@link #serving()}.
 *
 * <p>A failed load is retried (with the backoff of {@link Pacing}) until it succeeds or a different
 * manifest arrives; the current filter keeps serving meanwhile. A refused manifest is not retried
 * until the manifest changes. A deleted manifest changes nothing being served.
 *
 * <p>A reader whose pod is in the {@linkplain AnnouncedCanary canary share} follows the canary
 * manifest instead of the stable one, judged by the same {@link Acceptance}; a canary it may not
 * load is reported once as a failure of that version (the operator halts the canary on it) and the
 * reader follows the stable manifest meanwhile.
 *
 * <p>A delta of the stable chain that only turns bits on (a change stream's adds) is not swapped in
 * but set in the served bits in place ({@link SnapshotFetcher#fetch(AnnouncedManifest,
 * ServedSnapshot, boolean)}), and the new version installed exactly as a swapped one would be: a
 * new {@link ServedSnapshot} sharing the bits, one volatile write, the same counters and listeners.
 * Only between two versions of the stable manifest: a canary, a version loaded while or after
 * serving a canary, the local snapshot served at start and anything after a failed payload check
 * are swapped in; a pin or a withdrawn canary (an empty delta on a retained chain) is swapped in by
 * {@link io.bloomoperator.snapshot.InPlaceDeltas}' own rule. {@link PayloadChecks} checks the whole
 * payload of a filter changed in place at a bounded rate and has a mismatch reloaded from scratch.
 *
 * <p>Manifest events, polls, loads and swaps all run on the one {@link WatcherThread}; only {@link
 * #start()}, {@link #close()} and the read-only accessors are called from other threads.
 */
final class WatchLoop implements SnapshotSource {

  private static final Logger LOG = LoggerFactory.getLogger(WatchLoop.class);

  private final Acceptance acceptance;
  private final ManifestFeed feed;
  private final SnapshotFetcher fetcher;
  private final LocalSnapshotCache cache; // null without a local snapshot directory
  private final CacheWrites cacheWrites; // null without a local snapshot directory
  private final Pacing pacing;
  private final BloomFilterListener listener;
  private final String filter; // namespace/name, for logs
  private final String podName; // null: never in a canary share
  private final PayloadChecks checks;

  // What is served: written on the watcher thread (or by start() for the local snapshot), read
  // anywhere.
  private volatile ServedSnapshot current;
  private final LongAdder loads = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final CountDownLatch ready = new CountDownLatch(1);

  // Confined to the watcher thread.
  private AnnouncedManifest pending; // accepted but not loaded yet (loading or waiting to retry)
  private boolean pendingCanary; // pending came from canary.json
  // What is served may not be changed in place: a canary, or of unknown origin (the local
  // snapshot, which may have been one). Nothing served yet counts as stable: the first load is
  // whole anyway.
  private boolean servedOffStableChain;
  private boolean reloadFromScratch; // a payload check failed: the next load ignores what is held
  private ScheduledFuture<?> retry;
  private AnnouncedManifest refusedCanary; // reported once, not on every resync

  private volatile boolean closed;

  /** A watch loop outside any canary share. */
  WatchLoop(
      Acceptance acceptance,
      ManifestFeed feed,
      SnapshotFetcher fetcher,
      LocalSnapshotCache cache,
      Pacing pacing,
      BloomFilterListener listener) {
    this(acceptance, feed, fetcher, cache, pacing, listener, null);
  }

  /**
   * @param cache the local snapshot directory, or null
   * @param listener told of every swap and failure, on the watcher thread
   * @param podName this reader's pod name, which decides its canary share; null for none
   */
  WatchLoop(
      Acceptance acceptance,
      ManifestFeed feed,
      SnapshotFetcher fetcher,
      LocalSnapshotCache cache,
      Pacing pacing,
      BloomFilterListener listener,
      String podName) {
    this(
        acceptance,
        feed,
        fetcher,
        cache,
        pacing,
        listener,
        podName,
        BloomFilterWatcher.DEFAULT_IN_PLACE_CHECK_INTERVAL);
  }

  /**
   * @param inPlaceCheckInterval the least time between two checks of the whole payload of a filter
   *     changed in place ({@link PayloadChecks}); {@link Duration#ZERO}: every version is swapped
   *     in
   */
  WatchLoop(
      Acceptance acceptance,
      ManifestFeed feed,
      SnapshotFetcher fetcher,
      LocalSnapshotCache cache,
      Pacing pacing,
      BloomFilterListener listener,
      String podName,
      Duration inPlaceCheckInterval) {
    this.podName = podName;
    this.acceptance = acceptance;
    this.feed = feed;
    this.fetcher = fetcher;
    this.cache = cache;
    this.pacing = pacing;
    this.cacheWrites =
        cache == null
            ? null
            : new CacheWrites(
                cache,
                pacing.localSnapshotInterval(),
                pacing.thread(),
                () -> closed,
                acceptance.namespace() + "/" + acceptance.filterName());
    this.listener = listener;
    this.filter = acceptance.namespace() + "/" + acceptance.filterName();
    this.checks =
        new PayloadChecks(
            inPlaceCheckInterval, pacing.thread(), () -> current, this::reloadServed, filter);
  }

  /**
   * Serves the local snapshot if there is a valid one (synchronously, so the filter is ready when
   * this returns, whatever the API server does), then starts watching in the background.
   */
  void start() {
    if (cache != null) {
      long started = System.nanoTime();
      cache
          .read()
          .ifPresent(
              snapshot -> {
                LOG.info(
                    "serving local snapshot v{} of {} until the API server answers",
                    snapshot.version(),
                    filter);
                servedOffStableChain = true; // it may have been a canary
                install(snapshot, Duration.ofNanos(System.nanoTime() - started));
                checks.verifiedWhole();
              });
    }
    feed.start(this::onManifest, () -> onManifestDeleted(true));
    if (!pacing.resync().isZero()) {
      pacing
          .thread()
          .scheduleWithFixedDelay(this::poll, pacing.resync().toMillis(), TimeUnit.MILLISECONDS);
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
          feed.close();
          cancelRetry();
        };
    WatcherThread thread = pacing.thread();
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
  public ServedSnapshot serving() {
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

  @Override
  public long deltasInPlace() {
    return checks.inPlace();
  }

  @Override
  public long inPlaceMismatches() {
    return checks.mismatches();
  }

  /** Payload checks of a filter changed in place that ran to the end. */
  long inPlaceChecks() {
    return checks.checked();
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
      configMap = feed.read();
    } catch (KubernetesClientException e) {
      LOG.debug("resync of {} failed: {}", filter, e.toString());
      return;
    }
    if (configMap == null) {
      onManifestDeleted(false);
    } else {
      onManifest(configMap);
    }
  }

  /** A manifest was announced (watch event or poll): judge it, then act on the verdict. */
  private void onManifest(ConfigMap configMap) {
    if (closed) {
      return;
    }
    AnnouncedManifest announced;
    try {
      announced = SnapshotConfigMaps.readManifest(configMap);
    } catch (SnapshotVerificationException e) {
      refuse(LiveBloomFilter.NO_VERSION, e);
      return;
    }
    ServedSnapshot serving = current;
    AnnouncedManifest served = serving == null ? null : serving.announced();
    Instant now = pacing.clock().instant();
    AnnouncedManifest canary = canaryFor(configMap, served, now);
    if (canary != null) {
      announced = canary;
    }
    Acceptance.Verdict verdict = acceptance.judge(announced, served, now);
    if (verdict instanceof Acceptance.Verdict.Refuse refused) {
      refuse(announced.version(), refused.reason());
      return;
    }
    if (verdict instanceof Acceptance.Verdict.Same) {
      if (reloadFromScratch) {
        return; // the served bits failed their payload check: their reload goes on
      }
      // Re-announced (annotation edit, relist, resync): nothing to load, nothing older to retry.
      cancelRetry();
      pending = null;
      return;
    }
    if (announced.announcesSameAs(pending) && retry != null) {
      return; // already waiting to retry exactly this
    }
    if (serving != null && announced.version() < serving.version()) {
      LOG.warn(
          "manifest of {} went back from v{} to v{} (filter re-created?); loading it",
          filter,
          serving.version(),
          announced.version());
    }
    cancelRetry();
    pacing.retryBackoff().reset();
    pending = announced;
    pendingCanary = canary != null;
    attemptLoad();
  }

  /**
   * A payload check found the served bits, changed in place, not to be the payload their manifest
   * describes: counted as a failed load of that version, then the newest accepted version (the
   * served one unless a newer one is pending) is loaded again from its base and every delta,
   * ignoring what is held, and swapped in. Until it is, the served bits keep answering: every delta
   * applied to them only turned bits on after its chunks were verified, so keys of the last
   * verified version are still answered "maybe present".
   */
  private void reloadServed(String message) {
    ServedSnapshot serving = current;
    if (closed || serving == null) {
      return;
    }
    LOG.warn("{}: {}", filter, message);
    reportFailure(serving.version(), new SnapshotVerificationException(message));
    reloadFromScratch = true;
    if (pending == null) {
      pending = serving.announced();
      pendingCanary = false;
    }
    cancelRetry();
    pacing.retryBackoff().reset();
    attemptLoad();
  }

  /**
   * The canary this reader follows instead of the stable manifest, or null: none announced, this
   * pod not in its share, or a canary this reader may not load (reported once as a failure of its
   * version; the stable manifest is followed meanwhile). A malformed share counts as no canary.
   */
  private AnnouncedManifest canaryFor(ConfigMap configMap, AnnouncedManifest served, Instant now) {
    if (podName == null) {
      return null;
    }
    AnnouncedCanary canary;
    try {
      canary = SnapshotConfigMaps.readCanary(configMap);
    } catch (SnapshotVerificationException e) {
      LOG.debug("ignoring the canary of {}: {}", filter, e.getMessage());
      return null;
    }
    if (canary == null || !canary.includes(podName)) {
      return null;
    }
    if (acceptance.judge(canary.announced(), served, now)
        instanceof Acceptance.Verdict.Refuse refused) {
      if (!canary.announced().announcesSameAs(refusedCanary)) {
        refusedCanary = canary.announced();
        LOG.warn(
            "not loading canary v{} of {}, following the stable manifest: {}",
            canary.announced().version(),
            filter,
            refused.reason().getMessage());
        reportFailure(canary.announced().version(), refused.reason());
      }
      return null;
    }
    return canary.announced();
  }

  /** Loads the pending announcement; on failure, tries again after the backoff. */
  private void attemptLoad() {
    AnnouncedManifest announced = pending;
    retry = null;
    if (announced == null || closed) {
      return;
    }
    Manifest manifest = announced.manifest();
    long started = System.nanoTime();
    SnapshotFetcher.Fetched loaded;
    // In place only from a version of the stable manifest to the next: never into or out of a
    // canary (withdrawing it must not leave its bits behind), nor after a failed payload check.
    boolean inPlace =
        checks.enabled() && !pendingCanary && !servedOffStableChain && !reloadFromScratch;
    try {
      try {
        loaded = fetcher.fetch(announced, reloadFromScratch ? null : current, inPlace);
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
      long delayMillis = pacing.retryBackoff().next().toMillis();
      LOG.warn(
          "could not load v{} of {}, still serving v{}, retrying in {} ms: {}",
          manifest.version(),
          filter,
          servedVersion(),
          delayMillis,
          e.toString());
      retry = pacing.thread().schedule(this::attemptLoad, delayMillis, TimeUnit.MILLISECONDS);
      return;
    }
    pending = null;
    pacing.retryBackoff().reset();
    servedOffStableChain = pendingCanary;
    reloadFromScratch = false;
    if (loaded.inPlace() != null) {
      // Verified and add-only: set just before the new version is published, on this thread, the
      // only one that changes served bits. Lookups meanwhile see each bit old or new.
      loaded.inPlace().setBits();
    }
    install(
        loaded.snapshot(),
        Duration.ofNanos(System.nanoTime() - started),
        loaded.inPlace() == null ? "loaded" : "delta set in place");
    if (loaded.inPlace() != null) {
      checks.appliedInPlace();
    } else {
      checks.verifiedWhole();
    }
    if (cacheWrites != null) {
      // After a change in place too: the local snapshot is written from the served bits on this
      // thread, so it holds exactly the version it is named after.
      cacheWrites.offer(loaded.snapshot());
    }
  }

  /** Serves {@code snapshot} from now on: one volatile write. */
  private void install(ServedSnapshot snapshot, Duration loadDuration) {
    install(snapshot, loadDuration, "loaded");
  }

  /**
   * As {@link #install(ServedSnapshot, Duration)}; {@code how} says in the log whether the version
   * was loaded or set in place.
   */
  private void install(ServedSnapshot snapshot, Duration loadDuration, String how) {
    long oldVersion = servedVersion();
    current = snapshot;
    loads.increment();
    LOG.info(
        "{}: serving v{} (was v{}), {} in {} ms",
        filter,
        snapshot.version(),
        oldVersion,
        how,
        loadDuration.toMillis());
    listener.onUpdate(oldVersion, snapshot.version(), loadDuration);
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
        "not loading the manifest of {}, still serving v{}: {}",
        filter,
        servedVersion(),
        e.getMessage());
    reportFailure(version, e);
  }

  /** Counts and reports a failed load; the served snapshot is unchanged. */
  private void reportFailure(long version, Exception exception) {
    failures.increment();
    listener.onFailure(version, exception);
  }

  private void onManifestDeleted(boolean fromWatch) {
    if (fromWatch || pending != null) {
      LOG.info("manifest of {} is gone; still serving v{}", filter, servedVersion());
    }
    // Its chunks go with it: retrying the old announcement could only fail. Re-creation is an add
    // event.
    cancelRetry();
    pending = null;
  }

  private long servedVersion() {
    ServedSnapshot snapshot = current;
    return snapshot == null ? LiveBloomFilter.NO_VERSION : snapshot.version();
  }

  private void cancelRetry() {
    if (retry != null) {
      retry.cancel(false);
      retry = null;
    }
  }
}
