package io.bloomoperator.source;

import io.bloomoperator.api.Durations;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

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
 * Secret is not supported yet. Each read opens one connection (a partitioned read several, below)
 * and closes it afterwards; a build without {@code expectedInsertions} reads twice (count, then
 * fill), so it runs the query twice.
 *
 * <p><b>Partitions.</b> With {@code partitions} the query is read as range partitions of an integer
 * column ({@link JdbcPartitions}: wrapped, never spliced; the column a checked identifier, the
 * bounds parameters) on the build's own connection plus the namespace's free share of partition
 * connections ({@link JdbcConnectionShares}), all made by the same {@link JdbcConnector}; on
 * PostgreSQL in one exported snapshot, on MySQL/MariaDB on a primary key only ({@link
 * PartitionedRead}).
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
 * <p><b>Timeouts.</b> Connecting (TCP and login) is bounded by {@value
 * JdbcConnector#CONNECT_TIMEOUT_SECONDS}s, which the spec cannot change. {@code queryTimeout}
 * (default 30m, at most the operator's {@code BLOOM_JDBC_MAX_QUERY_TIME}, default 10m: a larger
 * value is lowered to it, and a timeout then says so) bounds the whole read after that, not just
 * the execution: it is set as the statement's query timeout and, because drivers do not apply that
 * to later fetches, a watchdog cancels the statement and drops the connection when the read as a
 * whole runs over (a read waiting on a stalled server or network sees only the dropped connection).
 * Socket reads time out at {@code queryTimeout} plus one minute, as a backstop.
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

  private final JdbcUrl.Parsed url;
  private final JdbcDriver driver;
  private final String query;
  private final JdbcSourceSettings settings;
  private final int fetchSize;
  private final Duration queryTimeout;
  private final JdbcErrors errors;
  private final JdbcConnector connector;

  /** The exported snapshot every read runs in ({@link #inSnapshot}), or null: a fresh one. */
  private final ExportedSnapshot snapshot;

  /** The partitions to read on several connections, or null: one connection. */
  private final JdbcPartitions partitions;

  /** The namespace whose share of partition connections a read takes. */
  private final String namespace;

  /** The connection and read loop of the read under way, for {@link #cancel}. */
  private volatile Connection reading;

  private volatile JdbcStream readingStream;

  private volatile PartitionedRead readingPartitions;

  /** What a {@link PartitionedRead} needs of its source. */
  record Parts(
      JdbcDriver driver,
      String query,
      JdbcSourceSettings settings,
      int fetchSize,
      Duration queryTimeout,
      JdbcErrors errors,
      JdbcConnector connector) {

    /** A read loop for one of the partitions' connections. */
    JdbcStream stream() {
      return new JdbcStream(driver, query, settings, fetchSize, queryTimeout, null, errors);
    }
  }

  /**
   * @throws IllegalArgumentException when the URL, query or a setting is invalid (an invalid spec)
   */
  public JdbcSource(SecretAccess secrets, JdbcSourceSpec spec, JdbcSourceSettings settings) {
    this(spec, settings, credentialsLookup(secrets, spec), secrets.namespace());
  }

  JdbcSource(
      JdbcSourceSpec spec, JdbcSourceSettings settings, JdbcCredentials.Lookup credentialsLookup) {
    this(spec, settings, credentialsLookup, "default");
  }

  /**
   * @param namespace the filter's namespace, whose share of partition connections reads take
   */
  JdbcSource(
      JdbcSourceSpec spec,
      JdbcSourceSettings settings,
      JdbcCredentials.Lookup credentialsLookup,
      String namespace) {
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
    Duration clampedQueryTimeout =
        spec.getQueryTimeout() != null && timeout.compareTo(settings.maxQueryTime()) > 0
            ? timeout
            : null;
    this.queryTimeout =
        timeout.compareTo(settings.maxQueryTime()) > 0 ? settings.maxQueryTime() : timeout;
    this.errors = new JdbcErrors(url, settings, fetchSize, queryTimeout, clampedQueryTimeout);
    this.connector = new JdbcConnector(url, settings, queryTimeout, credentialsLookup, errors);
    this.snapshot = null;
    this.partitions = JdbcPartitions.of(spec.getPartitions(), query);
    this.namespace = namespace;
  }

  private JdbcSource(JdbcSource source, ExportedSnapshot snapshot) {
    this.url = source.url;
    this.driver = source.driver;
    this.query = source.query;
    this.settings = source.settings;
    this.fetchSize = source.fetchSize;
    this.queryTimeout = source.queryTimeout;
    this.errors = source.errors;
    this.connector = source.connector;
    this.snapshot = snapshot;
    this.partitions = source.partitions;
    this.namespace = source.namespace;
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
    return new JdbcSource(this, Objects.requireNonNull(snapshot));
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
    if (partitions != null) {
      PartitionedRead read =
          new PartitionedRead(
              new Parts(driver, query, settings, fetchSize, queryTimeout, errors, connector),
              partitions,
              snapshot,
              namespace);
      readingPartitions = read;
      try {
        read.read(sink);
      } finally {
        readingPartitions = null;
      }
      return;
    }
    connector.checkLiteral();
    JdbcConnectionGuard guard = connector.guard();
    Connection connection = connector.connect(guard);
    AtomicBoolean timedOut = new AtomicBoolean();
    JdbcStream stream =
        new JdbcStream(driver, query, settings, fetchSize, queryTimeout, snapshot, errors);
    reading = connection;
    readingStream = stream;
    try {
      guard.call(
          () -> {
            stream.read(connection, sink, timedOut, guard);
            return null;
          });
    } catch (SQLException e) {
      throw errors.classify(e, false, timedOut.get(), guard);
    } catch (JdbcStream.SourceFailure e) {
      throw e.cause;
    } finally {
      reading = null;
      readingStream = null;
      JdbcConnector.closeQuietly(connection);
      guard.close();
    }
  }

  /**
   * Cancels the statement under way (which frees the server: a dropped connection alone leaves
   * PostgreSQL running the query until it next writes to the client), then drops the connection,
   * which ends a read blocked on a stalled server or network.
   */
  @Override
  public void cancel() {
    PartitionedRead partitioned = readingPartitions;
    if (partitioned != null) {
      partitioned.stop();
    }
    JdbcStream stream = readingStream;
    Statement statement = stream == null ? null : stream.statement();
    if (statement != null) {
      try {
        statement.cancel();
      } catch (SQLException | RuntimeException ignored) {
        // Dropping the connection below ends the read anyway.
      }
    }
    Connection connection = reading;
    if (connection != null) {
      JdbcConnector.abortQuietly(connection);
    }
  }
}
