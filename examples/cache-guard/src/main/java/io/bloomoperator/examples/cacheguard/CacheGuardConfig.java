package io.bloomoperator.examples.cacheguard;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Settings of the service, normally from environment variables (see {@link #fromEnvironment}).
 *
 * @param filterNamespace namespace of the BloomFilter resource
 * @param filterName name of the BloomFilter resource (keyType Long, keys = product IDs)
 * @param redisUrl e.g. {@code redis://localhost:6379}
 * @param jdbcUrl e.g. {@code jdbc:postgresql://localhost:5432/shop}
 * @param jdbcUser database user (may be null when the URL carries it)
 * @param jdbcPassword database password (may be null)
 * @param port HTTP port; 0 picks a free one
 * @param threads HTTP worker threads, also the database pool size
 * @param productTtl how long a product document stays cached
 * @param notFoundTtl how long a "not found" stays cached
 */
public record CacheGuardConfig(
    String filterNamespace,
    String filterName,
    URI redisUrl,
    String jdbcUrl,
    String jdbcUser,
    String jdbcPassword,
    int port,
    int threads,
    Duration productTtl,
    Duration notFoundTtl) {

  /** Default of {@code BLOOM_FILTER_NAME}. */
  public static final String DEFAULT_FILTER_NAME = "products";

  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  /**
   * Reads:
   *
   * <ul>
   *   <li>{@code BLOOM_FILTER_NAMESPACE} (default {@code defaultNamespace}: the Kubernetes client's
   *       namespace, which in a pod is the pod's own) and {@code BLOOM_FILTER_NAME} (default
   *       {@value #DEFAULT_FILTER_NAME});
   *   <li>{@code REDIS_URL} (default {@code redis://localhost:6379});
   *   <li>{@code JDBC_URL} (required), {@code JDBC_USER}, {@code JDBC_PASSWORD};
   *   <li>{@code PORT} (default 8080), {@code HTTP_THREADS} (default 16);
   *   <li>{@code PRODUCT_TTL} (default {@code 10m}), {@code NOT_FOUND_TTL} (default {@code 30s}),
   *       as {@code 30s}, {@code 10m} or {@code 1h}.
   * </ul>
   *
   * @throws IllegalArgumentException naming the variable that is missing or malformed
   */
  public static CacheGuardConfig fromEnvironment(Map<String, String> env, String defaultNamespace) {
    String jdbcUrl = get(env, "JDBC_URL", null);
    if (jdbcUrl == null) {
      throw new IllegalArgumentException(
          "JDBC_URL is required, e.g. " + "jdbc:postgresql://localhost:5432/shop");
    }
    String namespace = get(env, "BLOOM_FILTER_NAMESPACE", defaultNamespace);
    if (namespace == null) {
      throw new IllegalArgumentException(
          "BLOOM_FILTER_NAMESPACE is required (the Kubernetes "
              + "client has no namespace of its own)");
    }
    return new CacheGuardConfig(
        namespace,
        get(env, "BLOOM_FILTER_NAME", DEFAULT_FILTER_NAME),
        URI.create(get(env, "REDIS_URL", "redis://localhost:6379")),
        jdbcUrl,
        get(env, "JDBC_USER", null),
        get(env, "JDBC_PASSWORD", null),
        integer(env, "PORT", 8080, 0),
        integer(env, "HTTP_THREADS", 16, 1),
        duration(env, "PRODUCT_TTL", "10m"),
        duration(env, "NOT_FOUND_TTL", "30s"));
  }

  private static String get(Map<String, String> env, String name, String fallback) {
    String value = env.get(name);
    return value == null || value.isBlank() ? fallback : value.trim();
  }

  private static int integer(Map<String, String> env, String name, int fallback, int min) {
    String raw = get(env, name, null);
    if (raw == null) {
      return fallback;
    }
    try {
      int value = Integer.parseInt(raw);
      if (value < min) {
        throw new IllegalArgumentException(name + " must be at least " + min + ", got " + raw);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " is not an integer: " + raw, e);
    }
  }

  /** Parses {@code 500ms}, {@code 30s}, {@code 10m} or {@code 1h}. */
  static Duration duration(Map<String, String> env, String name, String fallback) {
    String raw = get(env, name, fallback);
    Matcher m = DURATION.matcher(raw);
    if (!m.matches()) {
      throw new IllegalArgumentException(name + " must look like 30s, 10m or 1h, got " + raw);
    }
    long amount = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(amount);
      case "s" -> Duration.ofSeconds(amount);
      case "m" -> Duration.ofMinutes(amount);
      default -> Duration.ofHours(amount);
    };
  }

  /** The password is left out, so the config can be logged. */
  @Override
  public String toString() {
    return "CacheGuardConfig{filter="
        + filterNamespace
        + "/"
        + filterName
        + ", redis="
        + redisUrl.getHost()
        + ":"
        + redisUrl.getPort()
        + ", jdbc="
        + jdbcUrl
        + ", user="
        + jdbcUser
        + ", port="
        + port
        + ", threads="
        + threads
        + ", productTtl="
        + productTtl
        + ", notFoundTtl="
        + notFoundTtl
        + "}";
  }
}
