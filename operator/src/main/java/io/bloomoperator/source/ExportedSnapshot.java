package io.bloomoperator.source;

import java.util.regex.Pattern;

/**
 * A PostgreSQL snapshot another session of the operator exported ({@code CREATE_REPLICATION_SLOT …
 * (SNAPSHOT 'export')} on a replication connection), named as the server named it. A {@link
 * JdbcSource} reading in it ({@link JdbcSource#inSnapshot}) sees exactly the rows committed before
 * the slot's consistent point, so a scan and a stream started there miss nothing between them.
 *
 * <p>The name only ever comes from the server's answer to the operator's own command, never from a
 * spec; it is checked against the form PostgreSQL gives it ({@code %08X-%08X-%d}) and quoted as a
 * literal anyway, so it cannot carry anything else into a statement.
 *
 * @param name the snapshot's name as the server returned it
 */
public record ExportedSnapshot(String name) {

  private static final Pattern NAME = Pattern.compile("[0-9A-F]{8}-[0-9A-F]{8}-[0-9]{1,10}");

  /**
   * @throws IllegalArgumentException when {@code name} is not of the form PostgreSQL exports
   */
  public ExportedSnapshot {
    if (name == null || !NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("not a PostgreSQL exported snapshot name");
    }
  }

  /** The statement that makes a transaction read in this snapshot: the name as a quoted literal. */
  String importStatement() {
    return "SET TRANSACTION SNAPSHOT '" + name.replace("'", "''") + "'";
  }
}
