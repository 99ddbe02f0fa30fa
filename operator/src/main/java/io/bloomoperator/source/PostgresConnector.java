package io.bloomoperator.source;

import io.bloomoperator.api.JdbcSourceSpec;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.Properties;

/**
 * Connections to the PostgreSQL server of a jdbc source for its logical replication stream: the
 * source's URL (through the same allowlist), credentials Secret, TLS mode and egress policy, with
 * the driver hardening of {@link JdbcDriver#POSTGRESQL}. The only property added is the operator's
 * own {@code replication=database} (the URL allowlist keeps it, like every other driver property,
 * out of the tenant's URL), and every message the server sends is bounded ({@link PgFrameBound}):
 * PgJDBC would otherwise allocate a replication message of any announced size.
 */
public final class PostgresConnector {

  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);

  private final JdbcUrl.Parsed url;
  private final JdbcSourceSettings settings;
  private final JdbcCredentials.Lookup credentialsLookup;
  private volatile EgressPolicy.Refusal refusal;

  private PostgresConnector(
      JdbcUrl.Parsed url, JdbcSourceSettings settings, JdbcCredentials.Lookup credentialsLookup) {
    this.url = url;
    this.settings = settings;
    this.credentialsLookup = credentialsLookup;
  }

  /**
   * The connector of {@code spec}'s server, credentials read from its Secret (only if the Secret
   * allows that server) when a connection is made.
   *
   * @throws IllegalArgumentException when the URL is not an allowed PostgreSQL URL
   */
  public static PostgresConnector of(
      SecretAccess secrets, JdbcSourceSpec spec, JdbcSourceSettings settings) {
    JdbcUrl.Parsed url = JdbcUrl.parse(spec.getUrl().strip());
    if (url.driver() != JdbcDriver.POSTGRESQL) {
      throw new IllegalArgumentException(
          "spec.changes.postgresLogical needs a jdbc:postgresql: URL");
    }
    String secret = spec.getCredentialsSecret();
    JdbcCredentials.Lookup lookup =
        secret == null || secret.isBlank()
            ? () -> null
            : () -> JdbcCredentials.fromSecret(secrets, secret, url.host(), url.port());
    return new PostgresConnector(url, settings, lookup);
  }

  /**
   * A connector with credentials given directly, for tests and tools; the operator reads them from
   * the source's Secret ({@link #of}).
   */
  public static PostgresConnector forUser(
      JdbcSourceSpec spec, JdbcSourceSettings settings, String user, String password) {
    JdbcUrl.Parsed url = JdbcUrl.parse(spec.getUrl().strip());
    if (url.driver() != JdbcDriver.POSTGRESQL) {
      throw new IllegalArgumentException(
          "spec.changes.postgresLogical needs a jdbc:postgresql: URL");
    }
    JdbcCredentials credentials = new JdbcCredentials(user, password);
    return new PostgresConnector(url, settings, () -> credentials);
  }

  /** The database the URL names (null: the user's default). */
  public String database() {
    return url.database();
  }

  /**
   * A new connection.
   *
   * @param replication a logical replication connection ({@code replication=database}, simple query
   *     mode as the replication protocol needs); otherwise a read-only session
   * @param messageLimit the largest message the server may send on it
   * @param socketTimeout how long one read of the socket may block
   * @throws SourceException when the Secret cannot be read
   */
  public Link connect(boolean replication, long messageLimit, Duration socketTimeout)
      throws SQLException, SourceException {
    return connect(replication, messageLimit, socketTimeout, abort -> {});
  }

  /**
   * {@link #connect(boolean, long, Duration)}, handing {@code aborts} (before anything is sent) an
   * action that closes the connection's sockets from any thread: a caller's deadline then ends a
   * connect, login or read blocked on a server that stopped answering at once.
   */
  public Link connect(
      boolean replication,
      long messageLimit,
      Duration socketTimeout,
      java.util.function.Consumer<Runnable> aborts)
      throws SQLException, SourceException {
    refusal = null;
    JdbcCredentials credentials = credentialsLookup.get();
    boolean tls = tls();
    JdbcConnectionGuard guard =
        new JdbcConnectionGuard(
            settings.egress(), url.host(), Long.MAX_VALUE / 4, messageLimit, tls);
    aborts.accept(guard::abortSockets);
    Properties p =
        JdbcDriver.POSTGRESQL.properties(
            CONNECT_TIMEOUT,
            socketTimeout,
            url,
            (int) Math.min(Integer.MAX_VALUE, messageLimit),
            guard.token());
    p.setProperty("ApplicationName", "bloom-operator-stream");
    if (replication) {
      p.setProperty("replication", "database");
      p.setProperty("preferQueryMode", "simple");
      p.setProperty("assumeMinServerVersion", "10");
      // Replication commands cannot run in a transaction block, which a read-only session opens.
      p.setProperty("readOnly", "false");
      p.setProperty("readOnlyMode", "ignore");
    }
    if (tls) {
      // The bound applies above TLS too; the verifying choice is the one the source's sslmode made.
      p.setProperty(
          BoundedSslFactory.VERIFY,
          Boolean.toString(
              "org.postgresql.ssl.DefaultJavaSSLFactory".equals(p.getProperty("sslfactory"))));
      p.setProperty(BoundedSslFactory.LIMIT, Long.toString(messageLimit));
      p.setProperty("sslfactory", BoundedSslFactory.class.getName());
    }
    if (credentials != null) {
      p.setProperty("user", credentials.username());
      p.setProperty("password", credentials.password());
    }
    Connection connection = null;
    try {
      connection = guard.call(() -> JdbcDriver.POSTGRESQL.connect(url.url(), p));
      if (!replication) {
        JdbcDriver.POSTGRESQL.makeReadOnly(connection);
        connection.setAutoCommit(true);
      }
      return new Link(connection, guard);
    } catch (SQLException | RuntimeException e) {
      refusal = guard.refusal();
      guard.close();
      if (connection != null) {
        new Link(connection, guard).close();
      }
      throw e;
    }
  }

  /**
   * An open connection and the guard its sockets obey; the guard stays findable (for PgJDBC's
   * cancel requests, made on a connection of their own) until this is closed.
   */
  public static final class Link implements AutoCloseable {
    private final Connection connection;
    private final JdbcConnectionGuard guard;

    private Link(Connection connection, JdbcConnectionGuard guard) {
      this.connection = connection;
      this.guard = guard;
    }

    public Connection connection() {
      return connection;
    }

    /**
     * Closes the connection's sockets now, from any thread (a call blocked on them fails at once);
     * {@link #close()} still releases the rest.
     */
    public void abort() {
      guard.abortSockets();
    }

    /** Closes the connection (nothing of it is worth an error) and ends the guard's token. */
    @Override
    public void close() {
      try {
        connection.close();
      } catch (SQLException | RuntimeException e) {
        // A replication connection may be mid-stream; the socket is closed either way.
      } finally {
        guard.close();
      }
    }
  }

  /** Why the last connection was refused by the egress policy, if it was. */
  public Optional<String> refusal() {
    EgressPolicy.Refusal r = refusal;
    return r == null ? Optional.empty() : Optional.of(r.text());
  }

  /**
   * Whether the driver asks for TLS first: every sslmode but {@code disable} and {@code allow}
   * (which tries plain text first; its TLS retry is not parsed as the bound expects and fails
   * closed).
   */
  private boolean tls() {
    String mode = url.parameters().get("sslmode");
    return mode == null || !(mode.equals("disable") || mode.equals("allow"));
  }
}
