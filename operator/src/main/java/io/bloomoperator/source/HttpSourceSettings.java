package io.bloomoperator.source;

import static io.bloomoperator.env.EnvNumbers.positive;

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
 */
public record HttpSourceSettings(
    EgressPolicy egress, int maxLineBytes, long maxBodyBytes, Duration maxReadTime) {

  /** Keys are IDs; 64 KiB is far beyond any ID and small enough to hold per reconcile thread. */
  public static final int DEFAULT_MAX_LINE_BYTES = 64 * 1024;

  /** 8 GiB: several times the largest exports seen (100M keys, 1-2 GB). */
  public static final long DEFAULT_MAX_BODY_BYTES = 8L * 1024 * 1024 * 1024;

  /** 2 GB in 10 minutes needs 3.4 MB/s, far below what in-cluster or object-store links give. */
  public static final Duration DEFAULT_MAX_READ_TIME = Duration.ofMinutes(10);

  public HttpSourceSettings {
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
   * Reads BLOOM_HTTP_ALLOW, BLOOM_HTTP_DENY, BLOOM_HTTP_MAX_LINE_BYTES, BLOOM_HTTP_MAX_BODY_BYTES
   * and BLOOM_HTTP_MAX_READ_TIME, falling back to the defaults.
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
        duration(env, "BLOOM_HTTP_MAX_READ_TIME", DEFAULT_MAX_READ_TIME));
  }

  /** These settings with another egress policy. */
  public HttpSourceSettings withEgress(EgressPolicy policy) {
    return new HttpSourceSettings(policy, maxLineBytes, maxBodyBytes, maxReadTime);
  }

  /** These settings with other limits. */
  public HttpSourceSettings withLimits(int lineBytes, long bodyBytes, Duration readTime) {
    return new HttpSourceSettings(egress, lineBytes, bodyBytes, readTime);
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
