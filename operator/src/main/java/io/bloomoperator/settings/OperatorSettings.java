package io.bloomoperator.settings;

import static io.bloomoperator.env.EnvNumbers.positive;
import static io.bloomoperator.env.EnvNumbers.positiveOrZero;

import io.bloomoperator.changes.StreamLimits;
import io.bloomoperator.env.EnvDurations;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.SecretAccess;
import java.time.Duration;
import java.util.Map;

/**
 * Operator-wide limits and policies, from environment variables (see docs/configuration.md), in
 * groups named after what they govern. They are the administrator's: no BloomFilter field can raise
 * them. Each group checks its own values; {@link #toBuilder()} changes some (tests do).
 *
 * @param snapshots how big one filter's snapshot and one namespace's snapshots may be
 * @param publishing how often, how signed and at what etcd cost a new version is written
 * @param sources what a build may read and where from
 * @param builds how many builds run at once and what one build and one namespace may hold
 */
public record OperatorSettings(
    Snapshots snapshots, Publishing publishing, Sources sources, Builds builds) {

  public OperatorSettings {
    if (snapshots == null || publishing == null || sources == null || builds == null) {
      throw new IllegalArgumentException("every group of settings is required");
    }
  }

  /** The defaults, as an operator started without any setting has them. */
  public static OperatorSettings defaults() {
    return fromEnvironment(Map.of());
  }

  /** A builder that starts from the {@link #defaults()}. */
  public static SettingsBuilder builder() {
    return defaults().toBuilder();
  }

  /**
   * Reads each group's variables ({@link Snapshots#fromEnvironment}, {@link
   * Publishing#fromEnvironment}, {@link Sources#fromEnvironment}, {@link Builds#fromEnvironment}),
   * falling back to the defaults.
   *
   * @throws IllegalArgumentException naming the variable that is not valid
   */
  public static OperatorSettings fromEnvironment(Map<String, String> env) {
    Builds builds = Builds.fromEnvironment(env);
    return new OperatorSettings(
        Snapshots.fromEnvironment(env, Runtime.getRuntime().maxMemory(), builds.maxConcurrent()),
        Publishing.fromEnvironment(env),
        Sources.fromEnvironment(env),
        builds);
  }

  /** A builder that starts from these settings. */
  public SettingsBuilder toBuilder() {
    return new SettingsBuilder(this);
  }

  /**
   * How big snapshots may be.
   *
   * @param maxBytes largest snapshot the operator publishes for one filter; bigger filters get
   *     Ready=False/SnapshotTooLarge before any bit array is allocated (BLOOM_MAX_SNAPSHOT_BYTES)
   * @param maxStoreBytes the same bound for filters whose chunks go to an object store
   *     (BLOOM_MAX_STORE_SNAPSHOT_BYTES): etcd does not bound them, only the operator's heap does
   * @param maxNamespaceBytes total bytes of the published snapshots of all filters of one
   *     namespace; a publish that would exceed it gets Ready=False/NamespaceQuotaExceeded
   *     (BLOOM_MAX_NAMESPACE_BYTES)
   */
  public record Snapshots(long maxBytes, long maxStoreBytes, long maxNamespaceBytes) {

    /** 64 MiB: about 53M keys at 1 %, 64 chunk ConfigMaps, one etcd write per chunk. */
    public static final long DEFAULT_MAX_BYTES = 64L * 1024 * 1024;

    public static final long DEFAULT_MAX_NAMESPACE_BYTES = 256L * 1024 * 1024;

    /**
     * Arrays of one store-backed snapshot's size one build may hold at once: the new bits, the
     * published version's bits read back to diff a delta against, and the payload they are decoded
     * from.
     */
    static final int ARRAYS_PER_STORE_BUILD = 3;

    public Snapshots {
      if (maxBytes < 1 || maxStoreBytes < 1 || maxNamespaceBytes < 1) {
        throw new IllegalArgumentException("snapshot and namespace limits must be positive");
      }
    }

    /**
     * The default bound of store-backed snapshots: what the heap holds when every build slot holds
     * {@link #ARRAYS_PER_STORE_BUILD} arrays of it, and never below the ConfigMap bound. A 768 MiB
     * heap (the installs' 1 GiB limit at MaxRAMPercentage=75) and 2 builds give 128 MiB: 100M keys
     * at 1 % (114 MiB).
     */
    static long defaultMaxStoreBytes(long maxHeap, int builds, long maxBytes) {
      return Math.max(maxBytes, maxHeap / ((long) ARRAYS_PER_STORE_BUILD * builds));
    }

    /**
     * Reads BLOOM_MAX_SNAPSHOT_BYTES, BLOOM_MAX_STORE_SNAPSHOT_BYTES (by default sized for {@code
     * builds} builds in {@code maxHeap} bytes) and BLOOM_MAX_NAMESPACE_BYTES.
     */
    static Snapshots fromEnvironment(Map<String, String> env, long maxHeap, int builds) {
      long maxBytes = positive(env, "BLOOM_MAX_SNAPSHOT_BYTES", DEFAULT_MAX_BYTES);
      return new Snapshots(
          maxBytes,
          positive(
              env,
              "BLOOM_MAX_STORE_SNAPSHOT_BYTES",
              defaultMaxStoreBytes(maxHeap, builds, maxBytes)),
          positive(env, "BLOOM_MAX_NAMESPACE_BYTES", DEFAULT_MAX_NAMESPACE_BYTES));
    }
  }

  /**
   * How a new version is written.
   *
   * @param minInterval shortest time between two publishes of one filter; a rebuild asked for
   *     earlier waits (BLOOM_MIN_PUBLISH_INTERVAL; zero: no wait)
   * @param signingKey the Secret holding the key that signs every published manifest, or null to
   *     publish unsigned manifests (BLOOM_SIGNING_KEY_SECRET)
   * @param deltas when a new version is published as a delta and when as a whole snapshot
   * @param writes bytes a namespace and a filter may write to etcd per hour, and the most chunks a
   *     version is cut into
   */
  public record Publishing(
      Duration minInterval,
      SigningKeySecret signingKey,
      DeltaPolicy deltas,
      WriteBudget.Limits writes) {

    public static final Duration DEFAULT_MIN_INTERVAL = Duration.ofSeconds(10);

    public Publishing {
      if (minInterval == null || deltas == null || writes == null) {
        throw new IllegalArgumentException(
            "the publish interval, the delta policy and the write limits are required");
      }
      if (minInterval.isNegative()) {
        throw new IllegalArgumentException("the publish interval must not be negative");
      }
    }

    /**
     * Reads BLOOM_MIN_PUBLISH_INTERVAL, the signing key ({@link SigningKeySecret#fromEnvironment}),
     * the delta policy ({@link DeltaPolicy#fromEnvironment}),
     * BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR, BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR and
     * BLOOM_MAX_CHUNKS_PER_VERSION.
     */
    static Publishing fromEnvironment(Map<String, String> env) {
      return new Publishing(
          EnvDurations.positiveOrZero(env, "BLOOM_MIN_PUBLISH_INTERVAL", DEFAULT_MIN_INTERVAL),
          SigningKeySecret.fromEnvironment(env, SigningKeySecret.SERVICE_ACCOUNT_NAMESPACE),
          DeltaPolicy.fromEnvironment(env),
          new WriteBudget.Limits(
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
                          WriteBudget.Limits.DEFAULT_MAX_CHUNKS_PER_VERSION))));
    }
  }

  /**
   * What a build may read and where from.
   *
   * @param maxMalformedKeys lines per build that may fail to parse before the build fails
   *     (BLOOM_MAX_MALFORMED_KEYS)
   * @param minRefreshInterval shortest refreshInterval honoured (BLOOM_MIN_REFRESH_INTERVAL; also
   *     enforced by the CRD, this covers resources admitted by an older CRD)
   * @param secretAccess which Secrets of its namespace a BloomFilter may use (BLOOM_SECRET_ACCESS)
   * @param http where http sources may connect and what one may cost
   * @param jdbc where jdbc sources may connect and what one may cost
   */
  public record Sources(
      long maxMalformedKeys,
      Duration minRefreshInterval,
      SecretAccess.Mode secretAccess,
      HttpSourceSettings http,
      JdbcSourceSettings jdbc,
      StreamLimits streams) {

    /** Sources with the default change-stream limits. */
    public Sources(
        long maxMalformedKeys,
        Duration minRefreshInterval,
        SecretAccess.Mode secretAccess,
        HttpSourceSettings http,
        JdbcSourceSettings jdbc) {
      this(maxMalformedKeys, minRefreshInterval, secretAccess, http, jdbc, StreamLimits.defaults());
    }

    public static final Duration DEFAULT_MIN_REFRESH_INTERVAL = Duration.ofSeconds(10);

    public Sources {
      if (minRefreshInterval == null
          || secretAccess == null
          || http == null
          || jdbc == null
          || streams == null) {
        throw new IllegalArgumentException(
            "the refresh interval, secret access and http and jdbc source settings are required");
      }
      if (maxMalformedKeys < 0 || minRefreshInterval.isNegative()) {
        throw new IllegalArgumentException("source limits must not be negative");
      }
    }

    /**
     * Reads BLOOM_MAX_MALFORMED_KEYS, BLOOM_MIN_REFRESH_INTERVAL, BLOOM_SECRET_ACCESS, the http
     * source settings ({@link HttpSourceSettings#fromEnvironment}) and the jdbc source settings
     * ({@link JdbcSourceSettings#fromEnvironment}).
     */
    static Sources fromEnvironment(Map<String, String> env) {
      return new Sources(
          positiveOrZero(env, "BLOOM_MAX_MALFORMED_KEYS", 0),
          EnvDurations.positiveOrZero(
              env, "BLOOM_MIN_REFRESH_INTERVAL", DEFAULT_MIN_REFRESH_INTERVAL),
          secretAccess(env, "BLOOM_SECRET_ACCESS"),
          HttpSourceSettings.fromEnvironment(env),
          JdbcSourceSettings.fromEnvironment(env),
          StreamLimits.fromEnvironment(env));
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
  }

  /**
   * How much building the operator does at once.
   *
   * @param maxConcurrent builds running at once; the heap must hold this many bit arrays of {@link
   *     Snapshots#maxBytes()} (BLOOM_MAX_CONCURRENT_BUILDS)
   * @param limits how much of that capacity one build and one namespace may hold
   * @param crashBackoff the wait before building a filter again whose build the operator died in,
   *     doubling per crash in a row up to an hour (BLOOM_BUILD_CRASH_BACKOFF)
   */
  public record Builds(int maxConcurrent, BuildLimits limits, Duration crashBackoff) {

    public static final int DEFAULT_MAX_CONCURRENT = 2;
    public static final Duration DEFAULT_CRASH_BACKOFF = Duration.ofMinutes(1);

    /** The default crash backoff. */
    public Builds(int maxConcurrent, BuildLimits limits) {
      this(maxConcurrent, limits, DEFAULT_CRASH_BACKOFF);
    }

    public Builds {
      if (maxConcurrent < 1) {
        throw new IllegalArgumentException("concurrent builds must be positive");
      }
      if (limits == null) {
        throw new IllegalArgumentException("build limits are required");
      }
      if (crashBackoff == null || crashBackoff.isNegative() || crashBackoff.isZero()) {
        throw new IllegalArgumentException("the crash backoff must be positive");
      }
    }

    /**
     * Reads BLOOM_MAX_CONCURRENT_BUILDS, BLOOM_BUILD_CRASH_BACKOFF and the build limits ({@link
     * BuildLimits#fromEnvironment}).
     */
    static Builds fromEnvironment(Map<String, String> env) {
      return new Builds(
          (int)
              Math.min(
                  Integer.MAX_VALUE,
                  positive(env, "BLOOM_MAX_CONCURRENT_BUILDS", DEFAULT_MAX_CONCURRENT)),
          BuildLimits.fromEnvironment(env),
          EnvDurations.positive(env, "BLOOM_BUILD_CRASH_BACKOFF", DEFAULT_CRASH_BACKOFF));
    }
  }
}
