package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;

/**
 * A jdbc source read as range partitions of an integer column, each on a connection of its own (the
 * semantics of Spark's JDBC {@code partitionColumn}, {@code lowerBound}, {@code upperBound}, {@code
 * numPartitions}): the bounds only decide the stride, the first partition is open below (and holds
 * the NULLs), the last open above, so no row is missed.
 */
public class JdbcPartitionsSpec {

  /** A plain SQL identifier: the operator quotes it itself, and nothing else gets in. */
  public static final String COLUMN_PATTERN = "^[A-Za-z_][A-Za-z0-9_]{0,62}$";

  /** Most partitions one source may declare; connections are bounded by the operator besides. */
  public static final int MAX_COUNT = 64;

  @Required
  @Pattern(COLUMN_PATTERN)
  @JsonPropertyDescription(
      "Integer column of the query's result to partition on (a plain identifier, quoted by the"
          + " operator; the query is wrapped, never edited). PostgreSQL: any integer column (all"
          + " partitions read in one shared snapshot). MySQL/MariaDB: only a single-column"
          + " primary key of the table the column comes from.")
  private String column;

  @Required
  @Min(1)
  @Max(MAX_COUNT)
  @JsonPropertyDescription(
      "Number of range partitions. Connections used at once are at most this and the operator's"
          + " per-namespace share (BLOOM_JDBC_PARTITION_CONNECTIONS_PER_NAMESPACE).")
  private Integer count;

  @Required
  @JsonPropertyDescription(
      "Lower bound of the stride (not a filter: smaller values and NULLs go to the first"
          + " partition).")
  private Long lowerBound;

  @Required
  @JsonPropertyDescription(
      "Upper bound of the stride (not a filter: larger values go to the last partition); at"
          + " least lowerBound + count.")
  private Long upperBound;

  public String getColumn() {
    return column;
  }

  public void setColumn(String column) {
    this.column = column;
  }

  public Integer getCount() {
    return count;
  }

  public void setCount(Integer count) {
    this.count = count;
  }

  public Long getLowerBound() {
    return lowerBound;
  }

  public void setLowerBound(Long lowerBound) {
    this.lowerBound = lowerBound;
  }

  public Long getUpperBound() {
    return upperBound;
  }

  public void setUpperBound(Long upperBound) {
    this.upperBound = upperBound;
  }
}
