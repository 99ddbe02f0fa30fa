package io.bloomoperator.changes;

import io.bloomoperator.source.PostgresConnector;
import io.bloomoperator.source.SourceException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;

/**
 * The connections of one PostgreSQL stream to its database, and what their failures say: every
 * connection is bounded per message ({@link #messageLimit}) and per socket read, and while a read
 * or position query is under way ({@link #under}) it is handed to that call's deadline, which
 * closes it when the deadline passes. Failures are told in the operator's words only: SQL states
 * and class names, never the server's text. Used under its stream's lock.
 */
final class PgConnections {

  /** Socket read timeout of every connection: no call may hold a reconcile thread longer. */
  static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(PgSlot.STATEMENT_SECONDS);

  /** Largest message besides a key: a table description of names and types, and headers. */
  private static final int MESSAGE_OVERHEAD = 64 * 1024;

  private final PostgresConnector connector;
  private final long messageLimit;

  /** The deadline of the read (or position query) under way, or null: none. */
  private PgReadDeadline deadline;

  PgConnections(PostgresConnector connector, StreamLimits limits) {
    this.connector = connector;
    this.messageLimit = (long) limits.maxEventBytes() + MESSAGE_OVERHEAD;
  }

  /** Hands every connection made from now on to {@code d} (null: to no deadline). */
  void under(PgReadDeadline d) {
    deadline = d;
  }

  /** A new connection, its socket reads bounded by {@link #SOCKET_TIMEOUT}. */
  PostgresConnector.Link connect(boolean forReplication) throws SQLException, StreamException {
    return connect(forReplication, SOCKET_TIMEOUT);
  }

  /** A new connection, its socket reads bounded by {@code socketTimeout}. */
  PostgresConnector.Link connect(boolean forReplication, Duration socketTimeout)
      throws SQLException, StreamException {
    try {
      // Each connection of a read is closed when the read's deadline passes, whatever it waits on.
      return connector.connect(
          forReplication,
          messageLimit,
          socketTimeout,
          abort -> {
            PgReadDeadline d = deadline;
            if (d != null) {
              d.add(abort);
            }
          });
    } catch (SourceException e) {
      throw new StreamException(StreamException.Kind.REFUSED, e.getMessage());
    }
  }

  /** A failure as the operator's own text: SQL states and class names, never the server's text. */
  StreamException failure(SQLException e) {
    Optional<String> refusal = connector.refusal();
    if (refusal.isPresent()) {
      return new StreamException(
          StreamException.Kind.REFUSED,
          "the database address "
              + refusal.get()
              + " (only the operator's BLOOM_HTTP_ALLOW can admit it); nothing was sent there");
    }
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    if (state.startsWith("28")) {
      return new StreamException(
          StreamException.Kind.REFUSED,
          "the database refused the credentials (SQLSTATE " + state + ")");
    }
    if (state.equals("42501")) {
      return new StreamException(
          StreamException.Kind.REFUSED,
          "the database role has no REPLICATION attribute, or may not use the database"
              + " (SQLSTATE 42501); ALTER ROLE <role> REPLICATION");
    }
    if (messageTooLarge(e)) {
      return new StreamException(
          StreamException.Kind.REFUSED,
          "the server sent a message larger than the operator's bound ("
              + messageLimit
              + " bytes, BLOOM_STREAM_MAX_EVENT_BYTES plus table descriptions): publish the key"
              + " column of one table only");
    }
    return new StreamException(
        StreamException.Kind.UNAVAILABLE,
        "the database could not be read ("
            + e.getClass().getSimpleName()
            + (state.isEmpty() ? "" : ", SQLSTATE " + state)
            + ")");
  }

  private static boolean messageTooLarge(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.io.IOException
          && t.getMessage() != null
          && t.getMessage().startsWith("the server announced a message larger")) {
        return true;
      }
    }
    return false;
  }
}
