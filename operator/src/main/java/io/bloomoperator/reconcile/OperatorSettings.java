package io.bloomoperator.reconcile;

import io.bloomoperator.source.HttpSourceSettings;
import java.util.Map;

/**
 * Operator-wide limits, from environment variables (see docs/configuration.md).
 *
 * @param maxSnapshotBytes largest snapshot the operator publishes; bigger filters get
 *     Ready=False/SnapshotTooLarge instead of filling etcd
 * @param maxMalformedKeys lines per build that may fail to parse before the build fails
 * @param http where http sources may connect and what one may cost
 */
public record OperatorSettings(long maxSnapshotBytes, long maxMalformedKeys,
    HttpSourceSettings http) {

  public static final long DEFAULT_MAX_SNAPSHOT_BYTES = 256L * 1024 * 1024;

  public OperatorSettings {
    if (http == null) {
      throw new IllegalArgumentException("http source settings are required");
    }
  }

  /** The given limits and the default http source settings. */
  public OperatorSettings(long maxSnapshotBytes, long maxMalformedKeys) {
    this(maxSnapshotBytes, maxMalformedKeys, HttpSourceSettings.defaults());
  }

  public static OperatorSettings defaults() {
    return new OperatorSettings(DEFAULT_MAX_SNAPSHOT_BYTES, 0);
  }

  /**
   * Reads BLOOM_MAX_SNAPSHOT_BYTES, BLOOM_MAX_MALFORMED_KEYS and the http source settings
   * ({@link HttpSourceSettings#fromEnvironment}), falling back to defaults.
   */
  public static OperatorSettings fromEnvironment(Map<String, String> env) {
    return new OperatorSettings(
        positive(env, "BLOOM_MAX_SNAPSHOT_BYTES", DEFAULT_MAX_SNAPSHOT_BYTES),
        nonNegative(env, "BLOOM_MAX_MALFORMED_KEYS", 0),
        HttpSourceSettings.fromEnvironment(env));
  }

  /** These settings with other http source settings. */
  public OperatorSettings withHttp(HttpSourceSettings settings) {
    return new OperatorSettings(maxSnapshotBytes, maxMalformedKeys, settings);
  }

  /**
   * The positive whole number in environment variable {@code name}, or {@code fallback} when it
   * is unset or blank.
   *
   * @throws IllegalArgumentException when it is not a positive number: the operator does not start
   */
  public static long positive(Map<String, String> env, String name, long fallback) {
    long value = nonNegative(env, name, fallback);
    if (value == 0) {
      throw new IllegalArgumentException(name + " must be positive");
    }
    return value;
  }

  private static long nonNegative(Map<String, String> env, String name, long fallback) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    try {
      long value = Long.parseLong(raw.trim());
      if (value < 0) {
        throw new IllegalArgumentException(name + " must not be negative: " + raw);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " is not a number: " + raw, e);
    }
  }
}
