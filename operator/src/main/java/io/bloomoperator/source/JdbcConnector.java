package io.bloomoperator.source;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;

/**
 * Connection setup of one jdbc source: the credentials (read once per source instance, that is once
 * per reconcile), the driver's forced properties and bounded timeouts ({@link JdbcDriver}), and the
 * connection itself, made through the read's {@link JdbcConnectionGuard} so that every socket obeys
 * the egress policy and the per-fetch byte limit. Every connection a source opens comes from here.
 */
final class JdbcConnector {

  static final long CONNECT_TIMEOUT_SECONDS = 30;
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(CONNECT_TIMEOUT_SECONDS);
  private static final Duration SOCKET_TIMEOUT_MARGIN = Duration.ofMinutes(1);

  private final JdbcUrl.Parsed url;
  private final JdbcDriver driver;
  private final JdbcSourceSettings settings;
  private final Duration queryTimeout;
  private final JdbcCredentials.Lookup credentialsLookup;
  private final JdbcErrors errors;

  private JdbcCredentials credentials;
  private boolean credentialsRead;

  JdbcConnector(
      JdbcUrl.Parsed url,
      JdbcSourceSettings settings,
      Duration queryTimeout,
      JdbcCredentials.Lookup credentialsLookup,
      JdbcErrors errors) {
    this.url = url;
    this.driver = url.driver();
    this.settings = settings;
    this.queryTimeout = queryTimeout;
    this.credentialsLookup = credentialsLookup;
    this.errors = errors;
  }

  /** A guard for one connection of this source: the egress policy and the per-fetch limit. */
  JdbcConnectionGuard guard() {
    return new JdbcConnectionGuard(settings.egress(), url.host(), settings.maxBatchBytes());
  }

  /** Refuses a URL whose host is a literal address the egress policy refuses, before any socket. */
  void checkLiteral() throws SourceException {
    var literal = settings.egress().checkLiteral(url.host());
    if (literal.isPresent()) {
      throw errors.addressRefused(literal.get());
    }
  }

  /** The credentials, read at the first call of this source instance. */
  private synchronized JdbcCredentials credentials() throws SourceException {
    if (!credentialsRead) {
      credentials = credentialsLookup.get();
      credentialsRead = true;
    }
    return credentials;
  }

  /** A new connection through {@code guard}; on failure the guard's token is ended. */
  Connection connect(JdbcConnectionGuard guard) throws SourceException {
    JdbcCredentials login = credentials();
    Properties properties =
        driver.properties(
            CONNECT_TIMEOUT,
            queryTimeout.plus(SOCKET_TIMEOUT_MARGIN),
            url,
            settings.maxBatchBytes(),
            guard.token());
    if (login != null) {
      properties.setProperty("user", login.username());
      properties.setProperty("password", login.password());
    }
    try {
      return guard.call(() -> driver.connect(url.url(), properties));
    } catch (SQLException e) {
      guard.close();
      throw errors.classify(e, true, false, guard);
    }
  }

  /** Drops a connection at once, from any thread (closing it afterwards is the fallback). */
  static void abortQuietly(Connection connection) {
    try {
      connection.abort(Runnable::run);
    } catch (SQLException | RuntimeException ignored) {
      // Closing the connection afterwards is the fallback.
    }
  }

  /**
   * Closes a connection whose read already succeeded or failed; a failing close changes neither.
   */
  static void closeQuietly(Connection connection) {
    try {
      connection.close();
    } catch (SQLException ignored) {
      // The read already succeeded or failed; a failing close changes neither.
    }
  }
}
