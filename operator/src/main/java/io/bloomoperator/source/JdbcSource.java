package io.bloomoperator.source;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.reconcile.Durations;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.sql.Connection;
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

/**
 * Keys from the first column of a SQL query, streamed from PostgreSQL, MySQL or MariaDB (drivers
 * bundled, chosen by the URL scheme).
 *
 * <p><b>What the database must grant.</b> A user that can log in from the operator's pods and
 * {@code SELECT} what the query reads; nothing else. Use a dedicated read-only user: the
 * operator also marks the connection read-only ({@link Connection#setReadOnly}), but that is a
 * safety net, not a permission. Credentials come from {@code credentialsSecret} (keys
 * {@code username} and {@code password}, same namespace); without it the URL must carry whatever
 * the server needs. The password is never logged and the URL is shown without credentials.
 * Each read opens one connection and closes it afterwards; a build without
 * {@code expectedInsertions} reads twice (count, then fill), so it runs the query twice.
 *
 * <p><b>Streaming.</b> Rows are streamed, never held all at once: the statement is forward-only
 * and read-only, and each driver gets what it needs to stream ({@link JdbcDriver}): PostgreSQL a
 * cursor (autocommit off) fetching {@code fetchSize} rows per round trip, MySQL Connector/J
 * row-by-row streaming, MariaDB batches of {@code fetchSize} rows. A read that fails midway
 * aborts the connection, so the driver does not drain the rest of the result first.
 *
 * <p><b>Column.</b> The first column's type is checked once. Integer columns ({@code BIGINT},
 * {@code INTEGER}, {@code SMALLINT}, {@code TINYINT}; not unsigned {@code BIGINT}, which may
 * exceed a long) are read as longs; fixed-width {@code CHAR} columns lose their trailing padding;
 * other types are read as text ({@link KeySink#value(String)}), so for {@code keyType: Long} a
 * text value must be a decimal integer or it counts as malformed. Binary columns are rejected.
 * SQL NULLs are counted ({@code status.nullKeys}), not inserted.
 *
 * <p><b>Timeouts.</b> Connecting (TCP and login) is bounded by {@value #CONNECT_TIMEOUT_SECONDS}s.
 * {@code queryTimeout} (default 30m) bounds the whole read, not just the execution: it is set as
 * the statement's query timeout and, because drivers do not apply that to later fetches, a
 * watchdog cancels the statement when the read as a whole runs over. Socket reads time out at
 * {@code queryTimeout} plus one minute, as a backstop against a silently dropped connection.
 *
 * <p><b>Errors</b> (the Ready condition's reason), classified by SQLState so they do not depend
 * on the driver: class 28 (authentication) is {@value #AUTH_FAILED}; a connection that cannot be
 * opened (class 08, unknown host, unknown database) or is lost midway is
 * {@link SourceException#UNREADABLE} naming the server; the query timeout (or SQLState 57014
 * {@code query_canceled}, 70100, any {@link SQLTimeoutException}) is {@value #TIMEOUT}; any other
 * error running the query (class 42 syntax error or missing table, permissions, ...) is
 * {@value #QUERY_FAILED} with the database's message.
 *
 * <p><b>Change token.</b> None ({@code null}): a database cannot cheaply tell whether a query's
 * result changed, so every {@code refreshInterval} rebuilds; an identical result is not
 * republished.
 */
public final class JdbcSource implements KeySource {

  /** Condition reason when the database rejects the credentials. */
  public static final String AUTH_FAILED = "SourceAuthFailed";
  /** Condition reason when the database cannot run the query. */
  public static final String QUERY_FAILED = "SourceQueryFailed";
  /** Condition reason when the read runs over {@code queryTimeout}. */
  public static final String TIMEOUT = "SourceTimeout";

  static final int DEFAULT_FETCH_SIZE = 10_000;
  static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofMinutes(30);
  static final long CONNECT_TIMEOUT_SECONDS = 30;
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(CONNECT_TIMEOUT_SECONDS);
  private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofMinutes(1);

  /** Cancels statements whose read runs over its timeout. */
  private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

  private final String url;
  private final JdbcDriver driver;
  private final String shownUrl;
  private final String server;
  private final String query;
  private final int fetchSize;
  private final Duration queryTimeout;
  private final JdbcCredentials.Lookup credentialsLookup;
  /** Read once per source instance (that is, once per reconcile). */
  private JdbcCredentials credentials;
  private boolean credentialsRead;

  /**
   * @throws IllegalArgumentException when the URL, query or a setting is invalid (an invalid
   *     spec)
   */
  public JdbcSource(KubernetesClient client, String namespace, JdbcSourceSpec spec) {
    this(spec, credentialsLookup(client, namespace, spec));
  }

  JdbcSource(JdbcSourceSpec spec, JdbcCredentials.Lookup credentialsLookup) {
    if (spec == null || spec.getUrl() == null || spec.getUrl().isBlank()) {
      throw new IllegalArgumentException("spec.source.jdbc.url is required");
    }
    if (spec.getQuery() == null || spec.getQuery().isBlank()) {
      throw new IllegalArgumentException("spec.source.jdbc.query is required");
    }
    this.url = spec.getUrl().strip();
    this.driver = JdbcDriver.forUrl(url);
    this.shownUrl = JdbcUrl.withoutCredentials(url);
    this.server = JdbcUrl.server(url);
    this.query = spec.getQuery();
    this.fetchSize = spec.getFetchSize() == null ? DEFAULT_FETCH_SIZE : spec.getFetchSize();
    if (fetchSize < 1) {
      throw new IllegalArgumentException("spec.source.jdbc.fetchSize must be positive");
    }
    try {
      this.queryTimeout = spec.getQueryTimeout() == null ? DEFAULT_QUERY_TIMEOUT
          : Durations.parse(spec.getQueryTimeout().strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("spec.source.jdbc.queryTimeout: " + e.getMessage(), e);
    }
    this.credentialsLookup = credentialsLookup;
  }

  private static JdbcCredentials.Lookup credentialsLookup(KubernetesClient client,
      String namespace, JdbcSourceSpec spec) {
    String secret = spec == null ? null : spec.getCredentialsSecret();
    if (secret == null || secret.isBlank()) {
      return () -> null;
    }
    return () -> JdbcCredentials.fromSecret(client, namespace, secret);
  }

  @Override
  public String description() {
    return "jdbc " + shownUrl;
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
    try {
      stream(connection, sink, timedOut);
    } catch (SQLException e) {
      throw classify(e, false, timedOut.get());
    } finally {
      try {
        connection.close();
      } catch (SQLException ignored) {
        // The read already succeeded or failed; a failing close changes neither.
      }
    }
  }

  private Connection connect() throws SourceException {
    if (!credentialsRead) {
      credentials = credentialsLookup.get();
      credentialsRead = true;
    }
    Properties properties = driver.properties(CONNECT_TIMEOUT,
        queryTimeout.plus(SOCKET_TIMEOUT_MARGIN));
    if (credentials != null) {
      properties.setProperty("user", credentials.username());
      properties.setProperty("password", credentials.password());
    }
    try {
      return driver.connect(url, properties);
    } catch (SQLException e) {
      throw classify(e, true, false);
    }
  }

  private void stream(Connection connection, KeySink sink, AtomicBoolean timedOut)
      throws SQLException, SourceException {
    connection.setReadOnly(true);
    driver.prepare(connection);
    try (Statement statement = connection.createStatement(ResultSet.TYPE_FORWARD_ONLY,
        ResultSet.CONCUR_READ_ONLY)) {
      statement.setFetchSize(driver.fetchSize(fetchSize));
      statement.setQueryTimeout((int) Math.min(Integer.MAX_VALUE,
          Math.max(1, (queryTimeout.toMillis() + 999) / 1000)));
      ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
        timedOut.set(true);
        try {
          statement.cancel();
        } catch (SQLException | RuntimeException ignored) {
          // The read loop sees the flag at the next row anyway.
        }
      }, queryTimeout.toMillis(), TimeUnit.MILLISECONDS);
      try {
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
      } finally {
        watchdog.cancel(false);
      }
    }
  }

  /** Reads the first column of the current row into the sink. */
  @FunctionalInterface
  private interface ColumnReader {
    void read(ResultSet rows, KeySink sink) throws SQLException, SourceException;
  }

  private ColumnReader columnReader(ResultSetMetaData meta) throws SQLException, SourceException {
    if (meta.getColumnCount() < 1) {
      throw new SourceException(QUERY_FAILED, "the query returns no columns");
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
      case Types.BINARY, Types.VARBINARY, Types.LONGVARBINARY, Types.BLOB -> throw
          new SourceException(QUERY_FAILED, "the first column (" + meta.getColumnLabel(1)
              + ", " + meta.getColumnTypeName(1) + ") is binary; select a text or integer "
              + "column");
      default -> {
        return JdbcSource::readText;
      }
    }
  }

  private static void readText(ResultSet rows, KeySink sink)
      throws SQLException, SourceException {
    String value = rows.getString(1);
    if (value == null) {
      sink.nullValue();
    } else {
      sink.value(value);
    }
  }

  private SourceException timeout() {
    return new SourceException(TIMEOUT, "the query did not finish within " + queryTimeout
        .toString().substring(2).toLowerCase(java.util.Locale.ROOT)
        + " (spec.source.jdbc.queryTimeout)");
  }

  /**
   * Maps a driver error to a condition reason by SQLState class, so that the mapping holds for
   * every driver.
   *
   * @param connecting whether the error came from opening the connection
   * @param timedOut whether the watchdog cancelled the statement
   */
  SourceException classify(SQLException e, boolean connecting, boolean timedOut) {
    String state = sqlState(e);
    // Drivers echo the URL in some messages (PgJDBC: "Unable to parse URL ..."), which may carry
    // user=/password= parameters: show the redacted form only.
    String message = String.valueOf(e.getMessage()).replace(url, shownUrl);
    String detail = message + (state == null ? "" : " (SQLState " + state + ")");
    if (state != null && state.startsWith("28")) {
      return new SourceException(AUTH_FAILED,
          "authentication to " + server + " failed: " + detail, e);
    }
    if (connecting) {
      return new SourceException(SourceException.UNREADABLE,
          "cannot connect to " + server + ": " + detail, e);
    }
    if (timedOut || e instanceof SQLTimeoutException || "57014".equals(state)
        || "70100".equals(state)) {
      SourceException timeout = timeout();
      timeout.initCause(e);
      return timeout;
    }
    if (state != null && state.startsWith("08")) {
      return new SourceException(SourceException.UNREADABLE,
          "lost the connection to " + server + ": " + detail, e);
    }
    return new SourceException(QUERY_FAILED, "query failed: " + detail, e);
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
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, r -> {
      Thread thread = new Thread(r, "jdbc-query-timeout");
      thread.setDaemon(true);
      return thread;
    });
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }
}
