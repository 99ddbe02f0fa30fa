package io.bloomoperator.changes;

import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.PostgresConnector;
import io.bloomoperator.source.SourceException;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The changes of one PostgreSQL table read through logical replication ({@code pgoutput}, protocol
 * version 1, decoded by {@link PgOutput}) on a slot the operator creates for the filter.
 *
 * <ul>
 *   <li><b>Position.</b> Partition 0 of the {@link StreamPosition} is the log position (LSN) after
 *       the last complete transaction read: it advances only at a Commit (or, between transactions,
 *       to where the server says it has sent everything), so a read resumes at a transaction
 *       boundary and a transaction is applied whole or read again.
 *   <li><b>Confirmation.</b> The server keeps the log from the slot's confirmed position on. The
 *       operator confirms only the position a read starts from, which is the one the published
 *       version records, never one read but not yet published: an operator killed at any point
 *       loses nothing, since the server still has everything after the published position.
 *   <li><b>Slot ownership.</b> The slot is created by the operator when the stream opens and
 *       recorded in the filter's status ({@link #describe}); an existing slot that is not recorded
 *       there is refused, neither read (which would advance another application's slot) nor
 *       dropped. It is dropped when the filter is deleted ({@link #dropSlot}), and when it makes
 *       the database keep more than {@link StreamLimits#maxSlotRetainedBytes()} of log.
 *   <li><b>Bounds.</b> Every message the server sends is bounded on the socket ({@code
 *       PostgresConnector}); a read collects at most its share of key bytes, waits at most {@link
 *       StreamLimits#maxReadTime()} for changes, and holds at most {@value #MAX_RELATIONS} table
 *       descriptions.
 * </ul>
 *
 * <p>Deletes are counted (applied by the next full build); a TRUNCATE of the table makes the stream
 * report a lost position, so a full build follows.
 */
public final class PostgresLogicalStream implements ChangeStream {

  private static final Logger LOG = LoggerFactory.getLogger(PostgresLogicalStream.class);

  /** Tables described at once; a publication widened beyond that is refused. */
  static final int MAX_RELATIONS = 64;

  /** How often the log the slot retains is measured (a short second connection). */
  static final Duration MEASURE_EVERY = Duration.ofSeconds(30);

  /** Socket read timeout of every connection: no call may hold a reconcile thread longer. */
  private static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(PgSlot.STATEMENT_SECONDS);

  /**
   * How long a full build waits for a slot to take its consistent snapshot: the creation waits for
   * the transactions running when it starts. The build's thread, which a build place bounds.
   */
  static final Duration EXPORT_WAIT = Duration.ofSeconds(30);

  /** Socket reads of the exporting connection: longer than the creation may take. */
  private static final Duration EXPORT_SOCKET_TIMEOUT = EXPORT_WAIT.plusSeconds(5);

  /** What a read leaves of its deadline when it stops collecting by itself. */
  private static final Duration DEADLINE_MARGIN = Duration.ofMillis(100);

  /** Names of the temporary slots that export a full build's snapshot. */
  static final String SCAN_SLOT_PREFIX = "bloom_scan_";

  private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

  /** Largest message besides a key: a table description of names and types, and headers. */
  private static final int MESSAGE_OVERHEAD = 64 * 1024;

  private final PostgresLogicalChangesSpec spec;
  private final KeyType keyType;
  private final StreamLimits limits;
  private final PostgresConnector connector;
  private final PgSlot slot;
  private final long messageLimit;

  /** The slot identity the filter's status records, or the one this stream created. */
  private volatile String owned;

  /** A slot this process tried to create, whether or not the creation finished in time. */
  private String attempted;

  private volatile Long retainedBytes;
  private Instant measuredAt;
  private boolean dropped;

  /** The replication connection while the stream is open, and its replication stream. */
  private PostgresConnector.Link session;

  private PGReplicationStream replication;

  /** The deadline of the read (or position query) under way, or null: none. */
  private PgReadDeadline deadline;

  /** The replication connection holding a full build's exported snapshot, until its scan ends. */
  private PostgresConnector.Link exporting;

  /** Where the open replication stands: the position after the last read, or -1. */
  private long at = -1;

  private long confirmed = -1;

  /** For each table described in this session, its key column's index; -1: not the table. */
  private final Map<Integer, Integer> keyIndexByRelation = new HashMap<>();

  /** The published table, as the last check found it. */
  private PgSlot.Table table;

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
    this.spec = spec;
    this.keyType = keyType;
    this.limits = limits;
    this.connector = connector;
    this.slot = new PgSlot(spec);
    this.owned = recordedSlot;
    this.messageLimit = (long) limits.maxEventBytes() + MESSAGE_OVERHEAD;
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
        ensureSlot();
        try (PostgresConnector.Link link = connect(false);
            Statement s = link.connection().createStatement();
            var r = s.executeQuery("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")) {
          r.next();
          StreamPosition now = position(r.getLong(1));
          d.close();
          if (d.passed()) {
            closeSession(); // its sockets were closed just as the query ended
          }
          return now;
        }
      } catch (SQLException e) {
        throw afterDeadline(d).orElseGet(() -> failure(e));
      } catch (StreamException e) {
        throw afterDeadline(d).orElse(e);
      } finally {
        deadline = null;
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
   * waits for the transactions running at that moment to end, at most {@link #EXPORT_WAIT}: a
   * longer one fails this call (the build is published without a position and the stream backs off
   * until a later full build).
   */
  @Override
  public synchronized ScanStart scanStart(Instant time) throws StreamException {
    if (dropped) {
      throw droppedForRetention();
    }
    closeSession();
    releaseExport();
    PostgresConnector.Link link;
    try {
      link = connect(true, EXPORT_SOCKET_TIMEOUT);
    } catch (SQLException e) {
      throw failure(e);
    }
    try {
      Connection c = link.connection();
      table = slot.check(c);
      String identity = slot.identity(c);
      Optional<PgSlot.Slot> existing = ours(c, identity);
      int seconds = (int) EXPORT_WAIT.toSeconds();
      PgSlot.Export export;
      if (existing.isEmpty()) {
        attempted = identity;
        export = slot.createExporting(c, spec.getSlot(), false, seconds);
        owned = identity;
        LOG.info("created replication slot {} for a change stream", spec.getSlot());
      } else {
        export = slot.createExporting(c, scanSlotName(), true, seconds);
      }
      exporting = link;
      return ScanStart.inSnapshot(
          position(export.consistentPoint()), export.snapshot(), () -> release(link));
    } catch (SQLException e) {
      link.close();
      if ("57014".equals(e.getSQLState())) {
        throw new StreamException(
            StreamException.Kind.UNAVAILABLE,
            "a transaction of the database ran longer than "
                + EXPORT_WAIT.toSeconds()
                + " s past the full build's start, so no replication slot could take a consistent"
                + " snapshot; the stream resumes after a later full build");
      }
      throw failure(e);
    } catch (StreamException | RuntimeException e) {
      link.close();
      throw e;
    }
  }

  /** A fresh name for a temporary slot that exports a full build's snapshot. */
  private static String scanSlotName() {
    return SCAN_SLOT_PREFIX + Long.toHexString(RANDOM.nextLong() & Long.MAX_VALUE);
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
        measure();
        stream(start);
        confirm(start);
        Batch batch = collect(start, cap, d.at());
        d.close();
        if (d.passed()) {
          closeSession(); // its sockets were closed just as the read ended
        }
        return batch;
      } catch (SQLException e) {
        closeSession();
        throw afterDeadline(d).orElseGet(() -> failure(e));
      } catch (StreamException e) {
        closeSession();
        throw afterDeadline(d).orElse(e);
      } catch (RuntimeException e) {
        closeSession();
        throw afterDeadline(d)
            .orElseGet(
                () ->
                    new StreamException(
                        StreamException.Kind.UNAVAILABLE,
                        "the replication stream failed (" + e.getClass().getSimpleName() + ")"));
      } finally {
        deadline = null;
      }
    }
  }

  /**
   * The deadline of a read or position query starting now: {@link StreamLimits#maxCallTime()} over
   * everything it does, the replication connection it finds open included.
   */
  private PgReadDeadline within() {
    PgReadDeadline d = new PgReadDeadline(limits.maxCallTime());
    deadline = d;
    PostgresConnector.Link open = session;
    if (open != null) {
      d.add(open::abort);
    }
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
    closeSession();
    return Optional.of(
        new StreamException(
            StreamException.Kind.UNAVAILABLE,
            "the database did not answer within "
                + limits.maxCallTime().toMillis()
                + " ms, the bound of one stream read (connecting, checks and changes together)"));
  }

  /** Reads whole transactions from {@code start} until the read's time or key bytes run out. */
  private Batch collect(long start, long cap, long deadlineAt)
      throws SQLException, StreamException {
    List<String> adds = new ArrayList<>();
    List<String> pending = new ArrayList<>();
    long deletes = 0;
    long pendingDeletes = 0;
    long malformed = 0;
    long pendingMalformed = 0;
    long bytes = 0;
    long pendingBytes = 0;
    boolean inTransaction = false;
    long next = start;
    Instant oldest = null;
    long began = System.nanoTime();
    // Within what the read's deadline leaves (connecting and the checks took their part), with a
    // margin: a read that ends by itself keeps its session.
    long last = deadlineAt - DEADLINE_MARGIN.toNanos();
    long until = Math.min(began + limits.maxReadTime().toNanos(), last);
    // A transaction still arriving at the read's end may finish within the call's bound: else a
    // transaction longer to send than one read would be started over for ever.
    long latest = Math.min(began + limits.maxCallTime().toNanos() / 2, last);
    boolean full = false;
    while (!full && (System.nanoTime() < until || inTransaction && System.nanoTime() < latest)) {
      ByteBuffer message = replication.readPending();
      if (message == null) {
        if (!inTransaction) {
          // Between transactions the server's last report says up to where it sent everything.
          long seen = replication.getLastReceiveLSN().asLong();
          if (seen > next) {
            next = seen;
          }
          if (!adds.isEmpty() || deletes > 0 || malformed > 0) {
            break; // caught up: publish what was read rather than wait for more
          }
        }
        sleep(10);
        continue;
      }
      PgOutput.Message decoded;
      try {
        decoded = PgOutput.decode(message);
      } catch (PgOutput.Malformed e) {
        throw new StreamException(
            StreamException.Kind.UNAVAILABLE,
            "the server sent a replication message this operator cannot read ("
                + e.getMessage()
                + ")");
      }
      if (decoded instanceof PgOutput.Begin) {
        inTransaction = true;
        pending.clear();
        pendingDeletes = 0;
        pendingMalformed = 0;
        pendingBytes = 0;
      } else if (decoded instanceof PgOutput.Relation relation) {
        learn(relation);
      } else if (decoded instanceof PgOutput.Row row) {
        Integer index = keyIndexByRelation.get(row.relation());
        if (index == null || index < 0) {
          continue; // another table: not this stream's (the publication was widened)
        }
        String key = key(row, index);
        if (key == null) {
          pendingMalformed++;
          continue;
        }
        long more = StreamLimits.keyBytes(key.length());
        if (pendingBytes + more > limits.maxReadBytes()) {
          throw new StreamException(
              StreamException.Kind.POSITION_LOST,
              "a transaction changed more keys than one read holds; a full build reads them");
        }
        if (bytes + pendingBytes + more > cap) {
          full = true; // the transaction is read again, whole, by the next read
          continue;
        }
        pending.add(key);
        pendingBytes += more;
      } else if (decoded instanceof PgOutput.Delete delete) {
        Integer index = keyIndexByRelation.get(delete.relation());
        if (index != null && index >= 0) {
          pendingDeletes++;
        }
      } else if (decoded instanceof PgOutput.Truncate truncate) {
        for (int relation : truncate.relations()) {
          Integer index = keyIndexByRelation.get(relation);
          if (index != null && index >= 0) {
            throw new StreamException(
                StreamException.Kind.POSITION_LOST,
                "the published table was truncated; a full build reads it again");
          }
        }
      } else if (decoded instanceof PgOutput.Commit commit) {
        inTransaction = false;
        adds.addAll(pending);
        deletes += pendingDeletes;
        malformed += pendingMalformed;
        bytes += pendingBytes;
        pending.clear();
        next = commit.endLsn();
        if (oldest == null || commit.at().isBefore(oldest)) {
          oldest = commit.at();
        }
      }
    }
    if (adds.isEmpty() && deletes == 0 && malformed == 0 && next - start < idleAdvance()) {
      // Only the log of other tables went by: a new position alone would be a publish (a
      // manifest write) every read. It is published once the slot would keep a share of its
      // bound, so a quiet table does not make the slot hold the whole database's log.
      next = start;
    }
    if (inTransaction || full) {
      // Part of a transaction was consumed: the next read starts over at its beginning.
      closeSession();
    } else {
      at = next;
    }
    return new Batch(List.copyOf(adds), deletes, malformed, position(next), -1, oldest);
  }

  /**
   * How far the server's reported position may pass the published one, without any change of the
   * table, before a read moves it: an eighth of the retained-log bound.
   */
  private long idleAdvance() {
    return Math.max(1, limits.maxSlotRetainedBytes() / 8);
  }

  /** Remembers which column of a table is the key: -1 for a table that is not the published one. */
  private void learn(PgOutput.Relation relation) throws StreamException {
    if (!keyIndexByRelation.containsKey(relation.id())
        && keyIndexByRelation.size() >= MAX_RELATIONS) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "the publication sends changes of more than " + MAX_RELATIONS + " tables");
    }
    boolean published =
        table != null
            && table.schema().equals(relation.namespace())
            && table.name().equals(relation.name());
    keyIndexByRelation.put(
        relation.id(), published ? relation.columns().indexOf(spec.getKeyColumn()) : -1);
  }

  /** The row's key as text, or null when it is not a key of the filter's type. */
  private String key(PgOutput.Row row, int index) {
    if (index >= row.values().size()) {
      return null;
    }
    PgOutput.Value value = row.values().get(index);
    if (value.kind() != PgOutput.Value.Kind.TEXT || value.text().length > limits.maxEventBytes()) {
      return null;
    }
    String key = value.string();
    if (keyType == KeyType.LONG) {
      try {
        Long.parseLong(key);
      } catch (NumberFormatException e) {
        return null;
      }
    }
    return key;
  }

  /** Opens the replication at {@code start} unless it is open there already. */
  private void stream(long start) throws SQLException, StreamException {
    if (replication != null && at == start && !replication.isClosed()) {
      return;
    }
    closeSession();
    if (dropped) {
      throw droppedForRetention();
    }
    if (exporting != null) {
      // One replication connection per stream: a full build's scan holds it for its snapshot.
      throw new StreamException(
          StreamException.Kind.UNAVAILABLE, "a full build's scan holds the stream's connection");
    }
    PostgresConnector.Link link = connect(true);
    try {
      Connection c = link.connection();
      openSlot(c, true);
      Optional<PgSlot.Slot> existing = slot.find(c);
      if (existing.isEmpty()) {
        throw new StreamException(
            StreamException.Kind.UNAVAILABLE, "the replication slot is being created");
      }
      if (start < existing.get().confirmedFlush()) {
        // The server would silently start at its confirmed position: whatever lies between was
        // never published, so only a full build catches up (the slot was created again).
        throw new StreamException(
            StreamException.Kind.POSITION_LOST,
            "the replication slot no longer has the published position (it was created again);"
                + " a full build starts the stream over");
      }
      keyIndexByRelation.clear();
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
      session = link;
      at = start;
      confirmed = -1;
    } catch (SQLException | StreamException | RuntimeException e) {
      link.close();
      throw e;
    }
  }

  /**
   * Checks the database and the slot on a replication connection and creates the slot when there is
   * none; refuses a slot that is there and is not this filter's.
   */
  private void openSlot(Connection c, boolean streaming) throws SQLException, StreamException {
    table = slot.check(c);
    String identity = slot.identity(c);
    Optional<PgSlot.Slot> existing = ours(c, identity);
    if (existing.isPresent()) {
      if (existing.get().active() && streaming && !released(c)) {
        throw new StreamException(
            StreamException.Kind.UNAVAILABLE, "the replication slot is in use by a connection");
      }
      return;
    }
    attempted = identity;
    slot.create(c);
    owned = identity;
    LOG.info("created replication slot {} for a change stream", spec.getSlot());
  }

  /**
   * The slot of the spec's name when there is one and it is this filter's ({@code identity} is the
   * one recorded or attempted); refuses one that is not, or is not a pgoutput slot of this
   * database.
   */
  private Optional<PgSlot.Slot> ours(Connection c, String identity)
      throws SQLException, StreamException {
    Optional<PgSlot.Slot> existing = slot.find(c);
    if (existing.isEmpty()) {
      return existing;
    }
    if (!identity.equals(owned) && !identity.equals(attempted)) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "a replication slot named spec.changes.postgresLogical.slot exists and was not"
              + " created by the operator for this filter; it is neither read nor dropped"
              + " (name another slot, or drop that one if nothing uses it)");
    }
    if (!existing.get().logicalPgoutput() || !existing.get().thisDatabase()) {
      throw new StreamException(
          StreamException.Kind.REFUSED,
          "the replication slot is not a pgoutput slot of this database");
    }
    owned = identity;
    return existing;
  }

  /**
   * Whether the slot becomes free within a second: the operator's own connection, closed just
   * before (a read that failed or ended inside a transaction), takes the server a moment to end.
   */
  private boolean released(Connection c) throws SQLException {
    long until = System.nanoTime() + Duration.ofSeconds(1).toNanos();
    while (System.nanoTime() < until) {
      sleep(50);
      Optional<PgSlot.Slot> now = slot.find(c);
      if (now.isEmpty() || !now.get().active()) {
        return true;
      }
    }
    return false;
  }

  /** Opens and checks the slot without streaming (for a position asked before any read). */
  private void ensureSlot() throws StreamException {
    if (dropped) {
      throw droppedForRetention();
    }
    if (owned != null && replication != null) {
      return;
    }
    try (PostgresConnector.Link link = connect(true)) {
      openSlot(link.connection(), false);
    } catch (SQLException e) {
      throw failure(e);
    }
  }

  /** Confirms {@code position}, the published one, to the server: it may free the log before. */
  private void confirm(long position) throws SQLException {
    if (position == confirmed) {
      return;
    }
    LogSequenceNumber lsn = LogSequenceNumber.valueOf(position);
    replication.setFlushedLSN(lsn);
    replication.setAppliedLSN(lsn);
    replication.forceUpdateStatus();
    confirmed = position;
  }

  /**
   * Measures the log the slot retains, every {@link #MEASURE_EVERY}; drops the slot when it is
   * above the bound (the database's disk matters more than this filter's freshness).
   */
  private void measure() throws SQLException, StreamException {
    if (!isOwned()) {
      return; // nothing of the operator's to measure (yet): a slot not ours is not described
    }
    if (measuredAt != null
        && Duration.between(measuredAt, Instant.now()).compareTo(MEASURE_EVERY) < 0) {
      return;
    }
    Optional<Long> retained;
    try (PostgresConnector.Link link = connect(false)) {
      retained = slot.retainedBytes(link.connection());
    }
    measuredAt = Instant.now();
    retainedBytes = retained.orElse(null);
    if (retained.isPresent() && retained.get() > limits.maxSlotRetainedBytes()) {
      closeSession();
      dropSlot();
      dropped = true;
      throw droppedForRetention();
    }
  }

  private boolean isOwned() {
    return owned != null;
  }

  private StreamException droppedForRetention() {
    return new StreamException(
        StreamException.Kind.REFUSED,
        "the replication slot made the database keep more than BLOOM_PG_SLOT_MAX_RETAINED_BYTES ("
            + limits.maxSlotRetainedBytes()
            + " bytes) of write-ahead log and was dropped; the filter is served from full builds"
            + " until the stream is created again (change spec.changes or restart the operator)");
  }

  /**
   * Drops the slot this stream created or the status records, when it exists; the stream is closed
   * first (a slot in use cannot be dropped). Nothing is dropped that is not recorded as this
   * filter's.
   *
   * @return whether no slot of this filter is left
   */
  public synchronized boolean dropSlot() throws StreamException {
    closeSession();
    releaseExport();
    if (owned == null) {
      return true;
    }
    try (PostgresConnector.Link link = connect(true)) {
      Connection c = link.connection();
      if (!owned.equals(slot.identity(c))) {
        return true; // the recorded slot is another server's or database's: not reachable here
      }
      if (slot.find(c).isPresent()) {
        slot.drop(c);
        LOG.info("dropped replication slot {}", spec.getSlot());
      }
      owned = null;
      retainedBytes = null;
      return true;
    } catch (SQLException e) {
      throw failure(e);
    }
  }

  @Override
  public void describe(StreamStatus status) {
    // A record is only replaced, never cleared here: a slot the status names and this stream does
    // not own (yet) is one a former spec created, which FilterRuns still has to drop.
    if (owned != null) {
      status.setSlot(owned);
    }
    status.setRetainedWalBytes(retainedBytes);
  }

  private PostgresConnector.Link connect(boolean forReplication)
      throws SQLException, StreamException {
    return connect(forReplication, SOCKET_TIMEOUT);
  }

  private PostgresConnector.Link connect(boolean forReplication, Duration socketTimeout)
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
  private StreamException failure(SQLException e) {
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

  private static StreamPosition position(long lsn) {
    TreeMap<Integer, Long> offsets = new TreeMap<>();
    offsets.put(0, lsn);
    return new StreamPosition(offsets);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void closeSession() {
    at = -1;
    replication = null;
    PostgresConnector.Link link = session;
    session = null;
    if (link != null) {
      link.close();
    }
  }

  @Override
  public synchronized void close() {
    closeSession();
    releaseExport();
  }
}
