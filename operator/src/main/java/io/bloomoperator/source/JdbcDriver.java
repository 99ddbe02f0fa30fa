package io.bloomoperator.source;

import java.lang.reflect.Field;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.PreparedStatement;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutorBase;
import org.postgresql.jdbc.PgConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What differs between the bundled drivers: which URL parameters are allowed, which connection
 * properties keep the driver from reaching beyond the database (local files, several statements,
 * credential and authentication plugins), how to make the session read-only and how to make the
 * driver stream a result instead of buffering it, and how each one's own buffer limit is set. Every
 * driver connects through the operator's socket factory ({@code socketFactory}, {@link
 * JdbcConnectionGuard}), so its connections obey the egress policy and its fetches a byte limit.
 * Everything else in {@link JdbcSource} is plain JDBC.
 *
 * <p>Property names and defaults were checked against the sources of the bundled versions (PgJDBC
 * 42.7.8, MySQL Connector/J 9.4, MariaDB Connector/J 3.5.6). Which of URL and {@code Properties}
 * wins differs (PgJDBC and MariaDB let the URL win, Connector/J the properties), so the forced
 * properties are safe only together with the URL allowlist ({@link JdbcUrl}), which keeps every one
 * of them out of the URL.
 */
enum JdbcDriver {

  /**
   * PgJDBC buffers the whole result unless it can use a portal (server-side cursor): that takes
   * autocommit off, a forward-only read-only statement and a positive fetch size, and then {@code
   * fetchSize} rows are fetched per round trip. Timeouts are in seconds.
   *
   * <p>TLS uses the JVM's trust store for {@code verify-ca}/{@code verify-full} (and {@code
   * ssl=true}) and encrypts without verifying for {@code require}/{@code prefer}, as libpq does;
   * either way no key or certificate file of the operator's home ({@code ~/.postgresql}) is read.
   * Without credentials the password is set empty, so the driver does not look it up in a {@code
   * .pgpass} file of the operator.
   */
  POSTGRESQL(
      "jdbc:postgresql:",
      5432,
      org.postgresql.Driver::new,
      Map.of(
          "sslmode", Pattern.compile("disable|allow|prefer|require|verify-ca|verify-full"),
          "ssl", Pattern.compile("true|false"),
          "ApplicationName", Pattern.compile("[A-Za-z0-9._-]{1,63}"),
          // Comma-separated identifiers (the search path).
          "currentSchema",
              Pattern.compile(
                  "[A-Za-z_][A-Za-z0-9_$]{0,62}" + "(?:,[A-Za-z_][A-Za-z0-9_$]{0,62})*"))) {
    @Override
    Properties properties(
        Duration connectTimeout,
        Duration socketTimeout,
        JdbcUrl.Parsed url,
        int batchBytes,
        String guardToken) {
      Properties p = guarded(GuardedSocketFactory.class);
      p.setProperty("connectTimeout", Long.toString(seconds(connectTimeout)));
      p.setProperty("loginTimeout", Long.toString(seconds(connectTimeout)));
      p.setProperty("socketTimeout", Long.toString(seconds(socketTimeout)));
      p.setProperty("ApplicationName", "bloom-operator");
      p.setProperty("readOnly", "true");
      p.setProperty("readOnlyMode", "always");
      p.setProperty("preferQueryMode", "extended");
      p.setProperty("gssEncMode", "disable");
      String mode =
          url.parameters()
              .getOrDefault(
                  "sslmode", "true".equals(url.parameters().get("ssl")) ? "verify-full" : "prefer");
      p.setProperty(
          "sslfactory",
          mode.startsWith("verify-")
              ? "org.postgresql.ssl.DefaultJavaSSLFactory"
              : "org.postgresql.ssl.NonValidatingFactory");
      p.setProperty("password", "");
      // Checked on each row's announced length, before its bytes are read or held (a rogue
      // server can announce any length). PgJDBC resets the count only after simple-protocol
      // queries, so it would bound the whole result: fetchReset makes it a bound per fetch.
      p.setProperty("maxResultBuffer", Integer.toString(batchBytes));
      // PgJDBC connects on a thread of its own (for loginTimeout): the factory finds the guard
      // by this token, not by the connecting thread.
      p.setProperty("socketFactoryArg", guardToken);
      return p;
    }

    /**
     * The database measures each value and sends only those within the limit, with a flag for the
     * others: an over-long value never crosses the network. Only the first column is selected, so
     * other columns of the query cost nothing either. Fewer aliases than columns are allowed in
     * PostgreSQL, so the query may return any number of columns.
     */
    @Override
    String bounded(String query, int maxValueBytes) {
      String length = "octet_length(CAST(bloom_source.k AS text))";
      return "SELECT CASE WHEN "
          + length
          + " <= "
          + maxValueBytes
          + " THEN bloom_source.k END AS k, "
          + length
          + " > "
          + maxValueBytes
          + " AS bloom_value_too_long FROM ("
          + query
          + ") AS bloom_source(k)";
    }

    /**
     * An integer first column cannot hold a value longer than {@value #LONGEST_INTEGER_TEXT} bytes
     * of text, so when the limit allows that, only the column is selected and nothing is checked
     * per row: the check casts each value to text on the server, which for a bigint column cost
     * more per row than the driver's whole read (docs/benchmarks.md, JDBC per-row overhead). The
     * server describes the query without running it (PgJDBC sends no BEGIN for a describe, so a
     * failure leaves no transaction behind); when it cannot, the checked statement is sent.
     */
    @Override
    boolean needsNoCheck(Connection connection, String query, int maxValueBytes) {
      return maxValueBytes >= LONGEST_INTEGER_TEXT && firstColumnIsInteger(connection, query);
    }

    @Override
    Checked checked(String query, boolean noCheck, int maxValueBytes) {
      if (noCheck) {
        return new Checked("SELECT bloom_source.k FROM (" + query + ") AS bloom_source(k)", false);
      }
      return super.checked(query, false, maxValueBytes);
    }

    @Override
    Runnable fetchReset(Connection connection) {
      try {
        Object executor = connection.unwrap(PgConnection.class).getQueryExecutor();
        Field field = QueryExecutorBase.class.getDeclaredField("pgStream");
        field.setAccessible(true);
        PGStream stream = (PGStream) field.get(executor);
        return stream::clearResultBufferCount;
      } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
        // A PgJDBC without that field: maxResultBuffer then bounds the whole result, which
        // fails large reads loudly (SourceLimitExceeded) rather than risking the heap.
        LOG.warn("PgJDBC's result buffer count cannot be reset per fetch: {}", e.toString());
        return () -> {};
      }
    }

    @Override
    void makeReadOnly(Connection connection) throws SQLException {
      connection.setReadOnly(true);
      execute(connection, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY");
      // The cursor needs a transaction; it starts read-only as the session default now says.
      connection.setAutoCommit(false);
    }

    @Override
    int fetchSize(int requested) {
      return requested;
    }
  },

  /**
   * MySQL Connector/J reads the whole result into memory unless the statement is forward-only,
   * read-only and has fetch size {@link Integer#MIN_VALUE}: then rows are read from the socket one
   * at a time as the server sends them (the server pushes the result; there are no per-batch round
   * trips, so {@code fetchSize} has nothing to size). The alternative, {@code useCursorFetch=true},
   * would make the server materialize the result in a temporary table first. Timeouts are in
   * milliseconds. {@code LOCAL INFILE} is off by default in this driver and forced off here;
   * authentication plugins that send the password in clear or use the operator's own identity
   * (LDAP, Kerberos, OCI, OpenID Connect, WebAuthn) are disabled.
   */
  MYSQL(
      "jdbc:mysql:",
      3306,
      com.mysql.cj.jdbc.Driver::new,
      Map.of(
          "sslMode", Pattern.compile("DISABLED|PREFERRED|REQUIRED|VERIFY_CA|VERIFY_IDENTITY"),
          "useSSL", Pattern.compile("true|false"),
          "characterEncoding", Pattern.compile("[A-Za-z0-9_-]{1,32}"))) {
    @Override
    Properties properties(
        Duration connectTimeout,
        Duration socketTimeout,
        JdbcUrl.Parsed url,
        int batchBytes,
        String guardToken) {
      Properties p = guarded(GuardedMySqlSocketFactory.class);
      p.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
      p.setProperty("socketTimeout", Long.toString(socketTimeout.toMillis()));
      p.setProperty("useCursorFetch", "false");
      // Checked on each packet's announced length, before it is read: a row (streamed one at a
      // time) of more than this fails instead of being held.
      p.setProperty("maxAllowedPacket", Integer.toString(Math.min(batchBytes, MAX_PACKET)));
      p.setProperty("allowLoadLocalInfile", "false");
      p.setProperty("allowUrlInLocalInfile", "false");
      p.setProperty("allowMultiQueries", "false");
      p.setProperty("readOnlyPropagatesToServer", "true");
      // Result metadata names original tables and columns (the partition-key check needs them).
      p.setProperty("useOldAliasMetadataBehavior", "false");
      p.setProperty("allowPublicKeyRetrieval", "false");
      p.setProperty("fallbackToSystemKeyStore", "false");
      p.setProperty(
          "disabledAuthenticationPlugins",
          "mysql_clear_password,"
              + "authentication_ldap_sasl_client,authentication_kerberos_client,"
              + "authentication_oci_client,authentication_openid_connect_client,"
              + "authentication_webauthn_client");
      return p;
    }

    @Override
    int fetchSize(int requested) {
      return Integer.MIN_VALUE;
    }
  },

  /**
   * MariaDB Connector/J 3 streams whenever the fetch size is positive: it reads {@code fetchSize}
   * rows from the socket at a time and keeps no more ({@link Integer#MIN_VALUE} is rejected by this
   * driver). Timeouts are in milliseconds. This driver allows {@code LOCAL INFILE} by default
   * (forced off here) and, even when it is off, answers a server's file request when the query text
   * names that file: {@link JdbcQuery} refuses such texts. Authentication is restricted to the
   * hashing plugins (no clear-text, PAM dialog or GSSAPI), and no credential plugin ({@code
   * credentialType}) can be chosen. Server-initiated redirection to another host is off. The
   * driver's own logging is off: it logs every server error message at warn level ({@value
   * #MARIADB_NO_LOGGING}, see the static initializer).
   */
  MARIADB(
      "jdbc:mariadb:",
      3306,
      org.mariadb.jdbc.Driver::new,
      Map.of("sslMode", Pattern.compile("disable|trust|verify-ca|verify-full"))) {
    @Override
    Properties properties(
        Duration connectTimeout,
        Duration socketTimeout,
        JdbcUrl.Parsed url,
        int batchBytes,
        String guardToken) {
      Properties p = guarded(GuardedSocketFactory.class);
      p.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
      p.setProperty("socketTimeout", Long.toString(socketTimeout.toMillis()));
      p.setProperty("allowLocalInfile", "false");
      p.setProperty("allowMultiQueries", "false");
      p.setProperty("allowPublicKeyRetrieval", "false");
      p.setProperty("transactionReplay", "false");
      // Result metadata names original tables and columns (the partition-key check needs them).
      p.setProperty("useOldAliasMetadataBehavior", "false");
      // A server may otherwise send the client, credentials included, to another host.
      p.setProperty("permitRedirect", "false");
      p.setProperty(
          "restrictedAuth", "mysql_native_password,client_ed25519,parsec,caching_sha2_password");
      return p;
    }

    @Override
    int fetchSize(int requested) {
      return requested;
    }
  };

  private static final Logger LOG = LoggerFactory.getLogger(JdbcDriver.class);

  /** The largest MySQL protocol packet (16 MiB - 1); larger rows span several. */
  private static final int MAX_PACKET = 0xffffff;

  /** MariaDB Connector/J's switch for its logging, read once when the driver first logs. */
  static final String MARIADB_NO_LOGGING = "mariadb.logging.disable";

  static {
    // MariaDB Connector/J logs each server error packet ("Error: 1146-42S02: Table 'x' doesn't
    // exist") at warn level, which would put the database's text into the operator's log. Set
    // before the driver's classes load; an explicit setting by the administrator is kept.
    if (System.getProperty(MARIADB_NO_LOGGING) == null) {
      System.setProperty(MARIADB_NO_LOGGING, "true");
    }
  }

  private final String prefix;
  private final int defaultPort;
  private final Map<String, Pattern> allowedParameters;

  /** Creates a driver instance (MySQL's constructor declares SQLException). */
  @FunctionalInterface
  private interface DriverFactory {
    Driver create() throws SQLException;
  }

  private final DriverFactory driver;

  JdbcDriver(
      String prefix,
      int defaultPort,
      DriverFactory driver,
      Map<String, Pattern> allowedParameters) {
    this.prefix = prefix;
    this.defaultPort = defaultPort;
    this.driver = driver;
    this.allowedParameters = allowedParameters;
  }

  /**
   * The driver for a URL, chosen by its scheme.
   *
   * @throws IllegalArgumentException for any other scheme
   */
  static JdbcDriver forUrl(String url) {
    String lower = url.toLowerCase(Locale.ROOT);
    for (JdbcDriver d : values()) {
      if (lower.startsWith(d.prefix)) {
        return d;
      }
    }
    throw new IllegalArgumentException(
        "spec.source.jdbc.url must start with jdbc:postgresql:, " + "jdbc:mysql: or jdbc:mariadb:");
  }

  /** {@code jdbc:<name>:}. */
  String prefix() {
    return prefix;
  }

  int defaultPort() {
    return defaultPort;
  }

  /** The URL parameters a user may set, each with the shape its value must have. */
  Map<String, Pattern> allowedParameters() {
    return allowedParameters;
  }

  /**
   * Connection properties bounding connection setup and every socket read, and forcing off what
   * could reach beyond the database.
   *
   * @param batchBytes the most one fetch may bring ({@link JdbcSourceSettings#maxBatchBytes()})
   * @param guardToken names the read's {@link JdbcConnectionGuard} for the socket factory
   */
  abstract Properties properties(
      Duration connectTimeout,
      Duration socketTimeout,
      JdbcUrl.Parsed url,
      int batchBytes,
      String guardToken);

  /**
   * Properties starting with the operator's socket factory, so that every connection the driver
   * makes is checked against the egress policy and counted ({@link JdbcConnectionGuard}).
   */
  private static Properties guarded(Class<?> socketFactory) {
    Properties p = new Properties();
    p.setProperty("socketFactory", socketFactory.getName());
    return p;
  }

  /**
   * Makes every following statement of the session run in a read-only transaction, by a statement
   * of our own rather than only {@link Connection#setReadOnly}, which MariaDB Connector/J does not
   * send to the server at all. Also whatever the connection needs before a streaming statement is
   * created.
   */
  void makeReadOnly(Connection connection) throws SQLException {
    connection.setReadOnly(true);
    execute(connection, "SET SESSION TRANSACTION READ ONLY");
  }

  /**
   * The statement that runs {@code query} with the value length checked by the database where the
   * driver's SQL dialect allows it without knowing the column's name; the checked query then
   * returns a second column, true for a value over {@code maxValueBytes} (sent as NULL). MySQL and
   * MariaDB cannot rename a derived table's first column alone: the query is sent as it is, and the
   * operator's own bounds apply ({@link JdbcConnectionGuard}, the reader's check).
   */
  String bounded(String query, int maxValueBytes) {
    return query;
  }

  /**
   * The decimal text of the longest integer a PostgreSQL integer column holds: {@code
   * -9223372036854775808}.
   */
  static final int LONGEST_INTEGER_TEXT = 20;

  /**
   * What {@link JdbcSource} sends for a query.
   *
   * @param flagged whether the statement returns the over-long flag as its second column
   */
  record Checked(String sql, boolean flagged) {}

  /**
   * The statement to send for {@code query}: {@link #bounded}, flagged as that adds the flag; for
   * PostgreSQL the first column alone when the server describes it as an integer.
   */
  Checked checked(Connection connection, String query, int maxValueBytes) {
    return checked(query, needsNoCheck(connection, query, maxValueBytes), maxValueBytes);
  }

  /**
   * Whether the first column of {@code query} can hold no value over {@code maxValueBytes}, so the
   * server need not check each value: a PostgreSQL integer column, described without running the
   * query. Decided once for a partitioned read, whose ranges all have the query's columns.
   */
  boolean needsNoCheck(Connection connection, String query, int maxValueBytes) {
    return false;
  }

  /** The statement to send for {@code query}, {@code noCheck} as {@link #needsNoCheck} said. */
  Checked checked(String query, boolean noCheck, int maxValueBytes) {
    return new Checked(bounded(query, maxValueBytes), flagsLongValues());
  }

  /**
   * Whether the server describes the query's first column as {@code smallint}, {@code integer} or
   * {@code bigint}, without running it; false when it cannot say.
   */
  private static boolean firstColumnIsInteger(Connection connection, String query) {
    try (PreparedStatement describe = connection.prepareStatement(query)) {
      ResultSetMetaData meta = describe.getMetaData();
      if (meta == null || meta.getColumnCount() < 1) {
        return false;
      }
      int type = meta.getColumnType(1);
      return type == Types.SMALLINT || type == Types.INTEGER || type == Types.BIGINT;
    } catch (SQLException | RuntimeException e) {
      // E.g. a '?' the driver takes for a parameter; the query itself reports real errors.
      return false;
    }
  }

  /** Whether {@link #bounded} adds the over-long flag as the second column. */
  boolean flagsLongValues() {
    return this == POSTGRESQL;
  }

  /**
   * What to run before each fetch so that the driver's own buffer bound counts per fetch; nothing
   * for drivers whose bound is per packet.
   */
  Runnable fetchReset(Connection connection) {
    return () -> {};
  }

  /** The {@code Statement.setFetchSize} value that makes this driver stream. */
  abstract int fetchSize(int requested);

  /** Opens a connection with this driver directly (no DriverManager lookup). */
  Connection connect(String url, Properties properties) throws SQLException {
    Connection connection = driver.create().connect(url, properties);
    if (connection == null) {
      // Driver.connect returns null for a URL it does not accept.
      throw new SQLException(
          "the " + name().toLowerCase(Locale.ROOT) + " driver does not accept this URL", "08001");
    }
    return connection;
  }

  private static void execute(Connection connection, String sql) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      statement.execute(sql);
    }
  }

  private static long seconds(Duration d) {
    return Math.max(1, (d.toMillis() + 999) / 1000);
  }
}
