package io.bloomoperator.changes;

import io.bloomoperator.snapshot.KeyType;
import java.nio.ByteBuffer;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.postgresql.replication.PGReplicationStream;

/**
 * The decoding loop of one PostgreSQL stream: reads whole transactions of {@code pgoutput} messages
 * ({@link PgOutput}) from an open replication and collects the keys of the published table. A read
 * collects at most its share of key bytes, waits at most {@link StreamLimits#maxReadTime()} for
 * changes (and what its deadline leaves), and holds at most {@value #MAX_RELATIONS} table
 * descriptions. Deletes are counted (applied by the next full build); a TRUNCATE of the table is a
 * lost position, so a full build follows. Used under its stream's lock.
 */
final class PgDecoding {

  /** Tables described at once; a publication widened beyond that is refused. */
  static final int MAX_RELATIONS = 64;

  /** What a read leaves of its deadline when it stops collecting by itself. */
  private static final Duration DEADLINE_MARGIN = Duration.ofMillis(100);

  private final String keyColumn;
  private final KeyType keyType;
  private final StreamLimits limits;

  /** For each table described in this session, its key column's index; -1: not the table. */
  private final Map<Integer, Integer> keyIndexByRelation = new HashMap<>();

  PgDecoding(String keyColumn, KeyType keyType, StreamLimits limits) {
    this.keyColumn = keyColumn;
    this.keyType = keyType;
    this.limits = limits;
  }

  /**
   * What one read collected.
   *
   * @param batch the keys, counts and the position after the last whole transaction
   * @param partial whether part of a transaction was consumed: the replication must be opened again
   *     at the batch's position, so the transaction is read whole by the next read
   */
  record Collected(ChangeStream.Batch batch, boolean partial) {}

  /** A new replication session: the server describes its tables again. */
  void newSession() {
    keyIndexByRelation.clear();
  }

  /**
   * Reads whole transactions from {@code start} until the read's time or key bytes run out.
   *
   * @param table the published table, as the checks found it
   * @param cap key bytes this read may collect
   * @param deadlineAt {@link System#nanoTime()} at the read's deadline
   */
  Collected collect(
      PGReplicationStream replication, PgSlot.Table table, long start, long cap, long deadlineAt)
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
        PgReplicationSession.sleep(10);
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
        learn(relation, table);
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
    ChangeStream.Batch batch =
        new ChangeStream.Batch(
            List.copyOf(adds), deletes, malformed, PgReplicationSession.position(next), -1, oldest);
    return new Collected(batch, inTransaction || full);
  }

  /**
   * How far the server's reported position may pass the published one, without any change of the
   * table, before a read moves it: an eighth of the retained-log bound.
   */
  private long idleAdvance() {
    return Math.max(1, limits.maxSlotRetainedBytes() / 8);
  }

  /** Remembers which column of a table is the key: -1 for a table that is not the published one. */
  private void learn(PgOutput.Relation relation, PgSlot.Table table) throws StreamException {
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
    keyIndexByRelation.put(relation.id(), published ? relation.columns().indexOf(keyColumn) : -1);
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
}
