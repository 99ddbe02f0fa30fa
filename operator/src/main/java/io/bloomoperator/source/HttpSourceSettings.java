package io.bloomoperator.source;

import static io.bloomoperator.env.EnvNumbers.positive;
import static io.bloomoperator.env.EnvNumbers.positiveOrZero;

import io.bloomoperator.api.Durations;
import java.time.Duration;
import java.util.Map;

/**
 * What any http source may reach and cost, set by the operator's administrator (environment
 * variables, see docs/configuration.md); a BloomFilter cannot raise these limits.
 *
 * @param egress which addresses may be connected to ({@code BLOOM_HTTP_ALLOW}, {@code
 *     BLOOM_HTTP_DENY})
 * @param maxLineBytes longest line of the body; a longer one fails the read before it is held
 *     ({@code BLOOM_HTTP_MAX_LINE_BYTES})
 * @param maxBodyBytes most bytes of the body after decompression; a gzip bomb fails there ({@code
 *     BLOOM_HTTP_MAX_BODY_BYTES})
 * @param maxReadTime longest a request may take from DNS to the last byte of the body, redirects
 *     included, however steadily the server trickles ({@code BLOOM_HTTP_MAX_READ_TIME})
 * @param partitionConnections the extra connections sources with {@code urls} may hold at once, and
 *     one namespace's share of them ({@code BLOOM_HTTP_PARTITION_CONNECTIONS}, {@code
 *     BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE}); one table for every source of the operator
 */
public record HttpSourceSettings(
    EgressPolicy egress,
    int maxLineBytes,
    long maxBodyBytes,
    Duration maxReadTime,
    PartitionShares partitionConnections) {

  /** Keys are IDs; 64 KiB is far beyond any ID and small enough to hold per reconcile thread. */
  public static final int DEFAULT_MAX_LINE_BYTES = 64 * 1024;

  /** 8 GiB: several times the largest exports seen (100M keys, 1-2 GB). */
  public static final long DEFAULT_MAX_BODY_BYTES = 8L * 1024 * 1024 * 1024;

  /** 2 GB in 10 minutes needs 3.4 MB/s, far below what in-cluster or object-store links give. */
  public static final Duration DEFAULT_MAX_READ_TIME = Duration.ofMinutes(10);

  /** Extra connections of URL lists across the operator: as for jdbc partitions. */
  public static final int DEFAULT_PARTITION_CONNECTIONS = 8;

  /**
   * Extra connections of one namespace's URL lists: with the build's own, 4, the namespace's share
   * of one host's connections ({@link HostShares#PER_NAMESPACE}), so a list on one host does not
   * wait for its own requests.
   */
  public static final int DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE =
      HostShares.PER_NAMESPACE - 1;

  /** Settings with the default partition connection shares (a table of their own). */
  public HttpSourceSettings(
      EgressPolicy egress, int maxLineBytes, long maxBodyBytes, Duration maxReadTime) {
    this(
        egress,
        maxLineBytes,
        maxBodyBytes,
        maxReadTime,
        new PartitionShares(
            DEFAULT_PARTITION_CONNECTIONS, DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE));
  }

  public HttpSourceSettings {
    if (partitionConnections == null) {
      throw new IllegalArgumentException("partition connection shares are required");
    }
    if (egress == null) {
      throw new IllegalArgumentException("egress policy is required");
    }
    if (maxLineBytes < 1
        || maxBodyBytes < 1
        || maxReadTime == null
        || maxReadTime.isNegative()
        || maxReadTime.isZero()) {
      throw new IllegalArgumentException("http source limits must be positive");
    }
  }

  /** The default policy and limits. */
  public static HttpSourceSettings defaults() {
    return new HttpSourceSettings(
        EgressPolicy.defaults(),
        DEFAULT_MAX_LINE_BYTES,
        DEFAULT_MAX_BODY_BYTES,
        DEFAULT_MAX_READ_TIME);
  }

  /**
   * Reads BLOOM_HTTP_ALLOW, BLOOM_HTTP_DENY, BLOOM_HTTP_MAX_LINE_BYTES, BLOOM_HTTP_MAX_BODY_BYTES,
   * BLOOM_HTTP_MAX_READ_TIME, BLOOM_HTTP_PARTITION_CONNECTIONS and
   * BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE, falling back to the defaults.
   *
   * @throws IllegalArgumentException when a value is invalid: the operator does not start
   */
  public static HttpSourceSettings fromEnvironment(Map<String, String> env) {
    return new HttpSourceSettings(
        EgressPolicy.of(env.get("BLOOM_HTTP_ALLOW"), env.get("BLOOM_HTTP_DENY")),
        (int)
            Math.min(
                Integer.MAX_VALUE - 8,
                positive(env, "BLOOM_HTTP_MAX_LINE_BYTES", DEFAULT_MAX_LINE_BYTES)),
        positive(env, "BLOOM_HTTP_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES),
        duration(env, "BLOOM_HTTP_MAX_READ_TIME", DEFAULT_MAX_READ_TIME),
        new PartitionShares(
            shareSetting(env, "BLOOM_HTTP_PARTITION_CONNECTIONS", DEFAULT_PARTITION_CONNECTIONS),
            shareSetting(
                env,
                "BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE",
                DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE)));
  }

  private static int shareSetting(Map<String, String> env, String name, int fallback) {
    return (int) Math.min(1024, positiveOrZero(env, name, fallback));
  }

  /** These settings with another egress policy. */
  public HttpSourceSettings withEgress(EgressPolicy policy) {
    return new HttpSourceSettings(
        policy, maxLineBytes, maxBodyBytes, maxReadTime, partitionConnections);
  }

  /** These settings with other limits. */
  public HttpSourceSettings withLimits(int lineBytes, long bodyBytes, Duration readTime) {
    return new HttpSourceSettings(egress, lineBytes, bodyBytes, readTime, partitionConnections);
  }

  /** These settings with another table of partition connections (for tests). */
  HttpSourceSettings withPartitionConnections(int total, int perNamespace) {
    return new HttpSourceSettings(
        egress, maxLineBytes, maxBodyBytes, maxReadTime, new PartitionShares(total, perNamespace));
  }

  /** The duration in environment variable {@code name}, or {@code fallback} when unset. */
  static Duration duration(Map<String, String> env, String name, Duration fallback) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    try {
      return Durations.parse(raw.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }
}
