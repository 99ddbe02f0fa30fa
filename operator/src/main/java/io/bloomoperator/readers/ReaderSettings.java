package io.bloomoperator.readers;

import io.bloomoperator.env.EnvDurations;
import io.bloomoperator.env.EnvNumbers;
import java.time.Duration;
import java.util.Map;

/**
 * How the operator reads reader reports (docs/reader-protocol.md) and writes them into {@code
 * status.readers}; the administrator's, from environment variables (docs/configuration.md).
 *
 * @param statusInterval how often the reports are counted; also the shortest time between two
 *     status writes of one filter, however many readers heartbeat ({@code
 *     BLOOM_READER_STATUS_INTERVAL})
 * @param maxReportsPerNamespace reports kept per namespace; more are ignored, so a namespace that
 *     creates Leases without end costs the operator bounded memory ({@code
 *     BLOOM_MAX_READER_REPORTS_PER_NAMESPACE})
 * @param stallAfter how long a rollout may take before it is reported as stalled ({@code
 *     BLOOM_ROLLOUT_STALL_AFTER})
 * @param podCheckInterval how long the operator trusts that a report's pod is alive before asking
 *     the API server again ({@code BLOOM_READER_POD_CHECK_INTERVAL})
 */
public record ReaderSettings(
    Duration statusInterval,
    int maxReportsPerNamespace,
    Duration stallAfter,
    Duration podCheckInterval) {

  public static final Duration DEFAULT_STATUS_INTERVAL = Duration.ofSeconds(5);
  public static final int DEFAULT_MAX_REPORTS_PER_NAMESPACE = 5_000;
  public static final Duration DEFAULT_STALL_AFTER = Duration.ofMinutes(10);
  public static final Duration DEFAULT_POD_CHECK_INTERVAL = Duration.ofMinutes(1);

  public ReaderSettings {
    if (maxReportsPerNamespace < 1
        || !positive(statusInterval)
        || !positive(stallAfter)
        || !positive(podCheckInterval)) {
      throw new IllegalArgumentException("reader settings must be positive");
    }
  }

  private static boolean positive(Duration d) {
    return d != null && !d.isNegative() && !d.isZero();
  }

  /** The defaults. */
  public static ReaderSettings defaults() {
    return fromEnvironment(Map.of());
  }

  /**
   * Reads BLOOM_READER_STATUS_INTERVAL, BLOOM_MAX_READER_REPORTS_PER_NAMESPACE,
   * BLOOM_ROLLOUT_STALL_AFTER and BLOOM_READER_POD_CHECK_INTERVAL, falling back to the defaults.
   *
   * @throws IllegalArgumentException naming the variable that is not valid
   */
  public static ReaderSettings fromEnvironment(Map<String, String> env) {
    return new ReaderSettings(
        EnvDurations.positive(env, "BLOOM_READER_STATUS_INTERVAL", DEFAULT_STATUS_INTERVAL),
        (int)
            Math.min(
                1_000_000,
                EnvNumbers.positive(
                    env,
                    "BLOOM_MAX_READER_REPORTS_PER_NAMESPACE",
                    DEFAULT_MAX_REPORTS_PER_NAMESPACE)),
        EnvDurations.positive(env, "BLOOM_ROLLOUT_STALL_AFTER", DEFAULT_STALL_AFTER),
        EnvDurations.positive(env, "BLOOM_READER_POD_CHECK_INTERVAL", DEFAULT_POD_CHECK_INTERVAL));
  }
}
