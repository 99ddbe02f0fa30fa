package io.bloomoperator.watch;

import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.nio.file.Path;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates {@link LiveBloomFilter}s that follow the snapshot the bloom-operator publishes for a
 * BloomFilter resource. The entry point of the library: {@link #watch} with the defaults, {@link
 * #builder} for options. Neither blocks on the API server; neither throws for an unreachable
 * cluster or a missing snapshot (the filter then answers per {@link BeforeFirstSnapshot} and keeps
 * retrying). Arguments are checked at once: a null argument throws {@link NullPointerException}, an
 * empty namespace or a filter name that cannot name a ConfigMap {@link IllegalArgumentException}.
 *
 * <pre>{@code
 * KubernetesClient client = new KubernetesClientBuilder().build();
 * LiveBloomFilter<String> ids = BloomFilterWatcher.watch(client, "shop", "product-ids", LiveKeyType.STRING);
 * if (!ids.mightContain(id)) return notFound();
 * }</pre>
 *
 * <p>Only the manifest ConfigMap {@code <filter>-bloom} is watched; the chunks of a new version are
 * then fetched one by one by name. A namespaced Role with get, list and watch on configmaps is all
 * it needs. The client is not closed by the filter: it belongs to the caller.
 *
 * <p>Nothing in a manifest is trusted before it is checked: a manifest for another filter, one
 * whose size exceeds {@link Builder#maxSnapshotBytes(long)} or {@link Builder#maxChunks(int)}, or
 * one that names chunks other than the filter's own is refused before any chunk is fetched. With
 * {@link Builder#trustedKey(PublicKey)}, only manifests signed by a trusted key, and only newer
 * versions than the one served, are accepted. Refusals reach the listeners as a {@link
 * io.bloomoperator.snapshot.SnapshotRefusedException} whose reason says why.
 */
public final class BloomFilterWatcher {

  /** Default interval of the direct manifest read behind the watch. */
  public static final Duration DEFAULT_RESYNC = Duration.ofMinutes(5);

  /** Default first delay before retrying a failed load or restarting a stopped watch. */
  public static final Duration DEFAULT_BACKOFF_INITIAL = Duration.ofSeconds(1);

  /** Default cap of the doubling retry delay. */
  public static final Duration DEFAULT_BACKOFF_MAX = Duration.ofSeconds(60);

  /** Default interval of the reader report's heartbeat (see {@link Builder#podIdentity}). */
  public static final Duration DEFAULT_REPORT_INTERVAL = Duration.ofSeconds(60);

  /** Default bound of the keys held by {@link LiveBloomFilter#addLocal} at once. */
  public static final int DEFAULT_LOCAL_ADDS_MAX_ENTRIES = 100_000;

  /**
   * Default time a key added with {@link LiveBloomFilter#addLocal} is held if no version has it.
   */
  public static final Duration DEFAULT_LOCAL_ADDS_TTL = Duration.ofMinutes(10);

  /**
   * Default least time between two checks of the whole payload of a filter changed in place by
   * deltas (see {@link Builder#inPlaceDeltas}).
   */
  public static final Duration DEFAULT_IN_PLACE_CHECK_INTERVAL = Duration.ofMinutes(1);

  /** The longest check interval {@link Builder#inPlaceDeltas} accepts. */
  public static final Duration MAX_IN_PLACE_CHECK_INTERVAL = Duration.ofHours(1);

  /** Default bound, in chars, of a String key added with {@link LiveBloomFilter#addLocal}. */
  public static final int DEFAULT_LOCAL_ADDS_MAX_KEY_LENGTH = 256;

  /** Environment variables a reader takes its pod's identity from (the downward API). */
  public static final String ENV_POD_NAME = "POD_NAME";

  public static final String ENV_POD_UID = "POD_UID";

  public static final String ENV_POD_NAMESPACE = "POD_NAMESPACE";

  private static final Logger REPORT_LOG = LoggerFactory.getLogger(ReaderReporter.class);

  private BloomFilterWatcher() {}

  /**
   * Starts following a filter with the default options (fail open, no local snapshot directory,
   * resync every 5 minutes). Returns at once; see {@link LiveBloomFilter#awaitReady(Duration)}.
   */
  public static <K> LiveBloomFilter<K> watch(
      KubernetesClient client, String namespace, String filterName, LiveKeyType<K> keyType) {
    return builder(client, namespace, filterName, keyType).start();
  }

  /**
   * Options for following a filter; finish with {@link Builder#start()}.
   *
   * @throws NullPointerException if an argument is null
   * @throws IllegalArgumentException if namespace is not a Kubernetes namespace name (DNS label) or
   *     filterName not a Kubernetes object name (DNS subdomain)
   */
  public static <K> Builder<K> builder(
      KubernetesClient client, String namespace, String filterName, LiveKeyType<K> keyType) {
    return new Builder<>(client, namespace, filterName, keyType);
  }

  /**
   * Options of one {@link LiveBloomFilter}. Each setter checks its argument at once and returns
   * this builder. Not thread-safe: configure it on one thread, then call {@link #start()}, once per
   * filter to create.
   *
   * @param <K> the key type
   */
  public static final class Builder<K> {
    private final KubernetesClient client;
    private final String namespace;
    private final String filterName;
    private final LiveKeyType<K> keyType;
    private BeforeFirstSnapshot beforeFirstSnapshot = BeforeFirstSnapshot.FAIL_OPEN;
    private Path localSnapshotDirectory;
    private Duration sharedLocalSnapshotInterval; // null: the local snapshot is this reader's own
    private Duration resync = DEFAULT_RESYNC;
    private Duration backoffInitial = DEFAULT_BACKOFF_INITIAL;
    private Duration backoffMax = DEFAULT_BACKOFF_MAX;
    private final List<BloomFilterListener> listeners = new ArrayList<>();
    private SnapshotLimits limits = SnapshotLimits.forThisHeap();
    private boolean maxSnapshotBytesSet;
    private boolean memoryMapped;
    private Duration inPlaceCheckInterval = DEFAULT_IN_PLACE_CHECK_INTERVAL;
    private MappedPayloads.UsableSpace usableSpace = MappedPayloads.FILE_STORE;
    private final List<PublicKey> trustedKeys = new ArrayList<>();
    private Consumer<SharedIndexInformer<ConfigMap>> onInformerCreated = informer -> {};
    private Duration maxManifestAge;
    private Clock clock = Clock.systemUTC();
    private DoubleSupplier jitter = () -> ThreadLocalRandom.current().nextDouble();
    private final Map<String, ObjectStore> objectStores = new LinkedHashMap<>();
    private boolean report = true;
    private String podName;
    private String podUid;
    private Duration reportInterval = DEFAULT_REPORT_INTERVAL;
    private Map<String, String> environment = System.getenv();
    private int localAddsMaxEntries = DEFAULT_LOCAL_ADDS_MAX_ENTRIES;
    private Duration localAddsTtl = DEFAULT_LOCAL_ADDS_TTL;
    private int localAddsMaxKeyLength = DEFAULT_LOCAL_ADDS_MAX_KEY_LENGTH;
    private LongSupplier nanoTime = System::nanoTime;

    /**
     * Bounds of {@link LiveBloomFilter#addLocal}: at most {@code maxEntries} keys held at once
     * (further adds are refused, not evicting any), each for at most {@code ttl} when no served
     * version shows it. Default {@value BloomFilterWatcher#DEFAULT_LOCAL_ADDS_MAX_ENTRIES} keys and
     * 10 minutes; choose the TTL well above the time a new ID takes to reach a published version
     * (source refresh interval plus build and publish). {@code maxEntries} 0 turns local adds off:
     * every add is refused, and lookups skip the overlay.
     *
     * @throws IllegalArgumentException if {@code maxEntries} is negative or {@code ttl} not
     *     positive
     */
    public Builder<K> localAdds(int maxEntries, Duration ttl) {
      if (maxEntries < 0) {
        throw new IllegalArgumentException(
            "localAdds maxEntries must not be negative, got " + maxEntries);
      }
      if (ttl.isNegative() || ttl.isZero()) {
        throw new IllegalArgumentException("localAdds ttl must be positive, got " + ttl);
      }
      this.localAddsMaxEntries = maxEntries;
      this.localAddsTtl = ttl;
      return this;
    }

    /**
     * The longest String key {@link LiveBloomFilter#addLocal} accepts, in chars; default {@value
     * BloomFilterWatcher#DEFAULT_LOCAL_ADDS_MAX_KEY_LENGTH}. With {@link #localAdds}'s count, it
     * bounds the overlay's memory: about {@code maxEntries * (110 + 2 * chars)} bytes at worst.
     *
     * @throws IllegalArgumentException if {@code chars} is not positive
     */
    public Builder<K> localAddsMaxKeyLength(int chars) {
      if (chars < 1) {
        throw new IllegalArgumentException("localAddsMaxKeyLength must be positive, got " + chars);
      }
      this.localAddsMaxKeyLength = chars;
      return this;
    }

    /** The clock local adds' TTL is measured with. Not API: the seam for tests. */
    Builder<K> nanoTime(LongSupplier nanoTime) {
      this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    private Builder(
        KubernetesClient client, String namespace, String filterName, LiveKeyType<K> keyType) {
      this.client = Objects.requireNonNull(client, "client");
      this.namespace = requireName(namespace, "namespace", 63);
      this.filterName = requireName(filterName, "filterName", 253);
      this.keyType = Objects.requireNonNull(keyType, "keyType");
    }

    /**
     * Kubernetes names: a namespace is a DNS label (63), a BloomFilter name a DNS subdomain (253).
     * Checked here, not on the watcher thread, and so that no request path is built from a name
     * that could not be one.
     */
    private static String requireName(String value, String what, int maxLength) {
      requireNonBlank(value, what);
      String pattern =
          maxLength == 63 ? "[a-z0-9]([-a-z0-9]*[a-z0-9])?" : "[a-z0-9]([-a-z0-9.]*[a-z0-9])?";
      if (value.length() > maxLength || !value.matches(pattern)) {
        throw new IllegalArgumentException(
            what
                + " must be a Kubernetes name (lower-case letters, digits, '-'"
                + (maxLength == 63 ? "" : ", '.'")
                + "; at most "
                + maxLength
                + " characters)");
      }
      return value;
    }

    /**
     * What lookups answer before the first snapshot; default {@link BeforeFirstSnapshot#FAIL_OPEN}.
     */
    public Builder<K> beforeFirstSnapshot(BeforeFirstSnapshot policy) {
      this.beforeFirstSnapshot = Objects.requireNonNull(policy, "policy");
      return this;
    }

    /**
     * A directory (e.g. an emptyDir volume) to keep the last verified snapshot in. At start, a
     * valid snapshot found there is served at once, before the API server answers; it is
     * re-verified (digests, namespace, filter, key type) and ignored if anything is off. Default:
     * none.
     */
    public Builder<K> localSnapshotDirectory(Path directory) {
      this.localSnapshotDirectory = Objects.requireNonNull(directory, "directory");
      return this;
    }

    /**
     * File mode: the {@link #localSnapshotDirectory} is shared with other processes of the pod
     * (e.g. an {@code emptyDir} mounted in several containers), which memory-map the payload file
     * it holds. Its files are then readable by every user (0644), forced to disk before they are
     * renamed into place, and rewritten at most once per {@code minInterval}: each write is the
     * whole payload, and a change stream publishes a small delta every second or two. A version
     * served within the interval after a write is written when the interval has passed (only the
     * newest of those), so the file lags what this reader serves by at most {@code minInterval}
     * plus the write. The reader's side of the contract is in the lookup sidecar's README (file
     * mode). Needs a {@link #localSnapshotDirectory}; not with {@link #memoryMapped}, whose served
     * file is rewritten for every version.
     *
     * @param minInterval the least time between two writes; {@link Duration#ZERO}: every version
     * @throws IllegalArgumentException if {@code minInterval} is negative
     */
    public Builder<K> shareLocalSnapshot(Duration minInterval) {
      if (minInterval.isNegative()) {
        throw new IllegalArgumentException("minInterval must not be negative, got " + minInterval);
      }
      this.sharedLocalSnapshotInterval = minInterval;
      return this;
    }

    /**
     * How often to read the manifest directly, as a safety net for missed watch events; default 5
     * minutes, {@link Duration#ZERO} turns it off.
     */
    public Builder<K> resync(Duration interval) {
      if (interval.isNegative()) {
        throw new IllegalArgumentException("resync must not be negative, got " + interval);
      }
      this.resync = interval;
      return this;
    }

    /**
     * Delay before retrying a failed load or restarting a stopped watch: a random time up to a cap
     * that starts at {@code initial} and doubles up to {@code max} (full jitter, so that many
     * readers failing together do not retry in lockstep); default 1 s to 60 s.
     */
    public Builder<K> retryBackoff(Duration initial, Duration max) {
      new Backoff(initial, max); // validates
      this.backoffInitial = initial;
      this.backoffMax = max;
      return this;
    }

    /**
     * The largest snapshot (manifest {@code totalBytes}, about numBits / 8) this reader loads;
     * larger ones are refused before a chunk is fetched or the filter allocated, with a {@link
     * io.bloomoperator.snapshot.SnapshotRefusedException} of reason {@code TOO_LARGE}. Default: a
     * quarter of the maximum heap ({@code Runtime.maxMemory()}), so the served filter and the one
     * being loaded fit in half of it.
     *
     * @throws IllegalArgumentException if {@code bytes} is not positive
     */
    public Builder<K> maxSnapshotBytes(long bytes) {
      this.limits = limits.withMaxTotalBytes(bytes);
      this.maxSnapshotBytesSet = true;
      return this;
    }

    /**
     * Serves the filter from a memory-mapped file in the {@link #localSnapshotDirectory} instead of
     * a {@code long[]} on the heap; default false. Each new version is written to a file there
     * (chunk by verified chunk, or, for a delta, a copy of the served file checked while copying
     * with the delta applied in the file), flushed, renamed into place and mapped read-only only
     * after its SHA-256 matched the manifest; lookups then answer exactly as from the heap. A swap
     * holds one 1 MiB chunk on the heap instead of a second filter; the filter's bits are page
     * cache, which the kernel may reclaim and read back from the file. The served file and the one
     * being written are the only payload files on disk: a version larger than the directory's
     * usable space is not fetched, and the previous file is deleted after the swap (its blocks are
     * freed when the JVM collects the old mapping). A directory that is full, missing or not
     * writable fails the load with reason {@code DISK}; the served filter stays.
     *
     * <p>With this on and no {@link #maxSnapshotBytes}, the size limit is the format's (not a
     * quarter of the heap); set {@link #maxSnapshotBytes} to bound the disk a version may take. Use
     * a disk-backed directory (an {@code emptyDir} without {@code medium: Memory}): on tmpfs the
     * file is memory that cannot be reclaimed.
     */
    public Builder<K> memoryMapped(boolean enabled) {
      this.memoryMapped = enabled;
      return this;
    }

    /**
     * How deltas that only add keys are applied; default on, with the payload checked at most every
     * {@link BloomFilterWatcher#DEFAULT_IN_PLACE_CHECK_INTERVAL}.
     *
     * <p>A change stream publishes a delta every second or two. Swapping each in copies the whole
     * filter and hashes the whole payload (seconds of CPU at 1B keys); instead, a delta of the
     * stable manifest's chain whose every changed bit is 0 in the served version is set in the
     * served bits in place, with atomic ORs, in time proportional to the delta ({@link
     * LiveBloomFilter#deltasAppliedInPlace()}). Before a bit is set, every chunk of the delta is
     * fetched and its size and SHA-256 checked, and, with trusted keys, the manifest's signature.
     * The SHA-256 of the whole payload that results is checked on a copy of the bits, taken between
     * two deltas and hashed on a background thread, at most once per {@code checkInterval} and
     * within {@code checkInterval} of the first delta applied in place after the last verified
     * version; a mismatch reloads the version from scratch ({@link
     * LiveBloomFilter#inPlaceDigestMismatches()}). A delta that clears bits, a canary, a pinned or
     * withdrawn version, a memory-mapped filter and the first version after the local snapshot are
     * swapped in and verified whole as before.
     *
     * @param checkInterval the least time between two payload checks, up to {@link
     *     BloomFilterWatcher#MAX_IN_PLACE_CHECK_INTERVAL}; {@link Duration#ZERO} turns in-place
     *     deltas off (every version is swapped in and its whole payload verified before it is
     *     served)
     * @throws IllegalArgumentException if {@code checkInterval} is negative or above the maximum
     */
    public Builder<K> inPlaceDeltas(Duration checkInterval) {
      Objects.requireNonNull(checkInterval, "checkInterval");
      if (checkInterval.isNegative() || checkInterval.compareTo(MAX_IN_PLACE_CHECK_INTERVAL) > 0) {
        throw new IllegalArgumentException(
            "checkInterval must be in 0.."
                + MAX_IN_PLACE_CHECK_INTERVAL
                + ", got "
                + checkInterval);
      }
      this.inPlaceCheckInterval = checkInterval;
      return this;
    }

    /** How the mapped mode learns the directory's usable space. Not API: the seam for tests. */
    Builder<K> usableSpace(MappedPayloads.UsableSpace usableSpace) {
      this.usableSpace = Objects.requireNonNull(usableSpace, "usableSpace");
      return this;
    }

    /**
     * The largest number of chunks a manifest may list; more is refused ({@code TOO_LARGE}) before
     * any is fetched. Default {@value SnapshotLimits#DEFAULT_MAX_CHUNKS}.
     *
     * @throws IllegalArgumentException if {@code chunks} is not positive
     */
    public Builder<K> maxChunks(int chunks) {
      this.limits = limits.withMaxChunks(chunks);
      return this;
    }

    /**
     * Trusts manifests signed with the private key of {@code key} (Ed25519, e.g. read with {@link
     * Ed25519Keys#readPublicKey(String)}). Call once per key: several keys may be trusted at once,
     * for rotation. With at least one trusted key, a manifest (also one in the local snapshot
     * directory) is loaded only if its {@code manifest.sig} verifies with a trusted key for this
     * namespace and its version is above the one served; otherwise it is refused before any chunk
     * is fetched, with a {@link io.bloomoperator.snapshot.SnapshotRefusedException} of reason
     * {@code UNSIGNED}, {@code UNTRUSTED_KEY}, {@code BAD_SIGNATURE} or {@code ROLLBACK}. Without a
     * trusted key (the default), signatures are ignored.
     *
     * @throws IllegalArgumentException if {@code key} is not an Ed25519 public key
     */
    public Builder<K> trustedKey(PublicKey key) {
      Ed25519Keys.keyId(key); // validates
      trustedKeys.add(key);
      return this;
    }

    /**
     * Refuses a manifest whose signed {@code createdAt} is more than {@code age} before this
     * reader's clock, before any chunk is fetched, with a {@link
     * io.bloomoperator.snapshot.SnapshotRefusedException} of reason {@code TOO_OLD}; the served
     * filter (if any) keeps serving. Trusted keys alone refuse a replayed old version only while a
     * newer one is served; a reader that starts (or restarts) holds nothing to compare with, and
     * this bound is its defence against someone who restores an old, genuinely signed manifest and
     * its chunks. The operator re-stamps an unchanged version at least every {@code
     * BLOOM_MANIFEST_RESTAMP_INTERVAL} (see docs/configuration.md): choose {@code age} well above
     * that, plus the clock skew between the operator and readers. Requires at least one {@link
     * #trustedKey}: an unsigned {@code createdAt} can be set to anything. Does not apply to the
     * local snapshot directory, which holds only what this reader verified and loaded before.
     *
     * @throws IllegalArgumentException if {@code age} is not positive
     */
    public Builder<K> maxManifestAge(Duration age) {
      if (age.isNegative() || age.isZero()) {
        throw new IllegalArgumentException("maxManifestAge must be positive, got " + age);
      }
      this.maxManifestAge = age;
      return this;
    }

    /**
     * Reads the chunks of manifests that name the object store {@code name} from {@code store} (for
     * S3-compatible stores, {@code S3ObjectStore} of the module {@code bloom-sidecar-s3}). The
     * manifest carries only the name: endpoint, bucket and credentials are what this application
     * configured. A manifest naming a store that is not registered here is refused before anything
     * is fetched, with a {@link io.bloomoperator.snapshot.SnapshotRefusedException} of reason
     * {@code UNKNOWN_STORE}, and the served filter stays; manifests without a store read ConfigMaps
     * as always. The store is not closed by the filter: it belongs to the caller.
     *
     * @throws IllegalArgumentException if {@code name} is not a store name (a DNS label) or is
     *     already registered
     */
    public Builder<K> objectStore(String name, ObjectStore store) {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(store, "store");
      if (!StoreObjectKeys.isStoreName(name)) {
        throw new IllegalArgumentException(
            "object store name must be a DNS label (at most 63 characters of a-z, 0-9 and '-')");
      }
      if (objectStores.putIfAbsent(name, store) != null) {
        throw new IllegalArgumentException("object store '" + name + "' is already registered");
      }
      return this;
    }

    /** The clock the maximum manifest age is measured with. Not API: the seam for tests. */
    Builder<K> clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The fraction of the current backoff cap each retry waits (uniform in [0, 1] by default: full
     * jitter). Not API: the seam for tests that need a retry to wait its whole cap.
     */
    Builder<K> jitter(DoubleSupplier fraction) {
      this.jitter = Objects.requireNonNull(fraction, "fraction");
      return this;
    }

    /**
     * The pod this reader runs in, for its reader report (docs/reader-protocol.md): the operator
     * then counts it in the filter's {@code status.readers}. Default: from the environment
     * variables {@value BloomFilterWatcher#ENV_POD_NAME} and {@value
     * BloomFilterWatcher#ENV_POD_UID} (the downward API's {@code metadata.name} and {@code
     * metadata.uid}); without them the reader does not report and says so once in its log. The pod
     * must be in the filter's namespace ({@value BloomFilterWatcher#ENV_POD_NAMESPACE}, if set, is
     * checked). Reporting needs the optional RBAC rule of docs/reader-protocol.md; refused, the
     * reader stops reporting, logs it once and otherwise works as without it. The pod name also
     * decides whether this reader is in a filter's canary share (docs/reader-protocol.md); a reader
     * without one always serves the stable version.
     *
     * @throws IllegalArgumentException if name is not a Kubernetes name or uid is empty
     */
    public Builder<K> podIdentity(String name, String uid) {
      this.podName = requireName(name, "pod name", 253);
      this.podUid = requireNonBlank(uid, "pod uid");
      return this;
    }

    /** Whether to write a reader report at all; default true (when the pod is known). */
    public Builder<K> readerReports(boolean enabled) {
      this.report = enabled;
      return this;
    }

    /**
     * Heartbeat of the reader report: rewritten every 0.8 to 1.2 times {@code interval}, and
     * counted as silent by the operator after 3 times it without one. Default 60 s: about 17 writes
     * per second for 1,000 readers.
     *
     * @throws IllegalArgumentException if {@code interval} is under one second or over 20 minutes
     */
    public Builder<K> readerReportInterval(Duration interval) {
      if (interval.compareTo(Duration.ofSeconds(1)) < 0
          || interval.compareTo(Duration.ofMinutes(20)) > 0) {
        throw new IllegalArgumentException(
            "readerReportInterval must be between 1 s and 20 min, got " + interval);
      }
      this.reportInterval = interval;
      return this;
    }

    /** Where the pod identity is read from. Not API: the seam for tests. */
    Builder<K> environment(Map<String, String> environment) {
      this.environment = Objects.requireNonNull(environment, "environment");
      return this;
    }

    /** Adds a listener for swaps and failures (called on the watcher thread). */
    public Builder<K> listener(BloomFilterListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Told of every manifest informer the watcher creates (the first and each restart), before it
     * starts. Not API: the seam through which tests count restarts and stop an informer the way
     * fabric8 does when it gives up.
     */
    Builder<K> onInformerCreated(Consumer<SharedIndexInformer<ConfigMap>> observer) {
      this.onInformerCreated = Objects.requireNonNull(observer, "observer");
      return this;
    }

    /**
     * Creates the filter and starts watching. Returns without waiting for the API server; a valid
     * local snapshot, if configured, is already being served when this returns.
     *
     * @throws IllegalStateException if {@link #maxManifestAge} is set without a {@link
     *     #trustedKey}, {@link #memoryMapped} or {@link #shareLocalSnapshot} without a {@link
     *     #localSnapshotDirectory}, or both of those two
     */
    public LiveBloomFilter<K> start() {
      if (maxManifestAge != null && trustedKeys.isEmpty()) {
        throw new IllegalStateException(
            "maxManifestAge needs a trustedKey: an unsigned createdAt can be set to anything");
      }
      if (memoryMapped && localSnapshotDirectory == null) {
        throw new IllegalStateException(
            "memoryMapped needs a localSnapshotDirectory to keep the mapped file in");
      }
      if (sharedLocalSnapshotInterval != null && localSnapshotDirectory == null) {
        throw new IllegalStateException(
            "shareLocalSnapshot needs a localSnapshotDirectory to share");
      }
      if (sharedLocalSnapshotInterval != null && memoryMapped) {
        throw new IllegalStateException(
            "shareLocalSnapshot is for heap mode: a memoryMapped reader rewrites its file for every"
                + " version");
      }
      SnapshotLimits limits =
          memoryMapped && !maxSnapshotBytesSet
              ? this.limits.withMaxTotalBytes(SnapshotLimits.FORMAT_MAX_BYTES)
              : this.limits;
      Acceptance acceptance =
          new Acceptance(
              namespace,
              filterName,
              keyType.keyType(),
              limits,
              TrustedKeys.of(trustedKeys),
              maxManifestAge,
              objectStores.keySet());
      LocalSnapshotCache cache =
          localSnapshotDirectory == null
              ? null
              : new LocalSnapshotCache(
                  localSnapshotDirectory,
                  acceptance,
                  memoryMapped ? usableSpace : null,
                  sharedLocalSnapshotInterval != null);
      ReaderCounters counters = new ReaderCounters();
      LocalAdds<K> localAdds =
          new LocalAdds<>(
              keyType, localAddsMaxEntries, localAddsTtl, localAddsMaxKeyLength, nanoTime);
      List<BloomFilterListener> withCounters = new ArrayList<>(listeners.size() + 2);
      withCounters.add(counters); // first: the application's listeners see up-to-date counters
      withCounters.add(localAdds); // drops what the new version shows, right after the swap
      withCounters.addAll(listeners);
      WatcherThread thread = new WatcherThread("bloom-watch-" + namespace + "/" + filterName);
      ReaderReporter reporter = reporter(thread);
      if (reporter != null) {
        withCounters.add(reporter);
      }
      ManifestInformer informer =
          new ManifestInformer(
              client,
              namespace,
              SnapshotNames.manifestName(filterName),
              thread,
              new Backoff(backoffInitial, backoffMax, jitter),
              onInformerCreated);
      WatchLoop loop =
          new WatchLoop(
              acceptance,
              informer,
              new SnapshotFetcher(
                  SnapshotConfigMaps.chunkSource(client, namespace),
                  namespace,
                  filterName,
                  objectStores,
                  cache == null ? null : cache.mapped()),
              cache,
              new Pacing(
                  thread,
                  new Backoff(backoffInitial, backoffMax, jitter),
                  resync,
                  clock,
                  sharedLocalSnapshotInterval == null
                      ? Duration.ZERO
                      : sharedLocalSnapshotInterval),
              new Listeners(withCounters),
              canaryPodName(),
              inPlaceCheckInterval);
      counters.attach(loop);
      localAdds.attach(loop);
      LiveBloomFilter<K> filter =
          new LiveBloomFilter<>(
              namespace, filterName, keyType, beforeFirstSnapshot, loop, counters, localAdds);
      loop.start();
      if (localAdds.enabled()) {
        long interval = localAdds.sweepInterval().toNanos();
        thread.scheduleWithFixedDelay(localAdds::sweepServed, interval, TimeUnit.NANOSECONDS);
      }
      if (reporter != null) {
        reporter.start();
      }
      return filter;
    }

    /**
     * The pod name that decides this reader's canary share (docs/reader-protocol.md), or null: a
     * reader that does not know its pod stays on the stable version.
     */
    private String canaryPodName() {
      String name = podName != null ? podName : environment.get(ENV_POD_NAME);
      return name == null || name.isBlank() ? null : name;
    }

    /** The reader report's writer, or null (and a log line saying why) when it cannot report. */
    private ReaderReporter reporter(WatcherThread thread) {
      if (!report) {
        return null;
      }
      String name = podName != null ? podName : environment.get(ENV_POD_NAME);
      String uid = podName != null ? podUid : environment.get(ENV_POD_UID);
      String podNamespace = environment.get(ENV_POD_NAMESPACE);
      if (name == null || name.isBlank() || uid == null || uid.isBlank()) {
        REPORT_LOG.info(
            "{}/{}: not reporting which version this pod serves: set {} and {} from the downward"
                + " API (docs/reader-protocol.md)",
            namespace,
            filterName,
            ENV_POD_NAME,
            ENV_POD_UID);
        return null;
      }
      if (podNamespace != null && !podNamespace.isBlank() && !podNamespace.equals(namespace)) {
        REPORT_LOG.info(
            "{}/{}: not reporting which version this pod serves: the pod is in namespace {};"
                + " reports are counted only from pods in the filter's namespace",
            namespace,
            filterName,
            podNamespace);
        return null;
      }
      return new ReaderReporter(
          client,
          new ReaderReporter.PodIdentity(name, uid),
          namespace,
          filterName,
          thread,
          reportInterval,
          jitter,
          clock);
    }

    private static String requireNonBlank(String value, String what) {
      if (value == null || value.isBlank()) {
        throw new IllegalArgumentException(what + " must not be empty");
      }
      return value;
    }
  }
}
