package io.bloomoperator.source;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLSyntaxErrorException;

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
 *   <li>the connection must report original names: a probe aliasing that table and column must
 *       still be described by their names (a driver setting such as {@code
 *       useOldAliasMetadataBehavior} reports aliases, whether from the URL or anywhere else);
 *   <li>that table's primary key, read from {@code information_schema.KEY_COLUMN_USAGE} with the
 *       database and table as parameters (not through the driver's metadata calls, whose results
 *       depend on its settings), must be exactly that one column (a view has none).
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
    if (schema == null || schema.isEmpty()) {
      throw errors.notPrimaryKey("cannot be checked: the server names no database for its table");
    }
    int columns = 0;
    boolean matches = false;
    // information_schema, asked with parameters: what the server says, whatever metadata settings
    // (databaseTerm, nullDatabaseMeansCurrent) the driver has.
    try (PreparedStatement primary =
        connection.prepareStatement(
            "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE"
                + " WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY'")) {
      primary.setString(1, schema);
      primary.setString(2, table);
      try (ResultSet keys = primary.executeQuery()) {
        while (keys.next() && columns <= 1) {
          columns++;
          matches = original.equalsIgnoreCase(String.valueOf(keys.getString(1)));
        }
      }
    }
    if (columns != 1 || !matches) {
      throw errors.notPrimaryKey("is not the single-column primary key of the table it comes from");
    }
    // Only now: the names found are a table's key, but are they the original names?
    if (!reportsOriginalNames(connection, schema, table, original)) {
      throw errors.notPrimaryKey(
          "cannot be checked: the driver reports aliases, not the original table and column");
    }
  }

  /**
   * Whether this connection's result metadata names original tables and columns: a query aliasing
   * both must still report {@code table} and {@code column}. A driver reporting aliases (MySQL and
   * MariaDB Connector/J with {@code useOldAliasMetadataBehavior}, however it was set) would let
   * {@code SELECT other AS id FROM t} pass as t's key {@code id}.
   */
  private static boolean reportsOriginalNames(
      Connection connection, String schema, String table, String column) throws SQLException {
    String probe =
        "SELECT "
            + quoted(column)
            + " AS bloom_probe_column FROM "
            + quoted(schema)
            + "."
            + quoted(table)
            + " AS bloom_probe_table WHERE 1 = 0";
    try (PreparedStatement describe = connection.prepareStatement(probe)) {
      ResultSetMetaData meta = describe.getMetaData();
      return meta != null
          && meta.getColumnCount() == 1
          && table.equals(meta.getTableName(1))
          && column.equalsIgnoreCase(meta.getColumnName(1));
    } catch (SQLSyntaxErrorException e) {
      return false; // no such table or column: the names described were aliases
    }
  }

  /** A MySQL identifier in backquotes (a backquote in it doubled). */
  private static String quoted(String identifier) {
    return "`" + identifier.replace("`", "``") + "`";
  }
}
