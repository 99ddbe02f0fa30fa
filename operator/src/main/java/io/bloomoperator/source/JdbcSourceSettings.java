package io.bloomoperator.source;

import static io.bloomoperator.env.EnvNumbers.positive;
import static io.bloomoperator.env.EnvNumbers.positiveOrZero;

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
 * @param partitionConnections the extra connections partitioned sources may hold at once, and one
 *     namespace's share of them ({@code BLOOM_JDBC_PARTITION_CONNECTIONS}, {@code
 *     BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE}); one table for every source of the operator
 */
public record JdbcSourceSettings(
    EgressPolicy egress,
    int maxValueBytes,
    int maxBatchBytes,
    int maxFetchSize,
    Duration maxQueryTime,
    JdbcConnectionShares partitionConnections) {

  /** Extra partition connections across the operator: four namespaces' shares. */
  public static final int DEFAULT_PARTITION_CONNECTIONS = 8;

  /**
   * Extra partition connections of one namespace: with its build's own connection, five readers,
   * more than a 2-core operator can feed (docs/benchmarks.md, partitioned JDBC).
   */
  public static final int DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE = 4;

  /** Settings with the default partition connection shares (a table of their own). */
  public JdbcSourceSettings(
      EgressPolicy egress,
      int maxValueBytes,
      int maxBatchBytes,
      int maxFetchSize,
      Duration maxQueryTime) {
    this(
        egress,
        maxValueBytes,
        maxBatchBytes,
        maxFetchSize,
        maxQueryTime,
        new JdbcConnectionShares(
            DEFAULT_PARTITION_CONNECTIONS, DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE));
  }

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
        || maxQueryTime.isZero()
        || partitionConnections == null) {
      throw new IllegalArgumentException("jdbc source limits must be positive");
    }
  }

  /** The default policy and limits. */
  public static JdbcSourceSettings defaults() {
    return fromEnvironment(Map.of());
  }

  /**
   * Reads BLOOM_HTTP_ALLOW, BLOOM_HTTP_DENY (shared with http sources), BLOOM_JDBC_MAX_VALUE_BYTES,
   * BLOOM_JDBC_MAX_BATCH_BYTES, BLOOM_JDBC_MAX_FETCH_SIZE, BLOOM_JDBC_MAX_QUERY_TIME,
   * BLOOM_JDBC_PARTITION_CONNECTIONS and BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE, falling
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
        HttpSourceSettings.duration(env, "BLOOM_JDBC_MAX_QUERY_TIME", DEFAULT_MAX_QUERY_TIME),
        new JdbcConnectionShares(
            (int)
                Math.min(
                    1024,
                    positiveOrZero(
                        env, "BLOOM_JDBC_PARTITION_CONNECTIONS", DEFAULT_PARTITION_CONNECTIONS)),
            (int)
                Math.min(
                    1024,
                    positiveOrZero(
                        env,
                        "BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE",
                        DEFAULT_PARTITION_CONNECTIONS_PER_NAMESPACE))));
  }

  /** These settings with another egress policy. */
  public JdbcSourceSettings withEgress(EgressPolicy policy) {
    return new JdbcSourceSettings(
        policy, maxValueBytes, maxBatchBytes, maxFetchSize, maxQueryTime, partitionConnections);
  }

  /** These settings with other limits. */
  public JdbcSourceSettings withLimits(
      int valueBytes, int batchBytes, int fetchSize, Duration queryTime) {
    return new JdbcSourceSettings(
        egress, valueBytes, batchBytes, fetchSize, queryTime, partitionConnections);
  }

  /** These settings with another table of partition connections (for tests). */
  JdbcSourceSettings withPartitionConnections(int total, int perNamespace) {
    return new JdbcSourceSettings(
        egress,
        maxValueBytes,
        maxBatchBytes,
        maxFetchSize,
        maxQueryTime,
        new JdbcConnectionShares(total, perNamespace));
  }

  private static int intSetting(Map<String, String> env, String name, int fallback) {
    return (int) Math.min(Integer.MAX_VALUE - 8, positive(env, name, fallback));
  }
}
