package io.bloomoperator.snapshot;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Which readers belong to a canary share: a reader is in a share of {@code percent} % when the
 * bucket of its pod name is below {@code percent}. The bucket is the first four bytes of the
 * SHA-256 of the pod name's UTF-8 bytes, read as an unsigned big-endian number, modulo 100
 * (docs/reader-protocol.md). Each reader decides alone, from its own name, with no coordination;
 * the same pods are chosen on every restart of reader or operator, and the operator computes the
 * same answer for each reported pod to tell canary readers from stable ones. Readers in any
 * language implement the same three lines.
 *
 * <p>A share grows monotonically with {@code percent}: a pod in the 10 % share is also in the 20 %
 * share, so widening a canary never moves a reader back to the stable version.
 */
public final class CanaryShare {

  /** Buckets a pod name falls into: whole percent. */
  public static final int BUCKETS = 100;

  private CanaryShare() {}

  /**
   * The bucket of {@code podName}, 0..99.
   *
   * @throws IllegalArgumentException if {@code podName} is null or empty
   */
  public static int bucket(String podName) {
    if (podName == null || podName.isEmpty()) {
      throw new IllegalArgumentException("a canary share needs the reader's pod name");
    }
    byte[] digest;
    try {
      digest =
          MessageDigest.getInstance("SHA-256").digest(podName.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
    long first =
        ((digest[0] & 0xFFL) << 24)
            | ((digest[1] & 0xFFL) << 16)
            | ((digest[2] & 0xFFL) << 8)
            | (digest[3] & 0xFFL);
    return (int) (first % BUCKETS);
  }

  /**
   * Whether the reader in pod {@code podName} belongs to a share of {@code percent} %. A reader
   * that does not know its pod name is never in a share: it stays on the stable version.
   *
   * @param percent 0..100; outside that range nobody is in the share
   */
  public static boolean contains(String podName, int percent) {
    if (podName == null || podName.isEmpty() || percent <= 0 || percent > BUCKETS) {
      return false;
    }
    return bucket(podName) < percent;
  }
}
