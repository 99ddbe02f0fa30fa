package io.bloomoperator.source;

import static io.bloomoperator.source.JdbcTestTables.TEXT_TABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.TcpProxy.Mode;
import io.bloomoperator.testing.servers.PostgresServer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The JDBC source when the network to a real PostgreSQL breaks part-way through a result: a proxy
 * lets the login and the first rows through, then stalls or sends garbage. The read must end within
 * its queryTimeout with a reason, and the message must quote nothing the connection carried.
 */
class JdbcSourceNetworkFaultTest {

  /** Past the login and a few fetches of 1,000 rows: the fault strikes mid-result. */
  private static final int PASS_BYTES = 48 * 1024;

  private static final int ROWS = 100_000;

  private static PostgresServer pg;
  private TcpProxy proxy;

  @BeforeAll
  static void startPostgres() {
    pg = PostgresServer.shared();
    JdbcTestTables.load(pg);
  }

  @BeforeEach
  void startProxy() {
    proxy = new TcpProxy("127.0.0.1", pg.port(), PASS_BYTES);
  }

  @AfterEach
  void stopProxy() {
    proxy.close();
  }

  private SourceException read(String queryTimeout, CollectedKeys into) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl("jdbc:postgresql://127.0.0.1:" + proxy.port() + "/" + PostgresServer.DATABASE);
    // 100,000 rows (about 2 MB): far more than the proxy lets through before a fault strikes.
    spec.setQuery("select k from " + TEXT_TABLE + " limit " + ROWS);
    spec.setFetchSize(1_000);
    spec.setQueryTimeout(queryTimeout);
    JdbcSource source =
        new JdbcSource(
            spec,
            JdbcTestSettings.LOOPBACK,
            () -> new JdbcCredentials(PostgresServer.USER, PostgresServer.PASSWORD));
    return catchThrowableOfType(
        SourceException.class, () -> source.readKeys(new LineParser(KeyType.STRING, into, 0)));
  }

  /**
   * Regression: the watchdog only cancelled the statement, whose answer never arrives through a
   * stalled connection, so the read hung until the socket timeout (queryTimeout + 1 minute).
   */
  @Test
  void aStalledResultEndsAtTheQueryTimeout() {
    proxy.mode(Mode.STALL);
    CollectedKeys keys = new CollectedKeys();
    long started = System.nanoTime();
    SourceException failure = read("2s", keys);
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertThat(failure).isNotNull();
    assertThat(failure.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(failure.getMessage()).contains("within 2s");
    assertThat(keys.keys).as("the stall struck mid-result").isNotEmpty().hasSizeLessThan(ROWS);
    assertThat(took).isLessThan(Duration.ofSeconds(15));
  }

  @Test
  void garbageMidResultIsUnreadableAndQuotesNothing() {
    proxy.mode(Mode.GARBAGE);
    CollectedKeys keys = new CollectedKeys();
    long started = System.nanoTime();
    SourceException failure = read("30s", keys);

    assertThat(failure).isNotNull();
    // Garbage read as a row length can announce a huge row: PgJDBC then refuses it against the
    // operator's fetch limit before allocating it, instead of failing later on the protocol.
    assertThat(failure.reason()).isIn(Reasons.SOURCE_UNREADABLE, Reasons.SOURCE_LIMIT_EXCEEDED);
    assertThat(failure.getMessage())
        .contains("127.0.0.1:" + proxy.port())
        .doesNotContain("sku-")
        .matches("[ -~]*"); // printable ASCII only: no byte of the garbage
    assertThat(failure.getCause()).isNull();
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
  }

  @Test
  void aRefusedConnectionIsUnreadable() {
    proxy.mode(Mode.DOWN);
    SourceException failure = read("30s", new CollectedKeys());
    assertThat(failure).isNotNull();
    assertThat(failure.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(failure.getMessage()).startsWith("cannot connect to 127.0.0.1:" + proxy.port());
  }

  @Test
  void throughAHealthyProxyEveryRowArrives() {
    CollectedKeys keys = new CollectedKeys();
    assertThat(read("60s", keys)).isNull();
    assertThat(keys.keys).hasSize(ROWS);
    assertThat(proxy.accepted()).isPositive();
  }
}
