package io.bloomoperator.changes;

import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.PostgresConnector;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * The changes of one PostgreSQL table read through logical replication ({@code pgoutput}, protocol
 * version 1) on a slot the operator creates for the filter. Each part has a class of its own, all
 * used under this stream's lock:
 *
 * <ul>
 *   <li>{@link PgConnections}: connecting (bounded per message and socket read, handed to the
 *       call's deadline) and what failures say, never the server's text;
 *   <li>{@link PgSlotKeeper}: the checks of the database, the slot's ownership, creation, export,
 *       retained-log bound and drop;
 *   <li>{@link PgReplicationSession}: the open replication, its position and what is confirmed;
 *   <li>{@link PgDecoding}: the decoding loop, whole transactions within a read's bounds.
 * </ul>
 *
 * <p>Every read and position query runs under one deadline ({@link PgReadDeadline}, {@link
 * StreamLimits#maxCallTime()}) over everything it does, connecting and checks included.
 */
public final class PostgresLogicalStream implements ChangeStream {

  /** Names of the temporary slots that export a full build's snapshot. */
  static final String SCAN_SLOT_PREFIX = PgSlotKeeper.SCAN_SLOT_PREFIX;

  private final StreamLimits limits;
  private final PgConnections connections;
  private final PgSlotKeeper slot;
  private final PgReplicationSession session;
  private final PgDecoding decoding;

  /** The replication connection holding a full build's exported snapshot, until its scan ends. */
  private PostgresConnector.Link exporting;

  /**
   * A stream of {@code spec}'s publication; nothing is connected yet.
   *
   * @param recordedSlot the slot identity the filter's status records as created by the operator
   *     for it ({@code status.stream.slot}), or null
   */
  public PostgresLogicalStream(
      PostgresLogicalChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      PostgresConnector connector,
      String recordedSlot) {
    this(spec, keyType, limits, connector, recordedSlot, PgSlotKeeper.EXPORT_WAIT, SlotIntent.NONE);
  }

  /**
   * As above, with the record on the pod's disk of the slot the operator is about to create for the
   * filter ({@link SlotIntent}): after a restart, a slot it created and the status did not record
   * yet is known as the filter's.
   */
  PostgresLogicalStream(
      PostgresLogicalChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      PostgresConnector connector,
      String recordedSlot,
      SlotIntent intent) {
    this(spec, keyType, limits, connector, recordedSlot, PgSlotKeeper.EXPORT_WAIT, intent);
  }

  /** With how long a full build's slot may wait for running transactions (tests: shorter). */
  PostgresLogicalStream(
      PostgresLogicalChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      PostgresConnector connector,
      String recordedSlot,
      Duration exportWait) {
    this(spec, keyType, limits, connector, recordedSlot, exportWait, SlotIntent.NONE);
  }

  private PostgresLogicalStream(
      PostgresLogicalChangesSpec spec,
      KeyType keyType,
      StreamLimits limits,
      PostgresConnector connector,
      String recordedSlot,
      Duration exportWait,
      SlotIntent intent) {
    this.limits = limits;
    this.connections = new PgConnections(connector, limits);
    this.slot = new PgSlotKeeper(spec, limits, connections, recordedSlot, exportWait, intent);
    this.session = new PgReplicationSession(spec);
    this.decoding = new PgDecoding(spec.getKeyColumn(), keyType, limits);
  }

  /**
   * {@inheritDoc}
   *
   * <p>The log position now ({@code pg_current_wal_lsn()}), whatever {@code time}, once the slot is
   * checked: what a read started now would begin at. A full build does not use it: a position read
   * before a scan takes its snapshot is not consistent with it (a transaction whose commit is in
   * the log before the position may become visible only after the scan's snapshot, e.g. one waiting
   * for a synchronous standby, and would be in neither); it asks {@link #scanStart}.
   */
  @Override
  public synchronized StreamPosition positionAt(Instant time) throws StreamException {
    try (PgReadDeadline d = within()) {
      try {
        slot.ensure(session.isOpen());
        try (PostgresConnector.Link link = connections.connect(false)) {
          // A probe before a full build: not while that build would wait for a snapshot in vain.
          slot.checkNotBlocked(link.connection());
          try (Statement s = link.connection().createStatement();
              var r =
                  s.executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")) {
            r.next();
            StreamPosition now = PgReplicationSession.position(r.getLong(1));
            d.close();
            if (d.passed()) {
              session.close(); // its sockets were closed just as the query ended
            }
            return now;
          }
        }
      } catch (SQLException e) {
        throw afterDeadline(d).orElseGet(() -> connections.failure(e));
      } catch (StreamException e) {
        throw afterDeadline(d).orElse(e);
      } finally {
        connections.under(null);
      }
    }
  }

  /**
   * {@inheritDoc}
   *
   * <p>A replication slot's consistent point, and the snapshot the slot exported there: every
   * transaction whose commit is in the log before the point is visible in the snapshot, and every
   * one after it is sent by the slot, so a scan reading in the snapshot and the stream resumed at
   * the point hold every committed key between them, whenever each became visible. On the first
   * build the filter's slot itself is created and exports; once it exists, a {@code TEMPORARY} slot
   * ({@value #SCAN_SLOT_PREFIX}…) exports, and the filter's slot is later started at that point:
   * PostgreSQL starts a logical slot at the greater of the requested position and the slot's
   * confirmed one, skipping every transaction whose commit lies before it ({@code
   * CreateDecodingContext}, {@code DecodeTXNNeedSkip}), so nothing the scan saw is read twice and
   * nothing after it is skipped.
   *
   * <p>The exporting connection takes the place of the stream's replication connection (closed
   * first), so a stream never holds more connections than it does while reading; it stays open and
   * idle until the answer is closed, which the build does once its scan is done. Creating a slot
   * waits for the transactions running at that moment to end, at most {@link
   * PgSlotKeeper#EXPORT_WAIT}: a longer one fails this call (the build is published without a
   * position), and until that transaction ends this call and {@link #positionAt} (the probe before
   * a full build) fail at once, so the stream backs off instead of starting full builds that would
   * wait in vain.
   */
  @Override
  public synchronized ScanStart scanStart(Instant time) throws StreamException {
    slot.checkNotDropped();
    session.close();
    releaseExport();
    PostgresConnector.Link link;
    try {
      // Socket reads of the exporting connection: longer than the creation may wait.
      link = connections.connect(true, slot.exportWait().plusSeconds(5));
    } catch (SQLException e) {
      throw connections.failure(e);
    }
    try {
      PgSlot.Export export = slot.export(link.connection());
      exporting = link;
      return ScanStart.inSnapshot(
          PgReplicationSession.position(export.consistentPoint()),
          export.snapshot(),
          () -> release(link));
    } catch (SQLException e) {
      link.close();
      if ("57014".equals(e.getSQLState())) {
        throw new StreamException(
            StreamException.Kind.UNAVAILABLE,
            "a transaction of the database ran longer than "
                + slot.exportWait().toSeconds()
                + " s past the full build's start, so no replication slot could take a consistent"
                + " snapshot; the stream resumes after a full build once it ends");
      }
      throw connections.failure(e);
    } catch (StreamException | RuntimeException e) {
      link.close();
      throw e;
    }
  }

  /** Ends the connection holding a full build's snapshot (and its temporary slot). */
  private synchronized void release(PostgresConnector.Link link) {
    if (exporting == link) {
      exporting = null;
    }
    link.close();
  }

  private void releaseExport() {
    PostgresConnector.Link link = exporting;
    exporting = null;
    if (link != null) {
      link.close();
    }
  }

  @Override
  public Batch read(StreamPosition from) throws StreamException {
    return read(from, limits.maxReadBytes());
  }

  @Override
  public synchronized Batch read(StreamPosition from, long maxKeyBytes) throws StreamException {
    long start = from.of(0);
    if (start <= 0) {
      throw new StreamException(
          StreamException.Kind.POSITION_LOST,
          "the published version records no log position of this stream; a full build starts it");
    }
    long cap = Math.min(maxKeyBytes, limits.maxReadBytes());
    try (PgReadDeadline d = within()) {
      try {
        slot.measure(this::closeConnections);
        stream(start);
        session.confirm(start);
        PgDecoding.Collected collected =
            decoding.collect(session.replication(), slot.table(), start, cap, d.at());
        if (collected.partial()) {
          // Part of a transaction was consumed: the next read starts over at its beginning.
          session.close();
        } else {
          session.advancedTo(collected.batch().next().of(0));
        }
        d.close();
        if (d.passed()) {
          session.close(); // its sockets were closed just as the read ended
        }
        return collected.batch();
      } catch (SQLException e) {
        session.close();
        throw afterDeadline(d).orElseGet(() -> connections.failure(e));
      } catch (StreamException e) {
        session.close();
        throw afterDeadline(d).orElse(e);
      } catch (RuntimeException e) {
        session.close();
        throw afterDeadline(d)
            .orElseGet(
                () ->
                    new StreamException(
                        StreamException.Kind.UNAVAILABLE,
                        "the replication stream failed (" + e.getClass().getSimpleName() + ")"));
      } finally {
        connections.under(null);
      }
    }
  }

  /**
   * The deadline of a read or position query starting now: {@link StreamLimits#maxCallTime()} over
   * everything it does, the replication connection it finds open included.
   */
  private PgReadDeadline within() {
    PgReadDeadline d = new PgReadDeadline(limits.maxCallTime());
    connections.under(d);
    session.link().ifPresent(open -> d.add(open::abort));
    return d;
  }

  /**
   * The failure to report when {@code d} passed: whatever the blocked call threw then is the
   * operator closing its sockets, not the database's answer. The session is closed with them.
   */
  private Optional<StreamException> afterDeadline(PgReadDeadline d) {
    if (!d.passed()) {
      return Optional.empty();
    }
    session.close();
    return Optional.of(
        new StreamException(
            StreamException.Kind.UNAVAILABLE,
            "the database did not answer within "
                + limits.maxCallTime().toMillis()
                + " ms, the bound of one stream read (connecting, checks and changes together)"));
  }

  /** Opens the replication at {@code start} unless it is open there already. */
  private void stream(long start) throws SQLException, StreamException {
    if (session.isOpenAt(start)) {
      return;
    }
    session.close();
    slot.checkNotDropped();
    if (exporting != null) {
      // One replication connection per stream: a full build's scan holds it for its snapshot.
      throw new StreamException(
          StreamException.Kind.UNAVAILABLE, "a full build's scan holds the stream's connection");
    }
    PostgresConnector.Link link = connections.connect(true);
    try {
      Connection c = link.connection();
      slot.open(c, true);
      Optional<PgSlot.Slot> existing = slot.find(c);
      if (existing.isEmpty()) {
        throw new StreamException(
            StreamException.Kind.UNAVAILABLE, "the replication slot is being created");
      }
      session.start(link, existing.get(), start);
      decoding.newSession();
    } catch (SQLException | StreamException | RuntimeException e) {
      link.close();
      throw e;
    }
  }

  /**
   * Drops the slot this stream created or the status records, when it exists; the stream is closed
   * first (a slot in use cannot be dropped). Nothing is dropped that is not recorded as this
   * filter's.
   *
   * @return whether no slot of this filter is left
   */
  public synchronized boolean dropSlot() throws StreamException {
    closeConnections();
    return slot.drop();
  }

  @Override
  public void describe(StreamStatus status) {
    slot.describe(status);
  }

  /** Closes the replication connection and the one holding a snapshot, if open. */
  private void closeConnections() {
    session.close();
    releaseExport();
  }

  @Override
  public synchronized void close() {
    closeConnections();
  }
}
