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
 * <p><b>Column.</b> The first column's type is checked once. Integer columns ({@code BIGINT},
 * {@code INTEGER}, {@code SMALLINT}, {@code TINYINT}; not unsigned {@code BIGINT}, which may exceed
 * a long) are read as longs; fixed-width {@code CHAR} columns lose their trailing padding; other
 * types are read as text ({@link KeySink#value(String)}), so for {@code keyType: Long} a text value
 * must be a decimal integer or it counts as malformed. Binary columns are rejected. SQL NULLs are
 * counted ({@code status.nullKeys}), not inserted.
 *
 * <p><b>Timeouts.</b> Connecting (TCP and login) is bounded by {@value #CONNECT_TIMEOUT_SECONDS}s.
 * {@code queryTimeout} (default 30m) bounds the whole read after that, not just the execution: it
 * is set as the statement's query timeout and, because drivers do not apply that to later fetches,
 * a watchdog cancels the statement and drops the connection when the read as a whole runs over (a
 * read waiting on a stalled server or network sees only the dropped connection). Socket reads time
 * out at {@code queryTimeout} plus one minute, as a backstop.
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
  private final int fetchSize;
  private final Duration queryTimeout;
  private final JdbcCredentials.Lookup credentialsLookup;

  /** Read once per source instance (that is, once per reconcile). */
  private JdbcCredentials credentials;

  private boolean credentialsRead;

  /** The connection and statement of the read under way, for {@link #cancel}. */
  private volatile Connection reading;

  private volatile Statement readingStatement;

  /**
   * @throws IllegalArgumentException when the URL, query or a setting is invalid (an invalid spec)
   */
  public JdbcSource(SecretAccess secrets, JdbcSourceSpec spec) {
    this(spec, credentialsLookup(secrets, spec));
  }

  JdbcSource(JdbcSourceSpec spec, JdbcCredentials.Lookup credentialsLookup) {
    if (spec == null || spec.getUrl() == null || spec.getUrl().isBlank()) {
      throw new IllegalArgumentException("spec.source.jdbc.url is required");
    }
    if (spec.getQuery() == null || spec.getQuery().isBlank()) {
      throw new IllegalArgumentException("spec.source.jdbc.query is required");
    }
    this.url = JdbcUrl.parse(spec.getUrl().strip());
    this.driver = url.driver();
    this.query = JdbcQuery.check(spec.getQuery(), driver);
    this.fetchSize = spec.getFetchSize() == null ? DEFAULT_FETCH_SIZE : spec.getFetchSize();
    if (fetchSize < 1) {
      throw new IllegalArgumentException("spec.source.jdbc.fetchSize must be positive");
    }
    try {
      this.queryTimeout =
          spec.getQueryTimeout() == null
              ? DEFAULT_QUERY_TIMEOUT
              : Durations.parse(spec.getQueryTimeout().strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("spec.source.jdbc.queryTimeout: " + e.getMessage(), e);
    }
    this.credentialsLookup = credentialsLookup;
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
    Connection connection = connect();
    AtomicBoolean timedOut = new AtomicBoolean();
    reading = connection;
    try {
      stream(connection, sink, timedOut);
    } catch (SQLException e) {
      throw classify(e, false, timedOut.get());
    } finally {
      reading = null;
      readingStatement = null;
      try {
        connection.close();
      } catch (SQLException ignored) {
        // The read already succeeded or failed; a failing close changes neither.
      }
    }
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

  private Connection connect() throws SourceException {
    if (!credentialsRead) {
      credentials = credentialsLookup.get();
      credentialsRead = true;
    }
    Properties properties =
        driver.properties(CONNECT_TIMEOUT, queryTimeout.plus(SOCKET_TIMEOUT_MARGIN), url);
    if (credentials != null) {
      properties.setProperty("user", credentials.username());
      properties.setProperty("password", credentials.password());
    }
    try {
      return driver.connect(url.url(), properties);
    } catch (SQLException e) {
      throw classify(e, true, false);
    }
  }

  private void stream(Connection connection, KeySink sink, AtomicBoolean timedOut)
      throws SQLException, SourceException {
    AtomicReference<Statement> running = new AtomicReference<>();
    ScheduledFuture<?> watchdog =
        WATCHDOG.schedule(
            () -> {
              timedOut.set(true);
              Statement statement = running.get();
              if (statement != null) {
                try {
                  statement.cancel(); // frees the server
                } catch (SQLException | RuntimeException ignored) {
                  // Dropping the connection below ends the read anyway.
                }
              }
              // A read blocked on a connection that stopped delivering (a stalled server or
              // network) sees neither the flag nor the cancel's answer; only the socket timeout
              // (queryTimeout plus a minute) would end it. Dropping the connection ends it now.
              abortQuietly(connection);
            },
            queryTimeout.toMillis(),
            TimeUnit.MILLISECONDS);
    try {
      driver.makeReadOnly(connection);
      streamRows(connection, sink, timedOut, running);
    } finally {
      watchdog.cancel(false);
    }
  }

  private void streamRows(
      Connection connection,
      KeySink sink,
      AtomicBoolean timedOut,
      AtomicReference<Statement> running)
      throws SQLException, SourceException {
    try (Statement statement =
        connection.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
      running.set(statement);
      readingStatement = statement;
      statement.setFetchSize(driver.fetchSize(fetchSize));
      statement.setQueryTimeout(
          (int) Math.min(Integer.MAX_VALUE, Math.max(1, (queryTimeout.toMillis() + 999) / 1000)));
      ResultSet rows = statement.executeQuery(query);
      try {
        ColumnReader reader = columnReader(rows.getMetaData());
        while (rows.next()) {
          if (timedOut.get()) {
            throw timeout();
          }
          reader.read(rows, sink);
        }
      } catch (Throwable e) {
        // Closing an unfinished streaming result makes MySQL/MariaDB drivers read (and drop)
        // every remaining row first; dropping the connection ends the query at once.
        abortQuietly(connection);
        throw e;
      }
      rows.close();
    }
  }

  /** Reads the first column of the current row into the sink. */
  @FunctionalInterface
  private interface ColumnReader {
    void read(ResultSet rows, KeySink sink) throws SQLException, SourceException;
  }

  private ColumnReader columnReader(ResultSetMetaData meta) throws SQLException, SourceException {
    if (meta.getColumnCount() < 1) {
      throw new SourceException(Reasons.SOURCE_QUERY_FAILED, "the query returns no columns");
    }
    int type = meta.getColumnType(1);
    switch (type) {
      case Types.TINYINT, Types.SMALLINT, Types.INTEGER, Types.BIGINT -> {
        if (type != Types.BIGINT || meta.isSigned(1)) {
          return (rows, sink) -> {
            long value = rows.getLong(1);
            if (rows.wasNull()) {
              sink.nullValue();
            } else {
              sink.value(value);
            }
          };
        }
        return JdbcSource::readText;
      }
      case Types.CHAR, Types.NCHAR -> {
        return (rows, sink) -> {
          String value = rows.getString(1);
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
        return JdbcSource::readText;
      }
    }
  }

  private static void readText(ResultSet rows, KeySink sink) throws SQLException, SourceException {
    String value = rows.getString(1);
    if (value == null) {
      sink.nullValue();
    } else {
      sink.value(value);
    }
  }

  private SourceException timeout() {
    return new SourceException(
        Reasons.SOURCE_TIMEOUT,
        "the query did not finish within "
            + queryTimeout.toString().substring(2).toLowerCase(java.util.Locale.ROOT)
            + " (spec.source.jdbc.queryTimeout)");
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
  SourceException classify(SQLException e, boolean connecting, boolean timedOut) {
    String state = sqlState(e);
    if (LOG.isDebugEnabled()) {
      LOG.debug("jdbc source {}: driver error", url.server(), e);
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
