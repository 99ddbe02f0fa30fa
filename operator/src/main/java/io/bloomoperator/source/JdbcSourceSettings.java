package io.bloomoperator.source;

import static io.bloomoperator.env.EnvNumbers.positive;

import java.time.Duration;
import java.util.Map;

/**
 * What any jdbc source may reach and cost, set by the operator's administrator (environment
 * variables, see docs/configuration.md); a BloomFilter cannot raise these limits.
 *
 * @param egress which addresses the driver may connect to: the same policy as http sources ({@code
 *     BLOOM_HTTP_ALLOW}, {@code BLOOM_HTTP_DENY}), checked on every socket the driver opens
 * @param maxValueBytes longest value of the key column, in UTF-8 bytes; the same bound as a line of
 *     an http source ({@code BLOOM_JDBC_MAX_VALUE_BYTES}, default as {@code
 *     BLOOM_HTTP_MAX_LINE_BYTES})
 * @param maxBatchBytes most bytes the driver may read from the server for one row fetch (a batch of
 *     {@code fetchSize} rows, or one row when the driver streams row by row), refused before the
 *     driver holds more ({@code BLOOM_JDBC_MAX_BATCH_BYTES})
 * @param maxFetchSize largest {@code fetchSize} used; a larger one in the spec is lowered ({@code
 *     BLOOM_JDBC_MAX_FETCH_SIZE})
 * @param maxQueryTime longest a read may take, whatever {@code queryTimeout} says ({@code
 *     BLOOM_JDBC_MAX_QUERY_TIME})
 */
public record JdbcSourceSettings(
    EgressPolicy egress,
    int maxValueBytes,
    int maxBatchBytes,
    int maxFetchSize,
    Duration maxQueryTime) {

  /**
   * 8 MiB: 10,000 rows of 800-byte keys per round trip. A read holds at most about this much (plus
   * one protocol packet, see {@link JdbcDriver}) whatever the table holds, and every reconcile
   * thread may be reading at once.
   */
  public static final int DEFAULT_MAX_BATCH_BYTES = 8 * 1024 * 1024;

  /** The previous default fetch size; larger ones only add memory, not speed. */
  public static final int DEFAULT_MAX_FETCH_SIZE = 10_000;

  /**
   * 10 minutes: the same as {@link HttpSourceSettings#DEFAULT_MAX_READ_TIME}; 100M keys stream in a
   * few minutes from any database that is not itself overloaded.
   */
  public static final Duration DEFAULT_MAX_QUERY_TIME = Duration.ofMinutes(10);

  public JdbcSourceSettings {
    if (egress == null) {
      throw new IllegalArgumentException("egress policy is required");
    }
    if (maxValueBytes < 1
        || maxBatchBytes < 1
        || maxFetchSize < 1
        || maxQueryTime == null
        || maxQueryTime.isNegative()
        || maxQueryTime.isZero()) {
      throw new IllegalArgumentException("jdbc source limits must be positive");
    }
  }

  /** The default policy and limits. */
  public static JdbcSourceSettings defaults() {
    return fromEnvironment(Map.of());
  }

  /**
   * Reads BLOOM_HTTP_ALLOW, BLOOM_HTTP_DENY (shared with http sources), BLOOM_JDBC_MAX_VALUE_BYTES,
   * BLOOM_JDBC_MAX_BATCH_BYTES, BLOOM_JDBC_MAX_FETCH_SIZE and BLOOM_JDBC_MAX_QUERY_TIME, falling
   * back to the defaults.
   *
   * @throws IllegalArgumentException when a value is invalid: the operator does not start
   */
  public static JdbcSourceSettings fromEnvironment(Map<String, String> env) {
    return new JdbcSourceSettings(
        EgressPolicy.of(env.get("BLOOM_HTTP_ALLOW"), env.get("BLOOM_HTTP_DENY")),
        intSetting(env, "BLOOM_JDBC_MAX_VALUE_BYTES", HttpSourceSettings.DEFAULT_MAX_LINE_BYTES),
        intSetting(env, "BLOOM_JDBC_MAX_BATCH_BYTES", DEFAULT_MAX_BATCH_BYTES),
        intSetting(env, "BLOOM_JDBC_MAX_FETCH_SIZE", DEFAULT_MAX_FETCH_SIZE),
        HttpSourceSettings.duration(env, "BLOOM_JDBC_MAX_QUERY_TIME", DEFAULT_MAX_QUERY_TIME));
  }

  /** These settings with another egress policy. */
  public JdbcSourceSettings withEgress(EgressPolicy policy) {
    return new JdbcSourceSettings(policy, maxValueBytes, maxBatchBytes, maxFetchSize, maxQueryTime);
  }

  /** These settings with other limits. */
  public JdbcSourceSettings withLimits(
      int valueBytes, int batchBytes, int fetchSize, Duration queryTime) {
    return new JdbcSourceSettings(egress, valueBytes, batchBytes, fetchSize, queryTime);
  }

  private static int intSetting(Map<String, String> env, String name, int fallback) {
    return (int) Math.min(Integer.MAX_VALUE - 8, positive(env, name, fallback));
  }
}
