package io.bloomoperator.watch;

import io.bloomoperator.snapshot.Manifest;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Bloom filter that follows the snapshot the bloom-operator publishes for one BloomFilter resource,
 * swapping in each new verified version while it keeps answering.
 *
 * <pre>{@code
 * LiveBloomFilter<String> ids = BloomFilterWatcher.watch(client, "shop", "product-ids", LiveKeyType.STRING);
 * if (!ids.mightContain(id)) return notFound();
 * }</pre>
 *
 * <p>{@link #mightContain} answers exactly as Guava's {@code BloomFilter.mightContain} would on the same
 * snapshot. It takes no lock: the served snapshot is one immutable object behind a volatile reference that
 * the watcher replaces in a single write, so every lookup sees a complete version, old or new.
 *
 * <p>Before the first snapshot is loaded, lookups answer according to {@link BeforeFirstSnapshot}. A
 * snapshot that fails verification (or has the wrong key type) is never served: the previous one stays
 * and the failure is counted and reported to the listeners.
 *
 * <p>Thread-safe. {@link #close()} stops watching; lookups after that keep answering from the last
 * snapshot.
 *
 * @param <K> the key type: {@code String} or {@code Long}, see {@link LiveKeyType}
 */
public final class LiveBloomFilter<K> implements AutoCloseable {

  /** {@link #currentVersion()} before the first snapshot; also a listener's "no version". */
  public static final long NO_VERSION = -1;

  private static final Logger LOG = LoggerFactory.getLogger(LiveBloomFilter.class);

  private final String namespace;
  private final String filterName;
  private final LiveKeyType<K> keyType;
  private final boolean answerBeforeFirstSnapshot;
  private final List<BloomFilterListener> listeners;

  private final LongAdder lookups = new LongAdder(); // LongAdder: contended lookups must not share a CAS
  private final LongAdder loads = new LongAdder();
  private final LongAdder failures = new LongAdder();
  private final CountDownLatch ready = new CountDownLatch(1);

  private volatile LoadedSnapshot current;
  private volatile WatchLoop loop;

  LiveBloomFilter(String namespace, String filterName, LiveKeyType<K> keyType,
      BeforeFirstSnapshot beforeFirstSnapshot, List<BloomFilterListener> listeners) {
    this.namespace = namespace;
    this.filterName = filterName;
    this.keyType = keyType;
    this.answerBeforeFirstSnapshot = beforeFirstSnapshot == BeforeFirstSnapshot.FAIL_OPEN;
    this.listeners = List.copyOf(listeners);
  }

  /**
   * False means {@code key} is definitely not in the served snapshot; true means it probably is. Before
   * the first snapshot: true under {@link BeforeFirstSnapshot#FAIL_OPEN}, false under
   * {@link BeforeFirstSnapshot#FAIL_CLOSED}.
   *
   * @throws NullPointerException if key is null
   */
  public boolean mightContain(K key) {
    Objects.requireNonNull(key, "key");
    lookups.increment();
    LoadedSnapshot snapshot = current; // one volatile read: the whole lookup uses this version
    return snapshot == null ? answerBeforeFirstSnapshot : keyType.mightContain(snapshot.bits(), key);
  }

  /** Whether a verified snapshot is being served (for readiness probes). */
  public boolean isReady() {
    return current != null;
  }

  /**
   * Waits until a verified snapshot is served or the timeout passes.
   *
   * @return whether the filter is ready; false on timeout or if the calling thread is interrupted (its
   *     interrupt flag is then set again)
   */
  public boolean awaitReady(Duration timeout) {
    try {
      return ready.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return isReady();
    }
  }

  /** Version of the served snapshot, or {@link #NO_VERSION} before the first one. */
  public long currentVersion() {
    LoadedSnapshot snapshot = current;
    return snapshot == null ? NO_VERSION : snapshot.version();
  }

  /** Manifest of the served snapshot (key count, expected fpp, creation time...), empty before the first. */
  public Optional<Manifest> currentManifest() {
    LoadedSnapshot snapshot = current;
    return snapshot == null ? Optional.empty() : Optional.of(snapshot.manifest());
  }

  /** Snapshots swapped in so far (including one read from the local snapshot directory). */
  public long loads() {
    return loads.sum();
  }

  /** Failed load attempts so far (each retry that fails counts). */
  public long failures() {
    return failures.sum();
  }

  /** {@link #mightContain} calls so far. */
  public long lookups() {
    return lookups.sum();
  }

  /** Namespace of the BloomFilter resource. */
  public String namespace() {
    return namespace;
  }

  /** Name of the BloomFilter resource. */
  public String filterName() {
    return filterName;
  }

  /** The key type this filter serves; snapshots of another type are refused. */
  public LiveKeyType<K> keyType() {
    return keyType;
  }

  /** Stops watching (waiting for a load in progress). Lookups keep answering from the last snapshot. */
  @Override
  public void close() {
    WatchLoop watching = loop;
    if (watching != null) {
      watching.close();
    }
  }

  @Override
  public String toString() {
    return "LiveBloomFilter{" + namespace + "/" + filterName + ", keyType=" + keyType + ", version="
        + currentVersion() + "}";
  }

  // ---- driven by WatchLoop, on the watcher thread (or the starting thread for the local snapshot) ----

  void attach(WatchLoop watchLoop) {
    this.loop = watchLoop;
  }

  WatchLoop loop() {
    return loop;
  }

  LoadedSnapshot snapshot() {
    return current;
  }

  /** Serves {@code snapshot} from now on: one volatile write. Its key type was checked by the loader. */
  void install(LoadedSnapshot snapshot, Duration loadDuration) {
    if (snapshot.bits().keyType() != keyType.keyType()) {
      throw new IllegalStateException("refusing to serve " + snapshot.bits().keyType() + " keys as "
          + keyType); // the loaders check this first; this guards against a future code path that does not
    }
    long oldVersion = currentVersion();
    current = snapshot;
    loads.increment();
    ready.countDown();
    LOG.info("{}/{}: serving v{} (was v{}), loaded in {} ms", namespace, filterName, snapshot.version(),
        oldVersion, loadDuration.toMillis());
    for (BloomFilterListener listener : listeners) {
      try {
        listener.onUpdate(oldVersion, snapshot.version(), loadDuration);
      } catch (RuntimeException e) {
        LOG.warn("listener {} failed in onUpdate", listener, e);
      }
    }
  }

  /** Counts and reports a failed load; the served snapshot is unchanged. */
  void reportFailure(long version, Exception exception) {
    failures.increment();
    for (BloomFilterListener listener : listeners) {
      try {
        listener.onFailure(version, exception);
      } catch (RuntimeException e) {
        LOG.warn("listener {} failed in onFailure", listener, e);
      }
    }
  }
}
