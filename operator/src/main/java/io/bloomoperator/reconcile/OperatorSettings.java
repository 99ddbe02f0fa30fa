package io.bloomoperator.reconcile;

import static io.bloomoperator.settings.EnvNumbers.positive;
import static io.bloomoperator.settings.EnvNumbers.positiveOrZero;

import io.bloomoperator.api.Durations;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.SecretAccess;
import java.time.Duration;
import java.util.Map;

/**
 * Operator-wide limits and policies, from environment variables (see docs/configuration.md). They
 * are the administrator's: no BloomFilter field can raise them.
 *
 * @param maxSnapshotBytes largest snapshot the operator publishes for one filter; bigger filters
 *     get Ready=False/SnapshotTooLarge before any bit array is allocated
 * @param maxStoreSnapshotBytes the same bound for filters whose chunks go to an object store
 *     (BLOOM_MAX_STORE_SNAPSHOT_BYTES): etcd does not bound them, only the operator's heap does
 * @param maxMalformedKeys lines per build that may fail to parse before the build fails
 * @param maxNamespaceBytes total bytes of the published snapshots of all filters of one namespace;
 *     a publish that would exceed it gets Ready=False/NamespaceQuotaExceeded
 * @param minPublishInterval shortest time between two publishes of one filter; a rebuild asked for
 *     earlier waits
 * @param minRefreshInterval shortest refreshInterval honoured (also enforced by the CRD; this
 *     covers resources admitted by an older CRD)
 * @param maxConcurrentBuilds builds running at once; the heap must hold this many bit arrays of
 *     {@code maxSnapshotBytes}
 * @param secretAccess which Secrets of its namespace a BloomFilter may use
 * @param http where http sources may connect and what one may cost
 * @param signingKey the Secret holding the key that signs every published manifest, or null to
 *     publish unsigned manifests (BLOOM_SIGNING_KEY_SECRET)
 * @param deltas when a new version is published as a delta and when as a whole snapshot
 * @param jdbc where jdbc sources may connect and what one may cost
 * @param builds how much of the shared build capacity one build and one namespace may hold
 * @param writes bytes a namespace and a filter may write to etcd per hour, and the most chunks a
 *     version is cut into
 */
public record OperatorSettings(
    long maxSnapshotBytes,
    long maxStoreSnapshotBytes,
    long maxMalformedKeys,
    long maxNamespaceBytes,
    Duration minPublishInterval,
    Duration minRefreshInterval,
    int maxConcurrentBuilds,
    SecretAccess.Mode secretAccess,
    HttpSourceSettings http,
    SigningKeySecret signingKey,
    DeltaPolicy deltas,
    JdbcSourceSettings jdbc,
    BuildLimits builds,
    WriteBudget.Limits writes) {

  /** 64 MiB: about 53M keys at 1 %, 64 chunk ConfigMaps, one etcd write per chunk. */
  public static final long DEFAULT_MAX_SNAPSHOT_BYTES = 64L * 1024 * 1024;

  /**
   * Arrays of one store-backed snapshot's size one build may hold at once: the new bits, the
   * published version's bits read back to diff a delta against, and the payload they are decoded
   * from.
   */
  static final int ARRAYS_PER_STORE_BUILD = 3;

  public static final long DEFAULT_MAX_NAMESPACE_BYTES = 256L * 1024 * 1024;
  public static final Duration DEFAULT_MIN_PUBLISH_INTERVAL = Duration.ofSeconds(10);
  public static final Duration DEFAULT_MIN_REFRESH_INTERVAL = Duration.ofSeconds(10);
  public static final int DEFAULT_MAX_CONCURRENT_BUILDS = 2;

  public OperatorSettings {
    if (maxSnapshotBytes < 1
        || maxStoreSnapshotBytes < 1
        || maxNamespaceBytes < 1
        || maxConcurrentBuilds < 1) {
      throw new IllegalArgumentException("snapshot, namespace and build limits must be positive");
    }
    if (http == null
        || jdbc == null
        || secretAccess == null
        || deltas == null
        || builds == null
        || writes == null) {
      throw new IllegalArgumentException(
          "http and jdbc source settings, secret access, the delta policy, build and write"
              + " limits are required");
    }
    if (maxMalformedKeys < 0
        || minPublishInterval.isNegative()
        || minRefreshInterval.isNegative()) {
      throw new IllegalArgumentException("limits must not be negative");
    }
  }

  /**
   * The default bound of store-backed snapshots: what the heap holds when every build slot holds
   * {@link #ARRAYS_PER_STORE_BUILD} arrays of it, and never below the ConfigMap bound. A 768 MiB
   * heap (the installs' 1 GiB limit at MaxRAMPercentage=75) and 2 builds give 128 MiB: 100M keys at
   * 1 % (114 MiB).
   */
  static long defaultMaxStoreSnapshotBytes(long maxHeap, int builds, long maxSnapshotBytes) {
    return Math.max(maxSnapshotBytes, maxHeap / ((long) ARRAYS_PER_STORE_BUILD * builds));
  }

  /** The bound of one filter's snapshot: the store's when its chunks go to an object store. */
  public long maxSnapshotBytes(boolean inObjectStore) {
    return inObjectStore ? maxStoreSnapshotBytes : maxSnapshotBytes;
  }

  /** The defaults, as an operator started without any setting has them. */
  public static OperatorSettings defaults() {
    return fromEnvironment(Map.of());
  }

  /**
   * Reads BLOOM_MAX_SNAPSHOT_BYTES, BLOOM_MAX_STORE_SNAPSHOT_BYTES, BLOOM_MAX_MALFORMED_KEYS,
   * BLOOM_MAX_NAMESPACE_BYTES, BLOOM_MIN_PUBLISH_INTERVAL, BLOOM_MIN_REFRESH_INTERVAL,
   * BLOOM_MAX_CONCURRENT_BUILDS, BLOOM_SECRET_ACCESS, the http source settings ({@link
   * HttpSourceSettings#fromEnvironment}), the signing key ({@link
   * SigningKeySecret#fromEnvironment}), the delta policy ({@link DeltaPolicy#fromEnvironment}), the
   * jdbc source settings ({@link JdbcSourceSettings#fromEnvironment}), the build limits ({@link
   * BuildLimits#fromEnvironment}) and the write limits ({@link #writeLimits}), falling back to the
   * defaults.
   *
   * @throws IllegalArgumentException naming the variable that is not valid
   */
  public static OperatorSettings fromEnvironment(Map<String, String> env) {
    long maxSnapshotBytes = positive(env, "BLOOM_MAX_SNAPSHOT_BYTES", DEFAULT_MAX_SNAPSHOT_BYTES);
    int builds =
        (int)
            Math.min(
                Integer.MAX_VALUE,
                positive(env, "BLOOM_MAX_CONCURRENT_BUILDS", DEFAULT_MAX_CONCURRENT_BUILDS));
    return new OperatorSettings(
        maxSnapshotBytes,
        positive(
            env,
            "BLOOM_MAX_STORE_SNAPSHOT_BYTES",
            defaultMaxStoreSnapshotBytes(
                Runtime.getRuntime().maxMemory(), builds, maxSnapshotBytes)),
        positiveOrZero(env, "BLOOM_MAX_MALFORMED_KEYS", 0),
        positive(env, "BLOOM_MAX_NAMESPACE_BYTES", DEFAULT_MAX_NAMESPACE_BYTES),
        duration(env, "BLOOM_MIN_PUBLISH_INTERVAL", DEFAULT_MIN_PUBLISH_INTERVAL),
        duration(env, "BLOOM_MIN_REFRESH_INTERVAL", DEFAULT_MIN_REFRESH_INTERVAL),
        builds,
        secretAccess(env, "BLOOM_SECRET_ACCESS"),
        HttpSourceSettings.fromEnvironment(env),
        SigningKeySecret.fromEnvironment(env, SigningKeySecret.SERVICE_ACCOUNT_NAMESPACE),
        DeltaPolicy.fromEnvironment(env),
        JdbcSourceSettings.fromEnvironment(env),
        BuildLimits.fromEnvironment(env),
        writeLimits(env));
  }

  /**
   * Reads BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR, BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR and
   * BLOOM_MAX_CHUNKS_PER_VERSION.
   */
  static WriteBudget.Limits writeLimits(Map<String, String> env) {
    return new WriteBudget.Limits(
        positive(
            env,
            "BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR",
            WriteBudget.Limits.DEFAULT_NAMESPACE_BYTES_PER_HOUR),
        positive(
            env,
            "BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR",
            WriteBudget.Limits.DEFAULT_FILTER_BYTES_PER_HOUR),
        (int)
            Math.min(
                100_000,
                positive(
                    env,
                    "BLOOM_MAX_CHUNKS_PER_VERSION",
                    WriteBudget.Limits.DEFAULT_MAX_CHUNKS_PER_VERSION)));
  }

  /** These settings with manifests signed by the key in {@code secret} (null: unsigned). */
  public OperatorSettings withSigningKey(SigningKeySecret secret) {
    return new OperatorSettings(
        maxSnapshotBytes,
        maxStoreSnapshotBytes,
        maxMalformedKeys,
        maxNamespaceBytes,
        minPublishInterval,
        minRefreshInterval,
        maxConcurrentBuilds,
        secretAccess,
        http,
        secret,
        deltas,
        jdbc,
        builds,
        writes);
  }

  /** These settings with other write limits. */
  public OperatorSettings withWrites(WriteBudget.Limits limits) {
    return new OperatorSettings(
        maxSnapshotBytes,
        maxStoreSnapshotBytes,
        maxMalformedKeys,
        maxNamespaceBytes,
        minPublishInterval,
        minRefreshInterval,
        maxConcurrentBuilds,
        secretAccess,
        http,
        signingKey,
        deltas,
        jdbc,
        builds,
        limits);
  }

  /** These settings with another delta policy. */
  public OperatorSettings withDeltas(DeltaPolicy policy) {
    return new OperatorSettings(
        maxSnapshotBytes,
        maxStoreSnapshotBytes,
        maxMalformedKeys,
        maxNamespaceBytes,
        minPublishInterval,
        minRefreshInterval,
        maxConcurrentBuilds,
        secretAccess,
        http,
        signingKey,
        policy,
        jdbc,
        builds,
        writes);
  }

  private static SecretAccess.Mode secretAccess(Map<String, String> env, String name) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return SecretAccess.Mode.ANNOTATION;
    }
    try {
      return SecretAccess.Mode.parse(raw);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + " " + e.getMessage(), e);
    }
  }

  /** A duration such as {@code 30s}; {@code 0} or {@code 0s} switches the limit off. */
  private static Duration duration(Map<String, String> env, String name, Duration fallback) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    String text = raw.strip();
    if (text.matches("0+(\\.0+)?(ms|s|m|h)?")) {
      return Duration.ZERO;
    }
    try {
      return Durations.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }

  /** These settings with other http source settings. */
  public OperatorSettings withHttp(HttpSourceSettings settings) {
    return new OperatorSettings(
        maxSnapshotBytes,
        maxStoreSnapshotBytes,
        maxMalformedKeys,
        maxNamespaceBytes,
        minPublishInterval,
        minRefreshInterval,
        maxConcurrentBuilds,
        secretAccess,
        settings,
        signingKey,
        deltas,
        jdbc,
        builds,
        writes);
  }

  /** These settings with other jdbc source settings. */
  public OperatorSettings withJdbc(JdbcSourceSettings settings) {
    return new OperatorSettings(
        maxSnapshotBytes,
        maxStoreSnapshotBytes,
        maxMalformedKeys,
        maxNamespaceBytes,
        minPublishInterval,
        minRefreshInterval,
        maxConcurrentBuilds,
        secretAccess,
        http,
        signingKey,
        deltas,
        settings,
        builds,
        writes);
  }
}
