package io.bloomoperator.source;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;

/**
 * What differs between the bundled drivers: how to connect with bounded timeouts and how to make
 * the driver stream a result instead of buffering it. Everything else in {@link JdbcSource} is
 * plain JDBC.
 *
 * <p>Timeouts are passed as connection properties next to the user and password; whether a
 * parameter of the same name in the user's URL overrides them is up to the driver (PgJDBC lets
 * the URL win).
 */
enum JdbcDriver {

  /**
   * PgJDBC buffers the whole result unless it can use a portal (server-side cursor): that takes
   * autocommit off, a forward-only read-only statement and a positive fetch size, and then
   * {@code fetchSize} rows are fetched per round trip. Timeouts are in seconds.
   */
  POSTGRESQL("jdbc:postgresql:", org.postgresql.Driver::new) {
    @Override
    Properties properties(Duration connectTimeout, Duration socketTimeout) {
      Properties p = new Properties();
      p.setProperty("connectTimeout", Long.toString(seconds(connectTimeout)));
      p.setProperty("loginTimeout", Long.toString(seconds(connectTimeout)));
      p.setProperty("socketTimeout", Long.toString(seconds(socketTimeout)));
      p.setProperty("ApplicationName", "bloom-operator");
      return p;
    }

    @Override
    void prepare(Connection connection) throws SQLException {
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
   * at a time as the server sends them (the server pushes the result; there are no per-batch
   * round trips, so {@code fetchSize} has nothing to size). The alternative,
   * {@code useCursorFetch=true}, would make the server materialize the result in a temporary
   * table first. Timeouts are in milliseconds.
   */
  MYSQL("jdbc:mysql:", com.mysql.cj.jdbc.Driver::new) {
    @Override
    Properties properties(Duration connectTimeout, Duration socketTimeout) {
      Properties p = new Properties();
      p.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
      p.setProperty("socketTimeout", Long.toString(socketTimeout.toMillis()));
      p.setProperty("useCursorFetch", "false");
      return p;
    }

    @Override
    int fetchSize(int requested) {
      return Integer.MIN_VALUE;
    }
  },

  /**
   * MariaDB Connector/J 3 streams whenever the fetch size is positive: it reads {@code fetchSize}
   * rows from the socket at a time and keeps no more ({@link Integer#MIN_VALUE} is rejected by
   * this driver). Timeouts are in milliseconds.
   */
  MARIADB("jdbc:mariadb:", org.mariadb.jdbc.Driver::new) {
    @Override
    Properties properties(Duration connectTimeout, Duration socketTimeout) {
      Properties p = new Properties();
      p.setProperty("connectTimeout", Long.toString(connectTimeout.toMillis()));
      p.setProperty("socketTimeout", Long.toString(socketTimeout.toMillis()));
      return p;
    }

    @Override
    int fetchSize(int requested) {
      return requested;
    }
  };

  private final String prefix;
  /** Creates a driver instance (MySQL's constructor declares SQLException). */
  @FunctionalInterface
  private interface DriverFactory {
    Driver create() throws SQLException;
  }

  private final DriverFactory driver;

  JdbcDriver(String prefix, DriverFactory driver) {
    this.prefix = prefix;
    this.driver = driver;
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
    throw new IllegalArgumentException("spec.source.jdbc.url must start with jdbc:postgresql:, "
        + "jdbc:mysql: or jdbc:mariadb:");
  }

  /** Connection properties bounding connection setup and every socket read. */
  abstract Properties properties(Duration connectTimeout, Duration socketTimeout);

  /** Whatever the connection needs before a streaming statement is created. */
  void prepare(Connection connection) throws SQLException {
  }

  /** The {@code Statement.setFetchSize} value that makes this driver stream. */
  abstract int fetchSize(int requested);

  /** Opens a connection with this driver directly (no DriverManager lookup). */
  Connection connect(String url, Properties properties) throws SQLException {
    Connection connection = driver.create().connect(url, properties);
    if (connection == null) {
      // Driver.connect returns null for a URL it does not accept.
      throw new SQLException("the " + name().toLowerCase(Locale.ROOT)
          + " driver does not accept this URL", "08001");
    }
    return connection;
  }

  private static long seconds(Duration d) {
    return Math.max(1, (d.toMillis() + 999) / 1000);
  }
}
