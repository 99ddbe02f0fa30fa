package io.bloomoperator.changes;

import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.source.ExportedSnapshot;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.postgresql.replication.LogSequenceNumber;

/**
 * What the operator asks of and does to the database around a logical replication stream, in SQL on
 * a connection it opened: the checks before a slot is created, the slot's creation, lookup and
 * drop, and the write-ahead log it retains. Every name from the spec is passed as a bound value
 * where the statement allows one, and quoted as an identifier ({@link #identifier}) where the
 * replication protocol wants a name; the spec's patterns already admit letters, digits and
 * underscores only, so the quoting is a second wall, not the only one. Messages name settings and
 * counts, never what the database holds.
 */
final class PgSlot {

  /** How long one statement may run: a slot's creation waits for running transactions. */
  static final int STATEMENT_SECONDS = 3;

  private final PostgresLogicalChangesSpec spec;

  PgSlot(PostgresLogicalChangesSpec spec) {
    this.spec = spec;
  }

  /** {@code name} as a quoted SQL identifier: in double quotes, each double quote doubled. */
  static String identifier(String name) {
    return '"' + name.replace("\"", "\"\"") + '"';
  }

  /** The table the publication publishes, as {@code schema.table} names. */
  record Table(String schema, String name) {}

  /** A slot as {@code pg_replication_slots} shows it. */
  record Slot(boolean logicalPgoutput, boolean thisDatabase, boolean active, long confirmedFlush) {}

  /**
   * Checks everything the stream relies on, in the order a user fixes them: the role may replicate,
   * the server decodes logically, the publication publishes one table with the key column only, and
   * the key column is that table's replica identity (deletes and updates carry it, and PostgreSQL
   * refuses to publish them otherwise).
   *
   * @throws StreamException of kind REFUSED, saying which
   */
  Table check(Connection c) throws SQLException, StreamException {
    if (!bool(c, "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user")) {
      throw refused(
          "the database role has no REPLICATION attribute (ALTER ROLE <role> REPLICATION);"
              + " logical replication needs it");
    }
    if (!bool(c, "SELECT current_setting('wal_level') = 'logical'")) {
      throw refused(
          "the database's wal_level is not logical (the server must be restarted with"
              + " wal_level = logical)");
    }
    try (PreparedStatement s =
        c.prepareStatement("SELECT puballtables FROM pg_publication WHERE pubname = ?")) {
      s.setString(1, spec.getPublication());
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          throw refused(
              "the publication spec.changes.postgresLogical.publication does not exist in the"
                  + " database");
        }
        if (r.getBoolean(1)) {
          throw refused(
              "the publication publishes all tables (FOR ALL TABLES); it must publish one table"
                  + " with the key column only");
        }
      }
    }
    List<Table> tables = new ArrayList<>();
    List<List<String>> columns = new ArrayList<>();
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT schemaname, tablename, attnames FROM pg_publication_tables WHERE pubname = ?"
                + " LIMIT 2")) {
      s.setString(1, spec.getPublication());
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          tables.add(new Table(r.getString(1), r.getString(2)));
          columns.add(names(r.getArray(3)));
        }
      }
    } catch (SQLException e) {
      if ("42703".equals(e.getSQLState())) {
        throw refused(
            "the database has no publication column lists (PostgreSQL 15 or later is needed)");
      }
      throw e;
    }
    if (tables.size() != 1) {
      throw refused(
          "the publication publishes "
              + (tables.isEmpty() ? "no table" : "more than one table")
              + "; it must publish one table with the key column only"
              + " (CREATE PUBLICATION <publication> FOR TABLE <table> (<keyColumn>))");
    }
    if (!columns.get(0).equals(List.of(spec.getKeyColumn()))) {
      throw refused(
          "the publication publishes "
              + columns.get(0).size()
              + " column(s) of its table, not the key column spec.changes.postgresLogical.keyColumn"
              + " alone; list it (FOR TABLE <table> (<keyColumn>)): the driver holds each"
              + " replicated row whole");
    }
    Table table = tables.get(0);
    if (!identityColumns(c, table).equals(List.of(spec.getKeyColumn()))) {
      throw refused(
          "the key column is not the replica identity of the published table (make it the"
              + " primary key, or REPLICA IDENTITY USING INDEX on a unique index of it alone)");
    }
    return table;
  }

  /** The columns of the table's replica identity, in order; empty when it has none. */
  private static List<String> identityColumns(Connection c, Table table) throws SQLException {
    String identity;
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT c.relreplident FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relname = ?")) {
      s.setString(1, table.schema());
      s.setString(2, table.name());
      try (ResultSet r = s.executeQuery()) {
        identity = r.next() ? r.getString(1) : "n";
      }
    }
    String sql;
    switch (identity) {
      case "d":
        sql = "AND i.indisprimary";
        break;
      case "i":
        sql = "AND i.indisreplident";
        break;
      case "f":
        // Every column is the identity: only a table of the key column alone qualifies.
        return columnsOf(c, table);
      default:
        return List.of();
    }
    return names(
        c,
        "SELECT a.attname FROM pg_index i"
            + " JOIN pg_class c ON c.oid = i.indrelid"
            + " JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
            + " WHERE n.nspname = ? AND c.relname = ? "
            + sql
            + " ORDER BY a.attnum LIMIT 2",
        table);
  }

  private static List<String> columnsOf(Connection c, Table table) throws SQLException {
    return names(
        c,
        "SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
            + " JOIN pg_namespace n ON n.oid = c.relnamespace"
            + " WHERE n.nspname = ? AND c.relname = ? AND a.attnum > 0 AND NOT a.attisdropped"
            + " LIMIT 2",
        table);
  }

  /** The first column of {@code sql}'s rows, its parameters the table's schema and name. */
  private static List<String> names(Connection c, String sql, Table table) throws SQLException {
    List<String> names = new ArrayList<>();
    try (PreparedStatement s = c.prepareStatement(sql)) {
      s.setString(1, table.schema());
      s.setString(2, table.name());
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          names.add(r.getString(1));
        }
      }
    }
    return names;
  }

  /**
   * Who this slot would be: {@code <system identifier>/<database>/<slot>}, what the filter's status
   * records once the operator created it. The system identifier is the server cluster's, fixed at
   * its creation, so a same-named slot in another database or server is another slot.
   */
  String identity(Connection replication) throws SQLException {
    try (Statement s = replication.createStatement();
        ResultSet r = s.executeQuery("IDENTIFY_SYSTEM")) {
      if (!r.next()) {
        throw new SQLException("IDENTIFY_SYSTEM returned nothing", "08P01");
      }
      return r.getString("systemid") + "/" + r.getString("dbname") + "/" + spec.getSlot();
    }
  }

  /** The slot of the spec's name, if the server has one. */
  Optional<Slot> find(Connection c) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT plugin = 'pgoutput' AND slot_type = 'logical', database = current_database(),"
                + " active, COALESCE(pg_wal_lsn_diff(confirmed_flush_lsn, '0/0'), 0)::bigint"
                + " FROM pg_replication_slots WHERE slot_name = ?")) {
      s.setString(1, spec.getSlot());
      try (ResultSet r = s.executeQuery()) {
        if (!r.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new Slot(r.getBoolean(1), r.getBoolean(2), r.getBoolean(3), r.getLong(4)));
      }
    }
  }

  /** Creates the slot (on a replication connection), exporting no snapshot. */
  void create(Connection replication) throws SQLException {
    try (Statement s = replication.createStatement()) {
      s.setQueryTimeout(STATEMENT_SECONDS);
      s.execute(
          "CREATE_REPLICATION_SLOT "
              + identifier(spec.getSlot())
              + " LOGICAL pgoutput NOEXPORT_SNAPSHOT");
    }
  }

  /** What a slot creation that exported its snapshot answered. */
  record Export(long consistentPoint, ExportedSnapshot snapshot) {}

  /**
   * Creates a slot on a replication connection and exports its snapshot: the slot of the spec's
   * name, or (with {@code temporary}) a temporary one named {@code name}, which the server drops
   * when the connection ends. The snapshot stays usable while the connection stays open and idle:
   * send it nothing more until the scan has imported it. The creation waits, within {@code
   * seconds}, for the transactions running when it starts to end (that is what makes the point
   * consistent).
   */
  Export createExporting(Connection replication, String name, boolean temporary, int seconds)
      throws SQLException, StreamException {
    try (Statement s = replication.createStatement()) {
      s.setQueryTimeout(seconds);
      try (ResultSet r =
          s.executeQuery(
              "CREATE_REPLICATION_SLOT "
                  + identifier(name)
                  + (temporary ? " TEMPORARY" : "")
                  + " LOGICAL pgoutput (SNAPSHOT 'export')")) {
        if (!r.next()) {
          throw new SQLException("CREATE_REPLICATION_SLOT returned nothing", "08P01");
        }
        long point;
        ExportedSnapshot snapshot;
        try {
          point = LogSequenceNumber.valueOf(r.getString("consistent_point")).asLong();
          snapshot = new ExportedSnapshot(r.getString("snapshot_name"));
        } catch (IllegalArgumentException | NullPointerException e) {
          throw new StreamException(
              StreamException.Kind.UNAVAILABLE,
              "the server answered the slot's creation with a position or snapshot name this"
                  + " operator does not read");
        }
        if (point <= 0) {
          throw new StreamException(
              StreamException.Kind.UNAVAILABLE,
              "the server answered the slot's creation without a consistent point");
        }
        return new Export(point, snapshot);
      }
    }
  }

  /**
   * Drops the slot (on a replication connection), waiting (within {@link #STATEMENT_SECONDS}) for
   * the operator's own connection that just closed to release it.
   */
  void drop(Connection replication) throws SQLException {
    try (Statement s = replication.createStatement()) {
      s.setQueryTimeout(STATEMENT_SECONDS);
      s.execute("DROP_REPLICATION_SLOT " + identifier(spec.getSlot()) + " WAIT");
    }
  }

  /** Bytes of write-ahead log the server keeps for the slot now; empty when it has no slot. */
  Optional<Long> retainedBytes(Connection c) throws SQLException {
    try (PreparedStatement s =
        c.prepareStatement(
            "SELECT COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn), 0)::bigint"
                + " FROM pg_replication_slots WHERE slot_name = ?")) {
      s.setString(1, spec.getSlot());
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? Optional.of(r.getLong(1)) : Optional.empty();
      }
    }
  }

  private static boolean bool(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery(sql)) {
      return r.next() && r.getBoolean(1);
    }
  }

  private static List<String> names(Array array) throws SQLException {
    List<String> names = new ArrayList<>();
    if (array == null) {
      return names;
    }
    Object values = array.getArray();
    if (values instanceof Object[] items) {
      for (Object item : items) {
        names.add(String.valueOf(item));
      }
    }
    return names;
  }

  private static StreamException refused(String message) {
    return new StreamException(StreamException.Kind.REFUSED, message);
  }
}
