package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.MariaDbServer;
import io.bloomoperator.testing.servers.PostgresServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What one jdbc source may cost the operator, against real PostgreSQL and MariaDB servers: a huge
 * value or a fetch of wide rows must fail with SourceLimitExceeded in a JVM with a small heap (the
 * old reader died of OutOfMemoryError, which with {@code -XX:+ExitOnOutOfMemoryError} took the
 * whole operator down), an over-long key fails without being echoed, and a stalled query ends
 * within the operator's maximum query time whatever {@code queryTimeout} says.
 */
class JdbcSourceLimitsTest {

  /** Far below the packaged operator's 768 MiB, to leave no doubt about what the reader holds. */
  private static final String CHILD_HEAP = "-Xmx128m";

  private static PostgresServer pg;
  private static MariaDbServer maria;

  @BeforeAll
  static void startServers() {
    pg = PostgresServer.shared();
    maria = MariaDbServer.shared();
  }

  /** Output lines of one read in a JVM of its own; the exit code is the last line. */
  private static List<String> readInChild(
      String url, String user, String password, int fetchSize, String query)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(
        List.of(
            CHILD_HEAP,
            "-XX:+UseSerialGC",
            "-XX:+ExitOnOutOfMemoryError",
            "-cp",
            System.getProperty("java.class.path"),
            JdbcReadChild.class.getName(),
            url,
            user,
            password,
            Integer.toString(fetchSize),
            query));
    Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
    List<String> lines = new ArrayList<>();
    try (var out = child.inputReader(StandardCharsets.UTF_8)) {
      out.lines().forEach(lines::add);
    }
    if (!child.waitFor(5, TimeUnit.MINUTES)) {
      child.destroyForcibly();
    }
    lines.add("EXIT " + child.exitValue());
    return lines;
  }

  private static void assertSurvivedWithLimitExceeded(List<String> lines, String what) {
    System.out.println(what + ": " + lines.stream().filter(l -> !l.startsWith("MESSAGE")).toList());
    assertThat(lines).as(what + ": the reading JVM survived").contains("EXIT 0");
    assertThat(lines).as(what).contains("REASON " + Reasons.SOURCE_LIMIT_EXCEEDED);
    assertThat(String.join("\n", lines)).as(what + ": no value echoed").doesNotContain("xxxx");
  }

  /** {@code select repeat('x', 300000000)}: one 300 MB value, more than the child's whole heap. */
  @Test
  void oneHugeValueFailsTheReadNotTheJvm() throws Exception {
    assertSurvivedWithLimitExceeded(
        readInChild(
            pg.url(),
            PostgresServer.USER,
            PostgresServer.PASSWORD,
            10_000,
            "select repeat('x', 300000000)"),
        "postgresql, one 300 MB value");
  }

  /**
   * 20,000 rows of 60 KB (each under the key limit) with {@code fetchSize: 20000}: 1.2 GB in one
   * fetch unless the fetch size is capped and the fetch's bytes are bounded.
   */
  @Test
  void aLargeFetchOfWideRowsFailsTheReadNotTheJvm() throws Exception {
    assertSurvivedWithLimitExceeded(
        readInChild(
            pg.url(),
            PostgresServer.USER,
            PostgresServer.PASSWORD,
            20_000,
            "select repeat('x', 60000) || g from generate_series(1, 20000) g"),
        "postgresql, 20,000 rows of 60 KB");
  }

  /**
   * The same through MariaDB Connector/J, which reads fetchSize rows at once and bounds nothing.
   */
  @Test
  void aLargeFetchOfWideRowsFailsTheReadNotTheJvmOnMariaDb() throws Exception {
    assertSurvivedWithLimitExceeded(
        readInChild(
            maria.url("jdbc:mariadb:"),
            MariaDbServer.USER,
            MariaDbServer.PASSWORD,
            20_000,
            "select concat(repeat('x', 60000), seq) from seq_1_to_20000"),
        "mariadb, 20,000 rows of 60 KB");
  }

  private static JdbcSourceSpec spec(String url, String query) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(url);
    spec.setQuery(query);
    return spec;
  }

  private static SourceException read(
      JdbcSourceSpec spec, JdbcSourceSettings settings, String user, String password) {
    JdbcSource source = new JdbcSource(spec, settings, () -> new JdbcCredentials(user, password));
    return catchThrowableOfType(
        SourceException.class,
        () -> source.readKeys(new LineParser(KeyType.STRING, new CollectedKeys(), 0)));
  }

  /** A key longer than BLOOM_JDBC_MAX_VALUE_BYTES fails the read, by row number, not content. */
  @Test
  void aValueOverTheKeyLimitIsRefusedWithoutEchoingIt() {
    String query = "select 'short' union all select repeat('x', 70000)";
    List<SourceException> failures =
        List.of(
            read(
                spec(pg.url(), query),
                JdbcTestSettings.LOOPBACK,
                PostgresServer.USER,
                PostgresServer.PASSWORD),
            read(
                spec(maria.url("jdbc:mariadb:"), query),
                JdbcTestSettings.LOOPBACK,
                MariaDbServer.USER,
                MariaDbServer.PASSWORD),
            read(
                spec(maria.url("jdbc:mysql:"), query),
                JdbcTestSettings.LOOPBACK,
                MariaDbServer.USER,
                MariaDbServer.PASSWORD));
    for (SourceException e : failures) {
      assertThat(e).isNotNull();
      assertThat(e.reason()).as(e.getMessage()).isEqualTo(Reasons.SOURCE_LIMIT_EXCEEDED);
      assertThat(e.getMessage())
          .contains("row 2", "65536 bytes", "BLOOM_JDBC_MAX_VALUE_BYTES")
          .doesNotContain("xxxx");
    }
  }

  /**
   * A 10 MB value (under MariaDB's 16 MB packet limit, over the operator's 8 MiB per fetch):
   * Connector/J refuses its packet from the announced length, MariaDB Connector/J is stopped by the
   * operator's byte count.
   */
  @Test
  void aValueOverTheFetchLimitIsRefusedByBothMySqlProtocolDrivers() {
    for (String scheme : List.of("jdbc:mysql:", "jdbc:mariadb:")) {
      SourceException e =
          read(
              spec(maria.url(scheme), "select repeat('x', 10000000)"),
              JdbcTestSettings.LOOPBACK,
              MariaDbServer.USER,
              MariaDbServer.PASSWORD);
      assertThat(e).as(scheme).isNotNull();
      assertThat(e.reason())
          .as(scheme + ": " + e.getMessage())
          .isEqualTo(Reasons.SOURCE_LIMIT_EXCEEDED);
      assertThat(e.getMessage())
          .as(scheme)
          .contains("BLOOM_JDBC_MAX_BATCH_BYTES")
          .doesNotContain("xxxx");
    }
  }

  /**
   * One key, then a sleep of 100,000 s, with {@code queryTimeout: 500h}: the operator's maximum (3
   * s here) ends it, and the status says that the spec's value was above the maximum.
   */
  @Test
  void aStalledQueryEndsAtTheOperatorsMaximumWhateverTheSpecSays() {
    JdbcSourceSettings settings =
        JdbcTestSettings.LOOPBACK.withLimits(
            JdbcTestSettings.LOOPBACK.maxValueBytes(),
            JdbcTestSettings.LOOPBACK.maxBatchBytes(),
            JdbcTestSettings.LOOPBACK.maxFetchSize(),
            Duration.ofSeconds(3));
    record Case(
        String url, String query, String user, String password, Supplier<Long> stillRunning) {}
    List<Case> cases =
        List.of(
            new Case(
                pg.url(),
                "select 'k1' union all select pg_sleep(100000)::text",
                PostgresServer.USER,
                PostgresServer.PASSWORD,
                JdbcSourceLimitsTest::pgSleepsRunning),
            new Case(
                maria.url("jdbc:mariadb:"),
                "select 'k1' union all select sleep(100000)",
                MariaDbServer.USER,
                MariaDbServer.PASSWORD,
                () ->
                    Long.parseLong(
                        maria
                            .query(
                                "select count(*) from information_schema.processlist where info"
                                    + " like '%sleep(100000)%' and id <> connection_id()")
                            .get(0)
                            .strip())));
    for (Case c : cases) {
      JdbcSourceSpec spec = spec(c.url(), c.query());
      spec.setQueryTimeout("500h");
      long start = System.nanoTime();
      SourceException e =
          assertTimeoutPreemptively(
              Duration.ofSeconds(60), () -> read(spec, settings, c.user(), c.password()));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      System.out.println(c.url() + ": stalled query ended after " + took.toMillis() + " ms");
      assertThat(e).isNotNull();
      assertThat(e.reason()).as(e.getMessage()).isEqualTo(Reasons.SOURCE_TIMEOUT);
      assertThat(e.getMessage()).contains("3s", "BLOOM_JDBC_MAX_QUERY_TIME", "500h");
      assertThat(took).isLessThan(Duration.ofSeconds(20));
      // The database session is freed too, not left sleeping for the spec's 500 hours.
      await()
          .atMost(Duration.ofSeconds(15))
          .untilAsserted(() -> assertThat(c.stillRunning().get()).as(c.url()).isZero());
    }
  }

  private static long pgSleepsRunning() {
    try (Connection c = pg.connect();
        Statement s = c.createStatement();
        ResultSet rows =
            s.executeQuery(
                "select count(*) from pg_stat_activity where state = 'active'"
                    + " and query like '%pg_sleep(100000)%' and pid <> pg_backend_pid()")) {
      rows.next();
      return rows.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
