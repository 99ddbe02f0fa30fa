package io.bloomoperator.changes;

import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.source.PostgresConnector;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;

/**
 * The replication connection of one PostgreSQL stream while it is open, and where it stands.
 *
 * <ul>
 *   <li><b>Position.</b> Partition 0 of the {@link StreamPosition} is the log position (LSN) after
 *       the last complete transaction read ({@link #position}); a read resumes at a transaction
 *       boundary, so a transaction is applied whole or read again.
 *   <li><b>Confirmation.</b> The server keeps the log from the slot's confirmed position on. Only
 *       the position a read starts from is confirmed ({@link #confirm}), which is the one the
 *       published version records, never one read but not yet published: an operator killed at any
 *       point loses nothing, since the server still has everything after it.
 * </ul>
 *
 * Used under its stream's lock.
 */
final class PgReplicationSession {

  private final PostgresLogicalChangesSpec spec;

  /** The replication connection while the stream is open, and its replication stream. */
  private PostgresConnector.Link link;

  private PGReplicationStream replication;

  /** Where the open replication stands: the position after the last read, or -1. */
  private long at = -1;

  private long confirmed = -1;

  PgReplicationSession(PostgresLogicalChangesSpec spec) {
    this.spec = spec;
  }

  /** The position of log position {@code lsn}: partition 0 at it. */
  static StreamPosition position(long lsn) {
    TreeMap<Integer, Long> offsets = new TreeMap<>();
    offsets.put(0, lsn);
    return new StreamPosition(offsets);
  }

  /** Whether the replication is open (streaming). */
  boolean isOpen() {
    return replication != null;
  }

  /** Whether the replication is open and stands at {@code start}: a read goes on from there. */
  boolean isOpenAt(long start) {
    return replication != null && at == start && !replication.isClosed();
  }

  /** The open replication connection, or empty. */
  Optional<PostgresConnector.Link> link() {
    return Optional.ofNullable(link);
  }

  /** The open replication stream (after {@link #start}). */
  PGReplicationStream replication() {
    return replication;
  }

  /**
   * Starts the slot's replication at {@code start} on {@code link}, a replication connection whose
   * slot was checked; the session owns the link from then on.
   *
   * @throws StreamException of kind POSITION_LOST when the slot's confirmed position is past {@code
   *     start}: the server would silently start there and skip what lies between
   */
  void start(PostgresConnector.Link opened, PgSlot.Slot slot, long start)
      throws SQLException, StreamException {
    if (start < slot.confirmedFlush()) {
      // The server would silently start at its confirmed position: whatever lies between was
      // never published, so only a full build catches up (the slot was created again).
      throw new StreamException(
          StreamException.Kind.POSITION_LOST,
          "the replication slot no longer has the published position (it was created again);"
              + " a full build starts the stream over");
    }
    Connection c = opened.connection();
    replication =
        c.unwrap(PGConnection.class)
            .getReplicationAPI()
            .replicationStream()
            .logical()
            .withSlotName(PgSlot.identifier(spec.getSlot()))
            .withStartPosition(LogSequenceNumber.valueOf(start))
            .withSlotOption("proto_version", "1")
            // A list of identifiers to pgoutput: quoted, so the name is taken as written.
            .withSlotOption("publication_names", PgSlot.identifier(spec.getPublication()))
            // Never confirm on the server's say-so: only published positions (confirm()).
            .withAutomaticFlush(false)
            .withStatusInterval(10, TimeUnit.SECONDS)
            .start();
    link = opened;
    at = start;
    confirmed = -1;
  }

  /** Confirms {@code position}, the published one, to the server: it may free the log before. */
  void confirm(long position) throws SQLException {
    if (position == confirmed) {
      return;
    }
    LogSequenceNumber lsn = LogSequenceNumber.valueOf(position);
    replication.setFlushedLSN(lsn);
    replication.setAppliedLSN(lsn);
    replication.forceUpdateStatus();
    confirmed = position;
  }

  /** The replication now stands at {@code next}, after a read that ended between transactions. */
  void advancedTo(long next) {
    at = next;
  }

  /** Closes the replication connection, if open. */
  void close() {
    at = -1;
    replication = null;
    PostgresConnector.Link open = link;
    link = null;
    if (open != null) {
      open.close();
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
