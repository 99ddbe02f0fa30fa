package io.bloomoperator.reconcile;

import io.bloomoperator.publish.SigningKeySecret;
import java.util.Map;

/**
 * Operator-wide limits, from environment variables (see docs/configuration.md).
 *
 * @param maxSnapshotBytes largest snapshot the operator publishes; bigger filters get
 *     Ready=False/SnapshotTooLarge instead of filling etcd
 * @param maxMalformedKeys lines per build that may fail to parse before the build fails
 * @param signingKey the Secret holding the key that signs every published manifest, or null to
 *     publish unsigned manifests (BLOOM_SIGNING_KEY_SECRET)
 */
public record OperatorSettings(long maxSnapshotBytes, long maxMalformedKeys,
    SigningKeySecret signingKey) {

  /** Unsigned manifests. */
  public OperatorSettings(long maxSnapshotBytes, long maxMalformedKeys) {
    this(maxSnapshotBytes, maxMalformedKeys, null);
  }

  public static final long DEFAULT_MAX_SNAPSHOT_BYTES = 256L * 1024 * 1024;

  public static OperatorSettings defaults() {
    return new OperatorSettings(DEFAULT_MAX_SNAPSHOT_BYTES, 0);
  }

  /**
   * Reads BLOOM_MAX_SNAPSHOT_BYTES, BLOOM_MAX_MALFORMED_KEYS and the signing key settings (see
   * {@link SigningKeySecret#fromEnvironment}), falling back to defaults.
   */
  public static OperatorSettings fromEnvironment(Map<String, String> env) {
    return new OperatorSettings(
        positive(env, "BLOOM_MAX_SNAPSHOT_BYTES", DEFAULT_MAX_SNAPSHOT_BYTES),
        nonNegative(env, "BLOOM_MAX_MALFORMED_KEYS", 0),
        SigningKeySecret.fromEnvironment(env, SigningKeySecret.SERVICE_ACCOUNT_NAMESPACE));
  }

  /** These settings with manifests signed by the key in {@code secret} (null: unsigned). */
  public OperatorSettings withSigningKey(SigningKeySecret secret) {
    return new OperatorSettings(maxSnapshotBytes, maxMalformedKeys, secret);
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
