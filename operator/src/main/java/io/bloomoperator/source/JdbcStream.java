package io.bloomoperator.source;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The streaming read loop of one connection: makes the session read-only, runs the checked
 * statement forward-only with the fetch size that makes the driver stream, resets the per-fetch
 * byte limit before every fetch, and hands each row to the column reader. A watchdog bounds the
 * whole read by {@code queryTimeout} (see {@link JdbcSource}, "Timeouts"). A read that fails midway
 * drops the connection, so the driver does not drain the rest of the result first.
 */
final class JdbcStream {

  /** Cancels statements whose read runs over its timeout. */
  private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

  private final JdbcDriver driver;
  private final String query;
  private final JdbcSourceSettings settings;
  private final int fetchSize;
  private final Duration queryTimeout;
  private final ExportedSnapshot snapshot;
  private final JdbcErrors errors;
  private final JdbcColumns columns;

  /** The statement under way, for {@link JdbcSource#cancel}. */
  private volatile Statement statement;

  JdbcStream(
      JdbcDriver driver,
      String query,
      JdbcSourceSettings settings,
      int fetchSize,
      Duration queryTimeout,
      ExportedSnapshot snapshot,
      JdbcErrors errors) {
    this.driver = driver;
    this.query = query;
    this.settings = settings;
    this.fetchSize = fetchSize;
    this.queryTimeout = queryTimeout;
    this.snapshot = snapshot;
    this.errors = errors;
    this.columns = new JdbcColumns(settings.maxValueBytes(), errors);
  }

  /** Carries a {@link SourceException} through {@link JdbcConnectionGuard#call}. */
  static final class SourceFailure extends RuntimeException {
    final SourceException cause;

    SourceFailure(SourceException cause) {
      super(null, null, false, false);
      this.cause = cause;
    }
  }

  /** The statement under way, or null. */
  Statement statement() {
    return statement;
  }

  /**
   * Streams every row of the query on {@code connection} into {@code sink}, with {@code guard}
   * bound; sets {@code timedOut} when the watchdog ended the read.
   *
   * @throws SourceFailure carrying the source's own failures (limits, timeout, snapshot)
   */
  void read(Connection connection, KeySink sink, AtomicBoolean timedOut, JdbcConnectionGuard guard)
      throws SQLException {
    watched(
        connection,
        timedOut,
        guard,
        running -> {
          driver.makeReadOnly(connection);
          streamRows(connection, sink, timedOut, running, guard);
        });
  }

  /**
   * Streams the rows of one partition ({@code checked}, bounds bound from {@code range}) on a
   * connection whose session is set up already ({@link PartitionedRead}), under a watchdog of its
   * own.
   */
  void readRange(
      Connection connection,
      JdbcDriver.Checked checked,
      JdbcPartitions.Range range,
      KeySink sink,
      AtomicBoolean timedOut,
      JdbcConnectionGuard guard)
      throws SQLException {
    watched(
        connection,
        timedOut,
        guard,
        running -> {
          try (PreparedStatement statement =
              connection.prepareStatement(
                  checked.sql(), ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
            running.set(statement);
            this.statement = statement;
            statement.setFetchSize(driver.fetchSize(fetchSize));
            statement.setQueryTimeout(timeoutSeconds());
            range.bind(statement);
            Runnable driverFetchReset = driver.fetchReset(connection);
            guard.newFetch();
            driverFetchReset.run();
            ResultSet rows = driverCall(statement::executeQuery);
            readRows(connection, rows, checked.flagged(), sink, timedOut, guard, driverFetchReset);
          }
        });
  }

  /** The part of a read the watchdog bounds. */
  @FunctionalInterface
  private interface Body {
    void run(AtomicReference<Statement> running) throws SQLException;
  }

  /**
   * Runs {@code body}; when it runs over {@code queryTimeout}, cancels and drops the connection.
   */
  private void watched(
      Connection connection, AtomicBoolean timedOut, JdbcConnectionGuard guard, Body body)
      throws SQLException {
    AtomicReference<Statement> running = new AtomicReference<>();
    ScheduledFuture<?> watchdog =
        WATCHDOG.schedule(
            () -> {
              timedOut.set(true);
              Statement statement = running.get();
              if (statement != null) {
                try {
                  // The cancel may open a connection of its own: checked like the first.
                  guard.call(
                      () -> {
                        statement.cancel(); // frees the server
                        return null;
                      });
                } catch (SQLException | RuntimeException ignored) {
                  // Dropping the connection below ends the read anyway.
                }
              }
              // A read blocked on a connection that stopped delivering (a stalled server or
              // network) sees neither the flag nor the cancel's answer; only the socket timeout
              // (queryTimeout plus a minute) would end it. Dropping the connection ends it now
              // (MariaDB Connector/J first connects again to kill the session: checked too).
              try {
                guard.call(
                    () -> {
                      JdbcConnector.abortQuietly(connection);
                      return null;
                    });
              } catch (SQLException | RuntimeException ignored) {
                // abortQuietly throws nothing; the guard's binding cannot fail.
              }
            },
            queryTimeout.toMillis(),
            TimeUnit.MILLISECONDS);
    try {
      body.run(running);
    } finally {
      watchdog.cancel(false);
      statement = null;
    }
  }

  private void streamRows(
      Connection connection,
      KeySink sink,
      AtomicBoolean timedOut,
      AtomicReference<Statement> running,
      JdbcConnectionGuard guard)
      throws SQLException {
    try (Statement statement =
        connection.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
      running.set(statement);
      this.statement = statement;
      statement.setFetchSize(driver.fetchSize(fetchSize));
      statement.setQueryTimeout(timeoutSeconds());
      Runnable driverFetchReset = driver.fetchReset(connection);
      guard.newFetch();
      driverFetchReset.run();
      JdbcDriver.Checked checked = driver.checked(connection, query, settings.maxValueBytes());
      if (snapshot != null) {
        // After the describe above (which sends no BEGIN, so it cannot abort this transaction)
        // and before the query: an exported snapshot is imported first thing in a transaction.
        try (Statement set = connection.createStatement()) {
          set.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
          set.execute(snapshot.importStatement());
        } catch (SQLException e) {
          JdbcConnector.abortQuietly(connection);
          throw new SourceFailure(errors.snapshotLost(e));
        }
      }
      guard.newFetch();
      driverFetchReset.run();
      ResultSet rows = driverCall(() -> statement.executeQuery(checked.sql()));
      readRows(connection, rows, checked.flagged(), sink, timedOut, guard, driverFetchReset);
    }
  }

  /** The statement timeout: {@code queryTimeout} in whole seconds, at least one. */
  int timeoutSeconds() {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, (queryTimeout.toMillis() + 999) / 1000));
  }

  /**
   * Hands every row of {@code rows} to the sink; closes them, or drops the connection on failure.
   */
  void readRows(
      Connection connection,
      ResultSet rows,
      boolean flagged,
      KeySink sink,
      AtomicBoolean timedOut,
      JdbcConnectionGuard guard,
      Runnable driverFetchReset)
      throws SQLException {
    try {
      JdbcColumns.ColumnReader reader = columns.reader(rows.getMetaData());
      long row = 0;
      while (next(rows, guard, driverFetchReset)) {
        row++;
        if (timedOut.get()) {
          throw new SourceFailure(errors.timeout());
        }
        if (flagged && rows.getBoolean(2)) {
          throw errors.valueTooLong(row);
        }
        reader.read(rows, sink, row);
      }
    } catch (SourceException e) {
      JdbcConnector.abortQuietly(connection);
      throw new SourceFailure(e);
    } catch (Throwable e) {
      // Closing an unfinished streaming result makes MySQL/MariaDB drivers read (and drop)
      // every remaining row first; dropping the connection ends the query at once.
      JdbcConnector.abortQuietly(connection);
      throw e;
    }
    rows.close();
  }

  /** The next row; the server may send another fetch's worth of bytes for it. */
  private static boolean next(ResultSet rows, JdbcConnectionGuard guard, Runnable driverFetchReset)
      throws SQLException {
    guard.newFetch();
    driverFetchReset.run();
    return driverCall(rows::next);
  }

  /**
   * A driver call that reads from the server. Drivers parse what the server sends, and a server (or
   * a network) sending garbage can make them fail with a runtime exception (PgJDBC: a negative
   * array size from a garbled length): that is a broken connection, not an operator error.
   */
  static <T> T driverCall(JdbcConnectionGuard.SqlCall<T> call) throws SQLException {
    try {
      return call.run();
    } catch (RuntimeException e) {
      throw new SQLException("the driver could not read the server's answer", "08P01", e);
    }
  }

  private static ScheduledThreadPoolExecutor watchdog() {
    ScheduledThreadPoolExecutor executor =
        new ScheduledThreadPoolExecutor(
            // Two: a cancel can wait on the network for a while (bounded by the driver's own
            // timeouts) and must not hold up the other filters' timeouts for long.
            2,
            r -> {
              Thread thread = new Thread(r, "jdbc-query-timeout");
              thread.setDaemon(true);
              return thread;
            });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }
}
