package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One read of a partitioned jdbc source ({@link JdbcPartitions}): its partitions are read on up to
 * {@code count} connections at once, one thread each, and each thread puts its own rows' keys into
 * the build ({@link KeyLanes}). The filter is the same bits as the single-connection build's (every
 * insert is an OR; counts are sums).
 *
 * <p><b>Which thread does what.</b> A reading thread ({@code jdbc-partition-i}, one per
 * connection): connects, sets its session up, runs each partition's statement and decodes its rows;
 * then, through a lane of its own, parses each value for the key type, hashes it and inserts it
 * (split-block: routed to the thread holding its block range's claim, plain writes; Guava layout:
 * atomic ORs), and every {@value KeyBatch#MAX_KEYS} rows hands their counts ({@link
 * LineParser.Counts}) to the build's thread. Until the build has handed out lanes (a thread's first
 * batch or two), and for a sink without them (the counting pass of a build without {@code
 * expectedInsertions}), it hands the keys themselves over in {@link KeyBatch}es ({@link
 * PartitionHandOver}, shared with the http source's URL lists). The build's thread (the caller of
 * {@link #read}): replays those batches into the sink (which allocates the filter at the first key,
 * under the build's reservation), asks the sink for lanes after the first batch and publishes them
 * to the reading threads, merges the counts in the order they come (keys read, malformed keys and
 * their limit, NULLs, progress, the build guard's stall check: all on this thread, as for one
 * connection), watches the deadline and stops everything on a failure.
 *
 * <p><b>Connections.</b> The build's own connection plus what {@link JdbcConnectionShares} grants
 * (never waited for); each connection takes the next partition not read yet until none is left, so
 * fewer connections read the same partitions. Every connection is made by the source's {@link
 * JdbcConnector} through a guard of its own: the egress policy, TLS rules and per-fetch byte limit
 * of the single-connection read apply to each.
 *
 * <p><b>One snapshot (PostgreSQL).</b> The first connection begins a {@code REPEATABLE READ}
 * read-only transaction and exports its snapshot ({@code pg_export_snapshot()}); every other
 * connection imports it first thing in its own such transaction ({@code SET TRANSACTION SNAPSHOT})
 * and the first keeps its transaction open until all have. All partitions thus read the same
 * committed state: a row whose partition value changes during the read is read once, in the
 * partition of its value at the snapshot (without it, a row moving from a partition not yet read to
 * one already read would be missed by both). A source reading in a change stream's snapshot ({@link
 * JdbcSource#inSnapshot}) imports that one on every connection instead.
 *
 * <p><b>MySQL/MariaDB</b>: no shared snapshot exists; the first connection checks the partition
 * column is the table's primary key ({@link MySqlPartitionKey}) before any partition is read.
 *
 * <p><b>Memory.</b> Keys cross threads in {@link KeyBatch}es until the lanes are out (and
 * throughout without them), at most {@code connections} in the hand-over queue and one being filled
 * per connection: {@code 2 × connections ×} {@link KeyBatch#maxBytes} (about 2.4 MiB per
 * connection), beside each connection's own per-fetch bound. With lanes only counts cross, and each
 * lane holds what the build bounds per lane (split-block: one 8 KiB buffer of hashes per block
 * range, docs/security.md).
 *
 * <p><b>Time and failure.</b> The whole read is bounded by {@code queryTimeout}, and each
 * partition's statement too. Any failure (of a reading thread, or of a merge on the build's thread:
 * the malformed-key limit, a stopped build), timeout or {@link #stop} drops every connection, and a
 * reading thread checks for the stop at every row, so none inserts another key; the read throws, so
 * the build fails and publishes nothing. The connection share goes back only when every reading
 * thread has ended ({@link PartitionThreads}).
 */
final class PartitionedRead {

  /**
   * How long the build's thread waits for the reading threads to end after a stop; one still
   * running afterwards keeps the connection share ({@link PartitionThreads}).
   */
  private static final long JOIN_MILLIS = 30_000;

  /** What the first connection established for the others. */
  private record Ready(ExportedSnapshot snapshot, boolean noCheck) {}

  private final JdbcSource.Parts parts;
  private final JdbcPartitions plan;
  private final ExportedSnapshot given;
  private final String namespace;

  private final List<JdbcConnectionGuard> guards = new CopyOnWriteArrayList<>();
  private final List<Connection> connections = new CopyOnWriteArrayList<>();
  private final List<JdbcStream> streams = new CopyOnWriteArrayList<>();
  private volatile PartitionHandOver handOver;
  private volatile boolean stopped;

  PartitionedRead(
      JdbcSource.Parts parts, JdbcPartitions plan, ExportedSnapshot given, String namespace) {
    this.parts = parts;
    this.plan = plan;
    this.given = given;
    this.namespace = namespace;
  }

  /** Streams every partition's keys into {@code sink} on the calling thread. */
  void read(KeySink sink) throws SourceException {
    parts.connector().checkLiteral();
    List<JdbcPartitions.Range> ranges = plan.ranges();
    JdbcConnectionShares shares = parts.settings().partitionConnections();
    // The share goes back when the last reading thread has ended, not when the join gives up.
    JdbcConnectionShares.Held extra = shares.take(namespace, ranges.size() - 1);
    int count = 1 + extra.count();
    PartitionThreads threads = new PartitionThreads(extra, count, JOIN_MILLIS);
    PartitionHandOver keys = new PartitionHandOver(count);
    handOver = keys;
    if (stopped) {
      keys.stop();
    }
    AtomicInteger next = new AtomicInteger();
    CompletableFuture<Ready> ready = new CompletableFuture<>();
    CountDownLatch imported = new CountDownLatch(count - 1);
    try {
      for (int i = 0; i < count; i++) {
        boolean first = i == 0;
        threads.start(
            () -> work(first, ranges, next, ready, imported, keys), "jdbc-partition-" + i);
      }
      keys.drain(
          sink, System.nanoTime() + parts.queryTimeout().toNanos(), () -> parts.errors().timeout());
    } finally {
      stop();
      threads.join();
    }
  }

  /** One connection: set up its session, then read partitions until none is left. */
  private void work(
      boolean first,
      List<JdbcPartitions.Range> ranges,
      AtomicInteger next,
      CompletableFuture<Ready> ready,
      CountDownLatch imported,
      PartitionHandOver keys) {
    JdbcConnector connector = parts.connector();
    JdbcConnectionGuard guard = connector.guard();
    guards.add(guard);
    AtomicBoolean timedOut = new AtomicBoolean();
    Connection connection = null;
    boolean counted = first;
    try {
      if (stopped) {
        return;
      }
      connection = connector.connect(guard);
      Connection c = connection;
      connections.add(c);
      if (stopped) {
        return;
      }
      JdbcStream stream = parts.stream();
      streams.add(stream);
      Ready session = guard.call(() -> setUp(c, first, ranges.get(0), ready, imported));
      counted = true;
      PartitionHandOver.Feed feed = keys.feed();
      for (int i = next.getAndIncrement();
          i < ranges.size() && !stopped;
          i = next.getAndIncrement()) {
        JdbcPartitions.Range range = ranges.get(i);
        JdbcDriver.Checked checked =
            parts
                .driver()
                .checked(
                    plan.wrap(parts.query(), range, parts.driver()),
                    session.noCheck(),
                    parts.settings().maxValueBytes());
        guard.call(
            () -> {
              stream.readRange(c, checked, range, feed, timedOut, guard);
              return null;
            });
      }
      feed.end();
      if (first && given == null && parts.driver() == JdbcDriver.POSTGRESQL) {
        // The exported snapshot lives as long as this transaction: until every other
        // connection has imported it (or given up).
        awaitImports(imported);
      }
      keys.ended();
    } catch (SQLException e) {
      fail(keys, parts.errors().classify(e, false, timedOut.get(), guard));
    } catch (JdbcStream.SourceFailure e) {
      fail(keys, e.cause);
    } catch (SourceException e) {
      fail(keys, e);
    } catch (PartitionHandOver.Stopped e) {
      // Another connection failed, or the build stopped the read.
    } catch (RuntimeException e) {
      // Not the operator's to show (a driver's message can quote the server); logged by nothing.
      fail(keys, new SourceException(Reasons.SOURCE_UNREADABLE, "a partition's read failed"));
    } finally {
      if (!counted) {
        imported.countDown();
      }
      if (first && !ready.isDone()) {
        ready.completeExceptionally(new PartitionHandOver.Stopped());
      }
      if (connection != null) {
        JdbcConnector.closeQuietly(connection);
      }
      guard.close();
    }
  }

  /**
   * The session of one connection: read-only; on PostgreSQL in the shared snapshot (the first
   * connection exports it, the others import it); on MySQL/MariaDB the first checks the column.
   */
  private Ready setUp(
      Connection c,
      boolean first,
      JdbcPartitions.Range sample,
      CompletableFuture<Ready> ready,
      CountDownLatch imported)
      throws SQLException {
    JdbcDriver driver = parts.driver();
    int maxValueBytes = parts.settings().maxValueBytes();
    driver.makeReadOnly(c);
    if (!first) {
      Ready session = await(ready);
      if (session.snapshot() != null) {
        importSnapshot(c, session.snapshot(), given == null);
      }
      imported.countDown();
      return session;
    }
    // The describe sends no BEGIN (see JdbcDriver), so it comes before the transaction's first
    // statement, which must be the export or the import.
    boolean noCheck =
        driver.needsNoCheck(c, plan.wrap(parts.query(), sample, driver), maxValueBytes);
    Ready session;
    if (driver != JdbcDriver.POSTGRESQL) {
      try {
        MySqlPartitionKey.check(c, parts.query(), plan.column(), parts.errors());
      } catch (SourceException e) {
        throw new JdbcStream.SourceFailure(e);
      }
      session = new Ready(null, false);
    } else if (given != null) {
      importSnapshot(c, given, false);
      session = new Ready(given, noCheck);
    } else {
      try (Statement export = c.createStatement()) {
        export.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
        try (ResultSet name = export.executeQuery("SELECT pg_export_snapshot()")) {
          name.next();
          session = new Ready(new ExportedSnapshot(name.getString(1)), noCheck);
        }
      }
    }
    ready.complete(session);
    return session;
  }

  private void importSnapshot(Connection c, ExportedSnapshot snapshot, boolean shared) {
    try (Statement set = c.createStatement()) {
      set.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      set.execute(snapshot.importStatement());
    } catch (SQLException e) {
      JdbcConnector.abortQuietly(c);
      throw new JdbcStream.SourceFailure(
          shared ? parts.errors().partitionSnapshotLost(e) : parts.errors().snapshotLost(e));
    }
  }

  private Ready await(CompletableFuture<Ready> ready) {
    while (true) {
      if (stopped) {
        throw new PartitionHandOver.Stopped();
      }
      try {
        return ready.get(100, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        // look at stopped again
      } catch (ExecutionException e) {
        throw new PartitionHandOver.Stopped();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new PartitionHandOver.Stopped();
      }
    }
  }

  private void awaitImports(CountDownLatch imported) {
    try {
      while (!imported.await(100, TimeUnit.MILLISECONDS)) {
        if (stopped) {
          throw new PartitionHandOver.Stopped();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PartitionHandOver.Stopped();
    }
  }

  private void fail(PartitionHandOver keys, SourceException e) {
    keys.fail(e);
    stop();
  }

  /**
   * Ends every connection's read at once: cancels its statement (which frees the server), drops the
   * connection and closes the sockets of any still connecting. From any thread.
   */
  void stop() {
    stopped = true;
    PartitionHandOver keys = handOver;
    if (keys != null) {
      keys.stop();
    }
    for (JdbcStream stream : streams) {
      Statement statement = stream.statement();
      if (statement != null) {
        try {
          statement.cancel();
        } catch (SQLException | RuntimeException ignored) {
          // Dropping the connection below ends the read anyway.
        }
      }
    }
    for (Connection c : connections) {
      JdbcConnector.abortQuietly(c);
    }
    for (JdbcConnectionGuard guard : guards) {
      guard.abortSockets();
    }
  }
}
