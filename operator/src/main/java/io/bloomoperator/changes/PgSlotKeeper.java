package io.bloomoperator.changes;

import io.bloomoperator.api.PostgresLogicalChangesSpec;
import io.bloomoperator.api.StreamStatus;
import io.bloomoperator.source.PostgresConnector;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The checks of one PostgreSQL stream's database and its replication slot ({@link PgSlot}), and the
 * slot's ownership: created by the operator and recorded in the filter's status ({@link
 * #describe}); an existing slot that is not recorded there is refused, neither read (which would
 * advance another application's slot) nor dropped. The slot is dropped when the filter is deleted
 * ({@link #drop}), and when it makes the database keep more than {@link
 * StreamLimits#maxSlotRetainedBytes()} of log ({@link #measure}). Also creates the slots that
 * export a full build's snapshot ({@link #export}). Used under its stream's lock.
 */
final class PgSlotKeeper {

  private static final Logger LOG = LoggerFactory.getLogger(PgSlotKeeper.class);

  /** How often the log the slot retains is measured (a short second connection). */
  static final Duration MEASURE_EVERY = Duration.ofSeconds(30);

  /**
   * How long a full build waits for a slot to take its consistent snapshot: the creation waits for
   * the transactions running when it starts. The build's thread, which a build place bounds.
   */
  static final Duration EXPORT_WAIT = Duration.ofSeconds(30);

  /** Names of the temporary slots that export a full build's snapshot. */
  static final String SCAN_SLOT_PREFIX = "bloom_scan_";

  private static final SecureRandom RANDOM = new SecureRandom();

  private final PostgresLogicalChangesSpec spec;
  private final StreamLimits limits;
  private final PgConnections connections;
  private final PgSlot slot;
  private final SlotIntent intent;

  /** The slot identity the filter's status records, or the one this stream created. */
  private volatile String owned;

  /**
   * A slot this operator tried to create, whether or not the creation finished in time: in this
   * process, or recorded on the pod's disk before a restart ({@link SlotIntent}).
   */
  private String attempted;

  private volatile Long retainedBytes;
  private Instant measuredAt;
  private boolean dropped;

  /** The published table, as the last check found it. */
  private PgSlot.Table table;

  /** How long a slot's creation may wait for running transactions ({@link #EXPORT_WAIT}). */
  private final Duration exportWait;

  /** Transactions recorded at most as blockers of an export (the server's running ones). */
  static final int MAX_BLOCKERS = 4096;

  /**
   * The transactions (ids as text) that were running when an export last waited in vain, or empty:
   * while one of them still runs, another export would likely wait in vain too.
   */
  private java.util.List<String> blockers = java.util.List.of();

  PgSlotKeeper(
      PostgresLogicalChangesSpec spec,
      StreamLimits limits,
      PgConnections connections,
      String recordedSlot,
      Duration exportWait,
      SlotIntent intent) {
    this.spec = spec;
    this.limits = limits;
    this.connections = connections;
    this.slot = new PgSlot(spec);
    this.owned = recordedSlot;
    this.exportWait = exportWait;
    this.intent = intent;
    // Only a record of this spec's slot name: a record of a former name is not this slot.
    this.attempted = intent.read().filter(id -> id.endsWith("/" + spec.getSlot())).orElse(null);
  }

  /** How long a slot's creation may wait for running transactions. */
  Duration exportWait() {
    return exportWait;
  }

  /** The published table, as the last check found it (null before any). */
  PgSlot.Table table() {
    return table;
  }

  /** The slot of the spec's name, as the server shows it now. */
  Optional<PgSlot.Slot> find(Connection c) throws SQLException {
    return slot.find(c);
  }

  /** Refuses a stream whose slot was dropped for the log it retained. */
  void checkNotDropped() throws StreamException {
    if (dropped) {
      throw droppedForRetention();
    }
  }

  /**
   * Checks the database and the slot on a replication connection and creates the slot when there is
   * none; refuses a slot that is there and is not this filter's.
   *
   * @param streaming whether the slot is about to be read: then it must be free (within a second)
   */
  void open(Connection c, boolean streaming) throws SQLException, StreamException {
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
    intent.write(identity);
    try {
      slot.create(c);
    } catch (SQLException e) {
      forgetIfTaken(e);
      throw e;
    }
    owned = identity;
    LOG.info("created replication slot {} for a change stream", spec.getSlot());
  }

  /**
   * Refuses, at once, while a transaction that made the last export wait in vain still runs: the
   * next export would wait in vain too, and a full build tried again and again would scan the
   * source for nothing. A stream probed while it runs fails, so the stream backs off rather than
   * starting full builds.
   */
  void checkNotBlocked(Connection c) throws SQLException, StreamException {
    if (blockers.isEmpty()) {
      return;
    }
    // Each transaction holds the lock of its own id until it ends (pg_locks, which every role
    // may read): exact, whatever the ids' wraparound.
    try (java.sql.PreparedStatement s =
        c.prepareStatement(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid'"
                + " AND mode = 'ExclusiveLock' AND granted"
                + " AND transactionid::text = ANY(string_to_array(?, ','))")) {
      s.setString(1, String.join(",", blockers));
      try (java.sql.ResultSet r = s.executeQuery()) {
        if (r.next() && r.getLong(1) > 0) {
          throw new StreamException(
              StreamException.Kind.UNAVAILABLE,
              "a transaction that kept the last full build from taking a consistent snapshot is"
                  + " still running; the stream resumes after a full build once it ends");
        }
      }
    }
    blockers = java.util.List.of();
  }

  /**
   * The transactions running now (their ids as text), at most {@link #MAX_BLOCKERS}; empty when
   * there are more (then none is recorded as blocking).
   */
  private static java.util.List<String> running(Connection c) throws SQLException {
    java.util.List<String> ids = new java.util.ArrayList<>();
    try (java.sql.Statement s = c.createStatement();
        java.sql.ResultSet r =
            s.executeQuery(
                "SELECT transactionid::text FROM pg_locks WHERE locktype = 'transactionid'"
                    + " AND mode = 'ExclusiveLock' AND granted LIMIT "
                    + (MAX_BLOCKERS + 1))) {
      while (r.next()) {
        ids.add(r.getString(1));
      }
    }
    return ids.size() > MAX_BLOCKERS ? java.util.List.of() : java.util.List.copyOf(ids);
  }

  /**
   * Checks the database and creates a slot that exports its snapshot, on a replication connection
   * that must then stay open and idle while the snapshot is used: the filter's slot when there is
   * none yet, else a temporary one ({@value #SCAN_SLOT_PREFIX}…). Waits at most {@link
   * #exportWait()} for the transactions running when the creation starts; while one that made an
   * earlier export wait in vain still runs, refuses at once ({@link #checkNotBlocked}).
   */
  PgSlot.Export export(Connection c) throws SQLException, StreamException {
    table = slot.check(c);
    String identity = slot.identity(c);
    Optional<PgSlot.Slot> existing = ours(c, identity);
    checkNotBlocked(c);
    java.util.List<String> runningAtStart = running(c);
    int seconds = (int) Math.max(1, exportWait.toSeconds());
    try {
      if (existing.isPresent()) {
        return slot.createExporting(c, scanSlotName(), true, seconds);
      }
      attempted = identity;
      intent.write(identity);
      PgSlot.Export export;
      try {
        export = slot.createExporting(c, spec.getSlot(), false, seconds);
      } catch (SQLException e) {
        forgetIfTaken(e);
        throw e;
      }
      owned = identity;
      LOG.info("created replication slot {} for a change stream", spec.getSlot());
      return export;
    } catch (SQLException e) {
      if ("57014".equals(e.getSQLState())) {
        blockers = runningAtStart; // one of the transactions running then did not end in time
      }
      throw e;
    }
  }

  /**
   * Forgets the record of a creation that found a slot of that name already there: created by
   * someone else since it was checked, so not this filter's.
   */
  private void forgetIfTaken(SQLException e) {
    if ("42710".equals(e.getSQLState())) {
      attempted = null;
      intent.clear();
    }
  }

  /** A fresh name for a temporary slot that exports a full build's snapshot. */
  private static String scanSlotName() {
    return SCAN_SLOT_PREFIX + Long.toHexString(RANDOM.nextLong() & Long.MAX_VALUE);
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
      PgReplicationSession.sleep(50);
      Optional<PgSlot.Slot> now = slot.find(c);
      if (now.isEmpty() || !now.get().active()) {
        return true;
      }
    }
    return false;
  }

  /**
   * Opens and checks the slot without streaming (for a position asked before any read); nothing to
   * do when it is this stream's and {@code streaming} already.
   */
  void ensure(boolean streaming) throws StreamException {
    checkNotDropped();
    if (owned != null && streaming) {
      return;
    }
    try (PostgresConnector.Link link = connections.connect(true)) {
      open(link.connection(), false);
    } catch (SQLException e) {
      throw connections.failure(e);
    }
  }

  /**
   * Measures the log the slot retains, every {@link #MEASURE_EVERY}; drops the slot when it is
   * above the bound (the database's disk matters more than this filter's freshness), after {@code
   * closeConnections} ended what uses it.
   */
  void measure(Runnable closeConnections) throws SQLException, StreamException {
    if (owned == null) {
      return; // nothing of the operator's to measure (yet): a slot not ours is not described
    }
    if (measuredAt != null
        && Duration.between(measuredAt, Instant.now()).compareTo(MEASURE_EVERY) < 0) {
      return;
    }
    Optional<Long> retained;
    try (PostgresConnector.Link link = connections.connect(false)) {
      retained = slot.retainedBytes(link.connection());
    }
    measuredAt = Instant.now();
    retainedBytes = retained.orElse(null);
    if (retained.isPresent() && retained.get() > limits.maxSlotRetainedBytes()) {
      closeConnections.run();
      drop();
      dropped = true;
      throw droppedForRetention();
    }
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
   * Drops the slot this stream created or the status records, when it exists; its connections must
   * be closed first (a slot in use cannot be dropped). Nothing is dropped that is not recorded as
   * this filter's.
   *
   * @return whether no slot of this filter is left
   */
  boolean drop() throws StreamException {
    if (owned == null) {
      return true;
    }
    try (PostgresConnector.Link link = connections.connect(true)) {
      Connection c = link.connection();
      if (!owned.equals(slot.identity(c))) {
        return true; // the recorded slot is another server's or database's: not reachable here
      }
      if (slot.find(c).isPresent()) {
        slot.drop(c);
        LOG.info("dropped replication slot {}", spec.getSlot());
      }
      intent.clear();
      owned = null;
      retainedBytes = null;
      return true;
    } catch (SQLException e) {
      throw connections.failure(e);
    }
  }

  /** Writes the slot this stream owns and the log it retains into {@code status}. */
  void describe(StreamStatus status) {
    // A record is only replaced, never cleared here: a slot the status names and this stream does
    // not own (yet) is one a former spec created, which FilterRuns still has to drop.
    String slotOwned = owned;
    if (slotOwned != null) {
      status.setSlot(slotOwned);
    }
    status.setRetainedWalBytes(retainedBytes);
  }
}
