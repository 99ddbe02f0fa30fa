package io.bloomoperator.source;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.Locale;

/**
 * The MySQL/MariaDB rule for a partition column: it must be shown, from what the driver and the
 * server say, to be the single-column primary key of the table it comes from, and non-NULL in the
 * result. These servers have no snapshot to share between connections, so each partition reads in
 * its own; a row moves to another partition only when its partition value changes, and a primary
 * key's value is, in practice, not updated (an UPDATE of it is a delete and an insert: the row is
 * missed as a row inserted after the scan is). Anything not shown is refused:
 *
 * <ul>
 *   <li>the column must be the query's first column, the one the keys are read from: partitioning
 *       on another column of the row (an auto-increment id while the keys are emails) lets a row
 *       whose key is kept get a new partition value, e.g. by REPLACE, and land in a partition
 *       already read, so no partition reads it (a live key answered "absent");
 *   <li>the column must appear exactly once by that label in the query's result (column names are
 *       case-insensitive on these servers);
 *   <li>the result must name its original table and column (an expression, an aggregate, a derived
 *       table's computed column name none);
 *   <li>it must be declared NOT NULL in the result (the nullable side of an outer join is not, and
 *       a row could move from the NULL partition to another when its match appears);
 *   <li>that table's primary key ({@link DatabaseMetaData#getPrimaryKeys}) must be exactly that one
 *       column (a view has none).
 * </ul>
 *
 * <p>The result's description comes from the server without reading rows (MariaDB Connector/J
 * prepares the statement on the server); MySQL Connector/J runs the query for at most one row to
 * learn it.
 */
final class MySqlPartitionKey {

  private MySqlPartitionKey() {}

  /**
   * @throws SourceException when the column cannot be shown to be the primary key
   */
  static void check(Connection connection, String query, String column, JdbcErrors errors)
      throws SQLException, SourceException {
    String schema;
    String table;
    String original;
    try (PreparedStatement describe = connection.prepareStatement(query)) {
      ResultSetMetaData meta = describe.getMetaData();
      if (meta == null) {
        throw errors.notPrimaryKey("cannot be checked: the server does not describe the query");
      }
      int found = 0;
      for (int i = 1; i <= meta.getColumnCount(); i++) {
        if (column.equalsIgnoreCase(meta.getColumnLabel(i))) {
          if (found != 0) {
            throw errors.notPrimaryKey("names more than one column of the query's result");
          }
          found = i;
        }
      }
      if (found == 0) {
        throw errors.notPrimaryKey("is not a column of the query's result");
      }
      if (found != 1) {
        throw errors.notPrimaryKey(
            "is not the query's first column, the one the keys are read from");
      }
      schema = meta.getCatalogName(found);
      table = meta.getTableName(found);
      original = meta.getColumnName(found);
      if (table == null || table.isEmpty() || original == null || original.isEmpty()) {
        throw errors.notPrimaryKey("is not a column read from a table");
      }
      if (meta.isNullable(found) != ResultSetMetaData.columnNoNulls) {
        throw errors.notPrimaryKey("may be NULL in the query's result");
      }
    }
    int columns = 0;
    boolean matches = false;
    try (ResultSet keys =
        connection
            .getMetaData()
            .getPrimaryKeys(schema == null || schema.isEmpty() ? null : schema, null, table)) {
      while (keys.next()) {
        columns++;
        matches =
            original
                .toLowerCase(Locale.ROOT)
                .equals(String.valueOf(keys.getString("COLUMN_NAME")).toLowerCase(Locale.ROOT));
      }
    }
    if (columns != 1 || !matches) {
      throw errors.notPrimaryKey("is not the single-column primary key of the table it comes from");
    }
  }
}
