package io.bloomoperator.source;

import io.bloomoperator.api.Durations;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import java.sql.Connection;
import java.sql.JDBCType;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keys from the first column of a SQL query, streamed from PostgreSQL, MySQL or MariaDB (drivers
 * bundled, chosen by the URL scheme).
 *
 * <p><b>Nothing beyond the database.</b> The URL and the query come from the BloomFilter's author,
 * who has fewer rights than the operator, so neither may make the driver reach anything but the one
 * database server they name. The URL must be {@code
 * jdbc:<driver>://host[:port][/database][?parameters]} with one host and only allowlisted
 * parameters ({@link JdbcUrl}); the driver gets the URL rebuilt from the checked parts. The
 * connection properties force off what drivers could otherwise be talked into: sending local files
 * ({@code LOAD DATA LOCAL INFILE}), several statements per query, credential and clear-text
 * authentication plugins, server-initiated redirection ({@link JdbcDriver}). The query must be one
 * {@code SELECT}/{@code WITH} statement without comments or file-transfer words ({@link
 * JdbcQuery}), and runs in a read-only transaction set by a statement of the operator's own. A spec
 * breaking these rules is an invalid spec (an {@link IllegalArgumentException} from the
 * constructor), so nothing is sent to the server.
 *
 * <p><b>Only where the egress policy allows.</b> The driver connects through the operator's socket
 * factory ({@link JdbcConnectionGuard}): each connection, the cancel requests' included, is checked
 * on the address actually connected to against the same policy as http sources ({@link
 * EgressPolicy}: no loopback, link-local/metadata, the operator's own addresses, {@code
 * BLOOM_HTTP_DENY}; {@code BLOOM_HTTP_ALLOW} admits), and a refused one fails with {@value
 * Reasons#SOURCE_ADDRESS_NOT_ALLOWED} before anything is sent.
 *
 * <p><b>What the database must grant.</b> A user that can log in from the operator's pods and
 * {@code SELECT} what the query reads; nothing else. Use a dedicated read-only user: the read-only
 * transaction is a safety net, not a permission. Credentials come from {@code credentialsSecret}
 * (keys {@code username} and {@code password}, same namespace); a URL may not carry them. The
 * password is never logged. TLS trust is the JVM's default trust store; trust material from a
 * Secret is not supported yet. Each read opens one connection and closes it afterwards; a build
 * without {@code expectedInsertions} reads twice (count, then fill), so it runs the query twice.
 *
 * <p><b>Streaming.</b> Rows are streamed, never held all at once: the statement is forward-only and
 * read-only, and each driver gets what it needs to stream ({@link JdbcDriver}): PostgreSQL a cursor
 * (autocommit off) fetching {@code fetchSize} rows per round trip, MySQL Connector/J row-by-row
 * streaming, MariaDB batches of {@code fetchSize} rows. A read that fails midway aborts the
 * connection, so the driver does not drain the rest of the result first.
 *
 * <p><b>Memory.</b> What one row can cost is bounded by the operator, not by the table: {@code
 * fetchSize} is lowered to {@code BLOOM_JDBC_MAX_FETCH_SIZE}; one fetch (a batch of rows, or one
 * row when streaming row by row) may bring at most {@code BLOOM_JDBC_MAX_BATCH_BYTES} from the
 * server, counted on the socket and, for PgJDBC and Connector/J, also refused by the driver from a
 * row's or packet's announced length before it is read; a value longer than {@code
 * BLOOM_JDBC_MAX_VALUE_BYTES} (UTF-8) fails the read; PostgreSQL checks that length itself and
 * never sends such a value ({@link JdbcDriver#bounded}; not for an integer column, whose values
 * cannot be that long), for MySQL/MariaDB the reader checks it. All of these are {@value
 * Reasons#SOURCE_LIMIT_EXCEEDED}, reported by row number and limit, never by content.
 *
 * <p><b>Column.</b> The first column's type is checked once. Integer columns ({@code BIGINT},
 * {@code INTEGER}, {@code SMALLINT}, {@code TINYINT}; not unsigned {@code BIGINT}, which may exceed
 * a long) are read as longs; fixed-width {@code CHAR} columns lose their trailing padding; other
 * types are read as text ({@link KeySink#value(String)}), so for {@code keyType: Long} a text value
 * must be a decimal integer or it counts as malformed. Binary columns are rejected. SQL NULLs are
 * counted ({@code status.nullKeys}), not inserted.
 *
 * <p><b>Timeouts.</b> Connecting (TCP and login) is bounded by {@value #CONNECT_TIMEOUT_SECONDS}s,
 * which the spec cannot change. {@code queryTimeout} (default 30m, at most the operator's {@code
 * BLOOM_JDBC_MAX_QUERY_TIME}, default 10m: a larger value is lowered to it, and a timeout then says
 * so) bounds the whole read after that, not just the execution: it is set as the statement's query
 * timeout and, because drivers do not apply that to later fetches, a watchdog cancels the statement
 * and drops the connection when the read as a whole runs over (a read waiting on a stalled server
 * or network sees only the dropped connection). Socket reads time out at {@code queryTimeout} plus
 * one minute, as a backstop.
 *
 * <p><b>Errors</b> (the Ready condition's reason), classified by SQLState so they do not depend on
 * the driver: class 28 (authentication) is {@value Reasons#SOURCE_AUTH_FAILED}; a connection that
 * cannot be opened (class 08, unknown host, unknown database) or is lost midway is {@link
 * SourceException#UNREADABLE} naming the server; the query timeout (or SQLState 57014 {@code
 * query_canceled}, 70100, any {@link SQLTimeoutException}) is {@value Reasons#SOURCE_TIMEOUT}; any
 * other error running the query (class 42 syntax error or missing table, 25006 a write in the
 * read-only transaction, 22 a failed cast, ...) is {@value Reasons#SOURCE_QUERY_FAILED}. Messages
 * are fixed texts with the SQLState and {@code host:port}: a database's message can quote row
 * values (a failed cast) or names, so it is logged at debug level only and never reaches the
 * status, events or other log levels.
 *
 * <p><b>Change token.</b> None ({@code null}): a database cannot cheaply tell whether a query's
 * result changed, so every {@code refreshInterval} rebuilds; an identical result is not
 * republished.
 */
public final class JdbcSource implements KeySource {

  static final int DEFAULT_FETCH_SIZE = 10_000;
  static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofMinutes(30);
  static final long CONNECT_TIMEOUT_SECONDS = 30;
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(CONNECT_TIMEOUT_SECONDS);
  private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofMinutes(1);

  private static final Logger LOG = LoggerFactory.getLogger(JdbcSource.class);

  /** Five letters or digits: anything else from the server is not shown. */
  private static final Pattern SQLSTATE = Pattern.compile("[0-9A-Z]{5}");

  /** Cancels statements whose read runs over its timeout. */
  private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

  private final JdbcUrl.Parsed url;
  private final JdbcDriver driver;
  private final String query;
  private final JdbcSourceSettings settings;
  private final int fetchSize;
  private final Duration queryTimeout;

  /** The spec's {@code queryTimeout} when it is above the operator's maximum, else null. */
  private final Duration clampedQueryTimeout;

  private final JdbcCredentials.Lookup credentialsLookup;

  /** The exported snapshot every read runs in ({@link #inSnapshot}), or null: a fresh one. */
  private final ExportedSnapshot snapshot;

  /** Read once per source instance (that is, once per reconcile). */
  private JdbcCredentials credentials;

  private boolean credentialsRead;

  /** The connection and statement of the read under way, for {@link #cancel}. */
  private volatile Connection reading;

  private volatile Statement readingStatement;

  /**
   * @throws IllegalArgumentException when the URL, query or a setting is invalid (an invalid spec)
   */
  public JdbcSource(SecretAccess secrets, JdbcSourceSpec spec, JdbcSourceSettings settings) {
    this(spec, settings, credentialsLookup(secrets, spec));
  }

  JdbcSource(
      JdbcSourceSpec spec, JdbcSourceSettings settings, JdbcCredentials.Lookup credentialsLookup) {
    if (spec == null || spec.getUrl() == null || spec.getUrl().isBlank()) {
      throw new IllegalArgumentException("spec.source.jdbc.url is required");
    }
    if (spec.getQuery() == null || spec.getQuery().isBlank()) {
      throw new IllegalArgumentException("spec.source.jdbc.query is required");
    }
    this.url = JdbcUrl.parse(spec.getUrl().strip());
    this.driver = url.driver();
    this.query = JdbcQuery.check(spec.getQuery(), driver);
    this.settings = settings;
    int requested = spec.getFetchSize() == null ? DEFAULT_FETCH_SIZE : spec.getFetchSize();
    if (requested < 1) {
      throw new IllegalArgumentException("spec.source.jdbc.fetchSize must be positive");
    }
    this.fetchSize = Math.min(requested, settings.maxFetchSize());
    Duration timeout;
    try {
      timeout =
          spec.getQueryTimeout() == null
              ? DEFAULT_QUERY_TIMEOUT
              : Durations.parse(spec.getQueryTimeout().strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("spec.source.jdbc.queryTimeout: " + e.getMessage(), e);
    }
    // The spec cannot hold a build slot, a reconcile thread and a database session longer than
    // the administrator allows (an unbounded value also overflowed the drivers' socket timeouts).
    this.clampedQueryTimeout =
        spec.getQueryTimeout() != null && timeout.compareTo(settings.maxQueryTime()) > 0
            ? timeout
            : null;
    this.queryTimeout =
        timeout.compareTo(settings.maxQueryTime()) > 0 ? settings.maxQueryTime() : timeout;
    this.credentialsLookup = credentialsLookup;
    this.snapshot = null;
  }

  private JdbcSource(JdbcSource source, ExportedSnapshot snapshot) {
    this.url = source.url;
    this.driver = source.driver;
    this.query = source.query;
    this.settings = source.settings;
    this.fetchSize = source.fetchSize;
    this.queryTimeout = source.queryTimeout;
    this.clampedQueryTimeout = source.clampedQueryTimeout;
    this.credentialsLookup = source.credentialsLookup;
    this.snapshot = snapshot;
  }

  /**
   * This source, each read of it running in {@code snapshot} ({@code BEGIN ISOLATION LEVEL
   * REPEATABLE READ; SET TRANSACTION SNAPSHOT …}, still read-only): what a full build scans when
   * its change stream's position is a replication slot's consistent point, so the scan holds
   * exactly what was committed before that point. The snapshot is the operator's own (exported by
   * its replication connection to the same server, which must stay open until the reads are done);
   * nothing of the spec chooses or changes it, and the URL, query and bounds stay the spec's.
   *
   * @throws IllegalStateException for a source that is not PostgreSQL, which has no such snapshots
   */
  public JdbcSource inSnapshot(ExportedSnapshot snapshot) {
    if (driver != JdbcDriver.POSTGRESQL) {
      throw new IllegalStateException("only a PostgreSQL source can read in an exported snapshot");
    }
    return new JdbcSource(this, java.util.Objects.requireNonNull(snapshot));
  }

  /**
   * Credentials only for the one server the URL names, and only if the Secret allows that server:
   * an author who owns some other server must not receive the password.
   */
  private static JdbcCredentials.Lookup credentialsLookup(
      SecretAccess secrets, JdbcSourceSpec spec) {
    String secret = spec == null ? null : spec.getCredentialsSecret();
    if (secret == null || secret.isBlank() || spec.getUrl() == null) {
      return () -> null; // a missing URL is reported by the constructor
    }
    JdbcUrl.Parsed target = JdbcUrl.parse(spec.getUrl().strip());
    return () -> JdbcCredentials.fromSecret(secrets, secret, target.host(), target.port());
  }

  /** The fetch size used: the spec's, at most the operator's maximum. */
  int effectiveFetchSize() {
    return fetchSize;
  }

  /** The query timeout used: the spec's (or the default), at most the operator's maximum. */
  Duration effectiveQueryTimeout() {
    return queryTimeout;
  }

  /** The single server the URL names, as checked ({@link JdbcUrl}). */
  public JdbcUrl.Parsed target() {
    return url;
  }

  @Override
  public String description() {
    return "jdbc " + url.url();
  }

  /** Always {@code null}: every refresh rebuilds (see the class comment). */
  @Override
  public String changeToken() {
    return null;
  }

  @Override
  public void readKeys(KeySink sink) throws SourceException {
    Optional<EgressPolicy.Refusal> literal = settings.egress().checkLiteral(url.host());
    if (literal.isPresent()) {
      throw addressRefused(literal.get());
    }
    JdbcConnectionGuard guard =
        new JdbcConnectionGuard(settings.egress(), url.host(), settings.maxBatchBytes());
    Connection connection = connect(guard);
    AtomicBoolean timedOut = new AtomicBoolean();
    reading = connection;
    try {
      guard.call(
          () -> {
            stream(connection, sink, timedOut, guard);
            return null;
          });
    } catch (SQLException e) {
      throw classify(e, false, timedOut.get(), guard);
    } catch (SourceFailure e) {
      throw e.cause;
    } finally {
      reading = null;
      readingStatement = null;
      try {
        connection.close();
      } catch (SQLException ignored) {
        // The read already succeeded or failed; a failing close changes neither.
      }
      guard.close();
    }
  }

  /** Carries a {@link SourceException} through {@link JdbcConnectionGuard#call}. */
  private static final class SourceFailure extends RuntimeException {
    private final SourceException cause;

    SourceFailure(SourceException cause) {
      super(null, null, false, false);
      this.cause = cause;
    }
  }

  private SourceException addressRefused(EgressPolicy.Refusal refusal) {
    return new SourceException(
        Reasons.SOURCE_ADDRESS_NOT_ALLOWED,
        "cannot connect to "
            + url.server()
            + ": its address "
            + refusal.text()
            + " (only the operator's BLOOM_HTTP_ALLOW can admit it); nothing was sent there");
  }

  /**
   * Cancels the statement under way (which frees the server: a dropped connection alone leaves
   * PostgreSQL running the query until it next writes to the client), then drops the connection,
   * which ends a read blocked on a stalled server or network.
   */
  @Override
  public void cancel() {
    Statement statement = readingStatement;
    if (statement != null) {
      try {
        statement.cancel();
      } catch (SQLException | RuntimeException ignored) {
        // Dropping the connection below ends the read anyway.
      }
    }
    Connection connection = reading;
    if (connection != null) {
      abortQuietly(connection);
    }
  }

  private Connection connect(JdbcConnectionGuard guard) throws SourceException {
    if (!credentialsRead) {
      credentials = credentialsLookup.get();
      credentialsRead = true;
    }
    Properties properties =
        driver.properties(
            CONNECT_TIMEOUT,
            queryTimeout.plus(SOCKET_TIMEOUT_MARGIN),
            url,
            settings.maxBatchBytes(),
            guard.token());
    if (credentials != null) {
      properties.setProperty("user", credentials.username());
      properties.setProperty("password", credentials.password());
    }
    try {
      return guard.call(() -> driver.connect(url.url(), properties));
    } catch (SQLException e) {
      guard.close();
      throw classify(e, true, false, guard);
    }
  }

  private void stream(
      Connection connection, KeySink sink, AtomicBoolean timedOut, JdbcConnectionGuard guard)
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
                      abortQuietly(connection);
                      return null;
                    });
              } catch (SQLException | RuntimeException ignored) {
                // abortQuietly throws nothing; the guard's binding cannot fail.
              }
            },
            queryTimeout.toMillis(),
            TimeUnit.MILLISECONDS);
    try {
      driver.makeReadOnly(connection);
      streamRows(connection, sink, timedOut, running, guard);
    } finally {
      watchdog.cancel(false);
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
      readingStatement = statement;
      statement.setFetchSize(driver.fetchSize(fetchSize));
      statement.setQueryTimeout(
          (int) Math.min(Integer.MAX_VALUE, Math.max(1, (queryTimeout.toMillis() + 999) / 1000)));
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
          abortQuietly(connection);
          throw new SourceFailure(snapshotLost(e));
        }
      }
      guard.newFetch();
      driverFetchReset.run();
      ResultSet rows = driverCall(() -> statement.executeQuery(checked.sql()));
      try {
        ColumnReader reader = columnReader(rows.getMetaData());
        boolean flagged = checked.flagged();
        long row = 0;
        while (next(rows, guard, driverFetchReset)) {
          row++;
          if (timedOut.get()) {
            throw new SourceFailure(timeout());
          }
          if (flagged && rows.getBoolean(2)) {
            throw valueTooLong(row);
          }
          reader.read(rows, sink, row);
        }
      } catch (SourceException e) {
        abortQuietly(connection);
        throw new SourceFailure(e);
      } catch (Throwable e) {
        // Closing an unfinished streaming result makes MySQL/MariaDB drivers read (and drop)
        // every remaining row first; dropping the connection ends the query at once.
        abortQuietly(connection);
        throw e;
      }
      rows.close();
    }
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
  private static <T> T driverCall(JdbcConnectionGuard.SqlCall<T> call) throws SQLException {
    try {
      return call.run();
    } catch (RuntimeException e) {
      throw new SQLException("the driver could not read the server's answer", "08P01", e);
    }
  }

  /** Reads the first column of the current row ({@code row}, from 1) into the sink. */
  @FunctionalInterface
  private interface ColumnReader {
    void read(ResultSet rows, KeySink sink, long row) throws SQLException, SourceException;
  }

  private ColumnReader columnReader(ResultSetMetaData meta) throws SQLException, SourceException {
    if (meta.getColumnCount() < 1) {
      throw new SourceException(Reasons.SOURCE_QUERY_FAILED, "the query returns no columns");
    }
    int type = meta.getColumnType(1);
    switch (type) {
      case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> {
        if (type != Types.BIGINT || meta.isSigned(1)) {
          return (rows, sink, row) -> {
            long value = rows.getLong(1);
            if (rows.wasNull()) {
              sink.nullValue();
            } else {
              sink.value(value);
            }
          };
        }
        return this::readText;
      }
      case Types.CHAR, Types.NCHAR -> {
        return (rows, sink, row) -> {
          String value = bounded(rows.getString(1), row);
          if (value == null) {
            sink.nullValue();
          } else {
            sink.value(value.stripTrailing());
          }
        };
      }
      // The label and type name come from the server: not repeated.
      case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB ->
          throw new SourceException(
              Reasons.SOURCE_QUERY_FAILED,
              "the first column is binary (JDBC type "
                  + JDBCType.valueOf(type).getName()
                  + "); select a text or integer column");
      default -> {
        return this::readText;
      }
    }
  }

  private void readText(ResultSet rows, KeySink sink, long row)
      throws SQLException, SourceException {
    String value = bounded(rows.getString(1), row);
    if (value == null) {
      sink.nullValue();
    } else {
      sink.value(value);
    }
  }

  /**
   * The value, unless it is longer than the operator allows for a key: the same bound as a line of
   * an http source. The driver already bounded what it held for the value ({@link
   * JdbcConnectionGuard}); this keeps over-long keys out of the filter at any fetch size. Only the
   * row number and the length are reported, never the value.
   */
  private String bounded(String value, long row) throws SourceException {
    if (value != null && Utf8.length(value, settings.maxValueBytes()) > settings.maxValueBytes()) {
      throw valueTooLong(row);
    }
    return value;
  }

  private SourceException valueTooLong(long row) {
    return new SourceException(
        Reasons.SOURCE_LIMIT_EXCEEDED,
        "the value of row "
            + row
            + " is longer than "
            + settings.maxValueBytes()
            + " bytes (BLOOM_JDBC_MAX_VALUE_BYTES)");
  }

  /**
   * The stream's exported snapshot could not be imported: its exporting connection ended (or the
   * server restarted) before this read began. Not the query's fault, so not reported as such.
   */
  private SourceException snapshotLost(SQLException e) {
    String state = sqlState(e);
    if (LOG.isDebugEnabled()) {
      LOG.debug("jdbc source {}: snapshot import failed", url.server(), e);
    }
    String code =
        state != null && SQLSTATE.matcher(state).matches() ? " (SQLState " + state + ")" : "";
    return new SourceException(
        Reasons.SOURCE_UNREADABLE,
        "the snapshot of the change stream's replication slot could not be used on "
            + url.server()
            + code
            + "; the next full build takes a new one");
  }

  private SourceException batchTooLarge() {
    return new SourceException(
        Reasons.SOURCE_LIMIT_EXCEEDED,
        "the database at "
            + url.server()
            + " sent more than "
            + settings.maxBatchBytes()
            + " bytes for one fetch of at most "
            + fetchSize
            + " row(s) (BLOOM_JDBC_MAX_BATCH_BYTES); lower spec.source.jdbc.fetchSize or select"
            + " shorter values");
  }

  private SourceException timeout() {
    String clamped =
        clampedQueryTimeout == null
            ? " (spec.source.jdbc.queryTimeout)"
            : " (the operator's maximum BLOOM_JDBC_MAX_QUERY_TIME; spec.source.jdbc.queryTimeout "
                + text(clampedQueryTimeout)
                + " is above it)";
    return new SourceException(
        Reasons.SOURCE_TIMEOUT, "the query did not finish within " + text(queryTimeout) + clamped);
  }

  private static String text(Duration d) {
    return d.toString().substring(2).toLowerCase(java.util.Locale.ROOT);
  }

  /**
   * Maps a driver error to a condition reason by SQLState class, so that the mapping holds for
   * every driver. The message is a fixed text per reason with the SQLState and the server: the
   * driver's message can carry the server's text (row values in a failed cast, names of tables or
   * columns) or the URL, so it is logged at debug level only and not kept as the cause.
   *
   * @param connecting whether the error came from opening the connection
   * @param timedOut whether the watchdog cancelled the statement
   */
  SourceException classify(
      SQLException e, boolean connecting, boolean timedOut, JdbcConnectionGuard guard) {
    String state = sqlState(e);
    if (LOG.isDebugEnabled()) {
      LOG.debug("jdbc source {}: driver error", url.server(), e);
    }
    if (guard.refusal() != null) {
      return addressRefused(guard.refusal());
    }
    if (guard.batchExceeded() || driverBufferExceeded(e)) {
      return batchTooLarge();
    }
    String code =
        state != null && SQLSTATE.matcher(state).matches() ? " (SQLState " + state + ")" : "";
    if (state != null && state.startsWith("28")) {
      return new SourceException(
          Reasons.SOURCE_AUTH_FAILED, "authentication to " + url.server() + " failed" + code);
    }
    if (connecting) {
      return new SourceException(
          Reasons.SOURCE_UNREADABLE, "cannot connect to " + url.server() + code);
    }
    if (timedOut
        || e instanceof SQLTimeoutException
        || "57014".equals(state)
        || "70100".equals(state)) {
      return timeout();
    }
    if (state != null && state.startsWith("08")) {
      return new SourceException(
          Reasons.SOURCE_UNREADABLE, "lost the connection to " + url.server() + code);
    }
    return new SourceException(
        Reasons.SOURCE_QUERY_FAILED,
        "the query failed on "
            + url.server()
            + code
            + "; the database's message is logged at debug level");
  }

  /**
   * Whether a driver refused a row or packet over the limit it was given ({@link JdbcDriver}):
   * PgJDBC's {@code maxResultBuffer}, Connector/J's {@code maxAllowedPacket}. Their messages are
   * the only sign; they are matched, never shown.
   */
  private static boolean driverBufferExceeded(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String message = t.getMessage();
      if (message != null
          && (message.contains("maxResultBuffer") || message.contains("max_allowed_packet"))) {
        return true;
      }
      if (t.getClass().getSimpleName().contains("PacketTooBig")) {
        return true;
      }
    }
    return false;
  }

  /** The first SQLState along the exception and its causes. */
  private static String sqlState(SQLException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        return sql.getSQLState();
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return null;
  }

  private static void abortQuietly(Connection connection) {
    try {
      connection.abort(Runnable::run);
    } catch (SQLException | RuntimeException ignored) {
      // Closing the connection afterwards is the fallback.
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
