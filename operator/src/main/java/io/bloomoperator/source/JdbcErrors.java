package io.bloomoperator.source;

import io.bloomoperator.api.Reasons;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failures of one jdbc source as the Ready condition reports them: fixed texts naming the
 * reason, the SQLState and {@code host:port}, never the database's message (which can quote row
 * values or names; it is logged at debug level only). See {@link JdbcSource}, "Errors".
 */
final class JdbcErrors {

  private static final Logger LOG = LoggerFactory.getLogger(JdbcSource.class);

  /** Five letters or digits: anything else from the server is not shown. */
  private static final Pattern SQLSTATE = Pattern.compile("[0-9A-Z]{5}");

  private final JdbcUrl.Parsed url;
  private final JdbcSourceSettings settings;
  private final int fetchSize;
  private final Duration queryTimeout;

  /** The spec's {@code queryTimeout} when it is above the operator's maximum, else null. */
  private final Duration clampedQueryTimeout;

  JdbcErrors(
      JdbcUrl.Parsed url,
      JdbcSourceSettings settings,
      int fetchSize,
      Duration queryTimeout,
      Duration clampedQueryTimeout) {
    this.url = url;
    this.settings = settings;
    this.fetchSize = fetchSize;
    this.queryTimeout = queryTimeout;
    this.clampedQueryTimeout = clampedQueryTimeout;
  }

  SourceException addressRefused(EgressPolicy.Refusal refusal) {
    return new SourceException(
        Reasons.SOURCE_ADDRESS_NOT_ALLOWED,
        "cannot connect to "
            + url.server()
            + ": its address "
            + refusal.text()
            + " (only the operator's BLOOM_HTTP_ALLOW can admit it); nothing was sent there");
  }

  SourceException valueTooLong(long row) {
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
  SourceException snapshotLost(SQLException e) {
    String state = sqlState(e);
    if (LOG.isDebugEnabled()) {
      LOG.debug("jdbc source {}: snapshot import failed", url.server(), e);
    }
    return new SourceException(
        Reasons.SOURCE_UNREADABLE,
        "the snapshot of the change stream's replication slot could not be used on "
            + url.server()
            + code(state)
            + "; the next full build takes a new one");
  }

  /** A partition's connection could not import the snapshot the first one exported. */
  SourceException partitionSnapshotLost(SQLException e) {
    String state = sqlState(e);
    if (LOG.isDebugEnabled()) {
      LOG.debug("jdbc source {}: partition snapshot import failed", url.server(), e);
    }
    return new SourceException(
        Reasons.SOURCE_UNREADABLE,
        "a partition's connection to "
            + url.server()
            + " could not read in the partitions' shared snapshot"
            + code(state));
  }

  /**
   * MySQL/MariaDB: the partition column could not be shown to be its table's single-column primary
   * key. Names are the author's and the database's text: not repeated.
   */
  SourceException notPrimaryKey(String why) {
    return new SourceException(
        Reasons.SOURCE_QUERY_FAILED,
        "spec.source.jdbc.partitions.column "
            + why
            + "; on MySQL/MariaDB partitions read without a shared snapshot, so only a table's"
            + " single-column, non-NULL primary key may partition (docs/configuration.md)");
  }

  SourceException batchTooLarge() {
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

  SourceException timeout() {
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
    return d.toString().substring(2).toLowerCase(Locale.ROOT);
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
    String code = code(state);
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

  /** {@code " (SQLState XXXXX)"} for a well-formed SQLState, else nothing. */
  private static String code(String state) {
    return state != null && SQLSTATE.matcher(state).matches() ? " (SQLState " + state + ")" : "";
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
}
