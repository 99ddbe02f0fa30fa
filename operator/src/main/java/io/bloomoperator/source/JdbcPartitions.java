package io.bloomoperator.source;

import io.bloomoperator.api.JdbcPartitionsSpec;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * How a partitioned jdbc source splits its query ({@code spec.source.jdbc.partitions}): {@code
 * count} ranges of an integer column with Spark's JDBC semantics. The stride is {@code
 * upperBound/count − lowerBound/count}; partition 0 is {@code col < lower + stride OR col IS NULL},
 * partition i is {@code col >= lower + i·stride AND col < lower + (i+1)·stride}, the last {@code
 * col >= lower + (count−1)·stride}. The bounds choose the stride only: every row, NULLs included,
 * is in exactly one partition whatever its value.
 *
 * <p><b>Never spliced.</b> The column is a plain identifier (checked here as in the CRD) and quoted
 * by the dialect; the user's query is wrapped whole as a derived table, {@code SELECT * FROM
 * (<query>) AS bloom_part WHERE bloom_part."col" >= ? AND bloom_part."col" < ?}, so its first
 * column stays the key column; the bounds are {@code long} parameters, never text. A partitioned
 * query may therefore hold no {@code ?} of its own.
 */
final class JdbcPartitions {

  private static final Pattern COLUMN = Pattern.compile(JdbcPartitionsSpec.COLUMN_PATTERN);

  /** The derived table's alias. */
  static final String ALIAS = "bloom_part";

  /**
   * One partition: values in {@code [lower, upper)}, a null bound open; the first also holds NULL.
   */
  record Range(int index, Long lower, Long upper) {

    /** Binds the bounds to {@code statement}, in the order {@link #where} names them. */
    void bind(PreparedStatement statement) throws SQLException {
      int i = 1;
      if (lower != null) {
        statement.setLong(i++, lower);
      }
      if (upper != null) {
        statement.setLong(i, upper);
      }
    }

    String where(String column) {
      if (lower == null && upper == null) {
        return "";
      }
      if (lower == null) {
        return " WHERE " + column + " < ? OR " + column + " IS NULL";
      }
      if (upper == null) {
        return " WHERE " + column + " >= ?";
      }
      return " WHERE " + column + " >= ? AND " + column + " < ?";
    }
  }

  private final String column;
  private final List<Range> ranges;

  private JdbcPartitions(String column, List<Range> ranges) {
    this.column = column;
    this.ranges = ranges;
  }

  /**
   * The plan of {@code spec}, or null when it declares none.
   *
   * @throws IllegalArgumentException for an invalid column, count or bounds, or a query with a
   *     {@code ?}
   */
  static JdbcPartitions of(JdbcPartitionsSpec spec, String query) {
    if (spec == null) {
      return null;
    }
    String column = spec.getColumn();
    // The name is not repeated: it is the author's text.
    if (column == null || !COLUMN.matcher(column).matches()) {
      throw new IllegalArgumentException(
          "spec.source.jdbc.partitions.column must be a plain identifier (letters, digits, _;"
              + " at most 63; not starting with a digit)");
    }
    Integer count = spec.getCount();
    if (count == null || count < 1 || count > JdbcPartitionsSpec.MAX_COUNT) {
      throw new IllegalArgumentException(
          "spec.source.jdbc.partitions.count must be between 1 and "
              + JdbcPartitionsSpec.MAX_COUNT);
    }
    Long lower = spec.getLowerBound();
    Long upper = spec.getUpperBound();
    if (lower == null || upper == null) {
      throw new IllegalArgumentException(
          "spec.source.jdbc.partitions needs lowerBound and upperBound");
    }
    // Math.subtractExact: a span past the long range is as wide as any count needs.
    long span;
    try {
      span = Math.subtractExact(upper, lower);
    } catch (ArithmeticException e) {
      span = Long.MAX_VALUE;
    }
    if (span < count) {
      throw new IllegalArgumentException(
          "spec.source.jdbc.partitions: upperBound must be at least lowerBound + count");
    }
    if (query.indexOf('?') >= 0) {
      throw new IllegalArgumentException(
          "spec.source.jdbc.query must not contain ? when partitions are set (the partition"
              + " bounds are the statement's only parameters)");
    }
    return new JdbcPartitions(column, ranges(count, lower, upper));
  }

  /** Spark's JDBC ranges: the first open below (and NULL), the last open above. */
  static List<Range> ranges(int count, long lower, long upper) {
    long stride = upper / count - lower / count;
    List<Range> ranges = new ArrayList<>(count);
    long current = lower;
    for (int i = 0; i < count; i++) {
      Long from = i == 0 ? null : current;
      // Clamped: near Long.MAX_VALUE a wrapped bound would make ranges overlap (rows read twice);
      // clamped, the later ranges are empty and the last, open above, still holds the rest.
      current = current > Long.MAX_VALUE - stride ? Long.MAX_VALUE : current + stride;
      Long to = i == count - 1 ? null : current;
      ranges.add(new Range(i, from, to));
    }
    return List.copyOf(ranges);
  }

  /** The declared column (an identifier already checked). */
  String column() {
    return column;
  }

  /** The partitions, in order. */
  List<Range> ranges() {
    return ranges;
  }

  /** {@code query} restricted to {@code range}, the column quoted for {@code driver}. */
  String wrap(String query, Range range, JdbcDriver driver) {
    String quoted = ALIAS + "." + quote(column, driver);
    return "SELECT * FROM (" + query + ") AS " + ALIAS + range.where(quoted);
  }

  /**
   * The identifier quoted for the dialect: {@code "col"} for PostgreSQL (case kept as declared),
   * {@code `col`} for MySQL/MariaDB. The identifier pattern holds no quote character; the doubling
   * is there all the same.
   */
  static String quote(String identifier, JdbcDriver driver) {
    return driver == JdbcDriver.POSTGRESQL
        ? "\"" + identifier.replace("\"", "\"\"") + "\""
        : "`" + identifier.replace("`", "``") + "`";
  }
}
