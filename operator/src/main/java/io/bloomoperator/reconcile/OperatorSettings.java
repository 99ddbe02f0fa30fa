package io.bloomoperator.reconcile;

import java.util.Map;

/**
 * Operator-wide limits, from environment variables (see docs/configuration.md).
 *
 * @param maxSnapshotBytes largest snapshot the operator publishes; bigger filters get
 *     Ready=False/SnapshotTooLarge instead of filling etcd
 * @param maxMalformedKeys lines per build that may fail to parse before the build fails
 */
public record OperatorSettings(long maxSnapshotBytes, long maxMalformedKeys) {

  public static final long DEFAULT_MAX_SNAPSHOT_BYTES = 256L * 1024 * 1024;

  public static OperatorSettings defaults() {
    return new OperatorSettings(DEFAULT_MAX_SNAPSHOT_BYTES, 0);
  }

  /** Reads BLOOM_MAX_SNAPSHOT_BYTES and BLOOM_MAX_MALFORMED_KEYS, falling back to defaults. */
  public static OperatorSettings fromEnvironment(Map<String, String> env) {
    return new OperatorSettings(
        positive(env, "BLOOM_MAX_SNAPSHOT_BYTES", DEFAULT_MAX_SNAPSHOT_BYTES),
        nonNegative(env, "BLOOM_MAX_MALFORMED_KEYS", 0));
  }

  private static long positive(Map<String, String> env, String name, long fallback) {
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
