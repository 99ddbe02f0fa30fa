package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.sql.JDBCType;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;

/**
 * Key decoding: how the first column of a row becomes a key, chosen once from the column's type
 * ({@link JdbcSource}, "Column"). Integer columns are read as longs, fixed-width {@code CHAR} loses
 * its trailing padding, binary columns are refused, anything else is text; SQL NULL is counted.
 */
final class JdbcColumns {

  /** Reads the first column of the current row ({@code row}, from 1) into the sink. */
  @FunctionalInterface
  interface ColumnReader {
    void read(ResultSet rows, KeySink sink, long row) throws SQLException, SourceException;
  }

  private final int maxValueBytes;
  private final JdbcErrors errors;

  JdbcColumns(int maxValueBytes, JdbcErrors errors) {
    this.maxValueBytes = maxValueBytes;
    this.errors = errors;
  }

  /** The reader for the first column {@code meta} describes. */
  ColumnReader reader(ResultSetMetaData meta) throws SQLException, SourceException {
    if (meta.getColumnCount() < 1) {
      throw new SourceException(Reasons.SOURCE_QUERY_FAILED, "the query returns no columns");
    }
    int type = meta.getColumnType(1);
    switch (type) {
      case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> {
        if (type != Types.BIGINT || meta.isSigned(1)) {
          return (rows, sink, row) -> {
            long value = rows.getLong(1);
            if (rows.wasNull()) {
              sink.nullValue();
            } else {
              sink.value(value);
            }
          };
        }
        return this::readText;
      }
      case Types.CHAR, Types.NCHAR -> {
        return (rows, sink, row) -> {
          String value = bounded(rows.getString(1), row);
          if (value == null) {
            sink.nullValue();
          } else {
            sink.value(value.stripTrailing());
          }
        };
      }
      // The label and type name come from the server: not repeated.
      case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB ->
          throw new SourceException(
              Reasons.SOURCE_QUERY_FAILED,
              "the first column is binary (JDBC type "
                  + JDBCType.valueOf(type).getName()
                  + "); select a text or integer column");
      default -> {
        return this::readText;
      }
    }
  }

  private void readText(ResultSet rows, KeySink sink, long row)
      throws SQLException, SourceException {
    String value = bounded(rows.getString(1), row);
    if (value == null) {
      sink.nullValue();
    } else {
      sink.value(value);
    }
  }

  /**
   * The value, unless it is longer than the operator allows for a key: the same bound as a line of
   * an http source. The driver already bounded what it held for the value ({@link
   * JdbcConnectionGuard}); this keeps over-long keys out of the filter at any fetch size. Only the
   * row number and the length are reported, never the value.
   */
  private String bounded(String value, long row) throws SourceException {
    if (value != null && Utf8.length(value, maxValueBytes) > maxValueBytes) {
      throw errors.valueTooLong(row);
    }
    return value;
  }
}
