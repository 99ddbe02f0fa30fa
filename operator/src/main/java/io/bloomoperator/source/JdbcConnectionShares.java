package io.bloomoperator.source;

/**
 * The extra connections partitioned jdbc sources hold at once ({@code
 * BLOOM_JDBC_PARTITION_CONNECTIONS}, default 8) and one namespace's share of them ({@code
 * BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE}, default 4): a {@link PartitionShares} table of
 * their own, apart from http URL lists', so one kind of source cannot use up the other's.
 */
final class JdbcConnectionShares extends PartitionShares {

  /**
   * @param total extra connections across the operator
   * @param perNamespace extra connections of one namespace; at most {@code total}
   */
  JdbcConnectionShares(int total, int perNamespace) {
    super(total, perNamespace);
  }
}
