package io.bloomoperator.source;

import static io.bloomoperator.source.JdbcTestTables.LONG_NULLS;
import static io.bloomoperator.source.JdbcTestTables.LONG_TABLE;
import static io.bloomoperator.source.JdbcTestTables.MILLION;
import static io.bloomoperator.source.JdbcTestTables.TEXT_NULLS;
import static io.bloomoperator.source.JdbcTestTables.TEXT_TABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.PostgresServer;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The JDBC source against a real PostgreSQL (no Kubernetes). */
class JdbcSourceTest {

  private static PostgresServer pg;

  @BeforeAll
  static void startPostgres() {
    pg = PostgresServer.shared();
    JdbcTestTables.load(pg);
    pg.execute(
        "create table mixed (k text)",
        "insert into mixed values ('1'), ('2'), ('not-a-number'), (null), ('3')",
        "create table padded (k char(8))",
        "insert into padded values ('ab'), ('abc')");
  }

  private static JdbcSourceSpec spec(String query) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(pg.url());
    spec.setQuery(query);
    return spec;
  }

  private static JdbcSource source(JdbcSourceSpec spec) {
    return new JdbcSource(
        spec,
        JdbcTestSettings.LOOPBACK,
        () -> new JdbcCredentials(PostgresServer.USER, PostgresServer.PASSWORD));
  }

  @Test
  void streamsAMillionBigintKeysAndCountsNulls() throws Exception {
    BitSet seen = new BitSet(MILLION + 1);
    long[] outOfRange = {0};
    LineParser parser =
        new LineParser(
            KeyType.LONG,
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {
                throw new AssertionError("a bigint column must arrive as longs, got " + key);
              }

              @Override
              public void putLong(long key) {
                if (key < 1 || key > MILLION) {
                  outOfRange[0]++;
                } else {
                  seen.set((int) key);
                }
              }
            },
            0);
    JdbcSourceSpec spec = spec("select k from " + LONG_TABLE);
    spec.setFetchSize(5000);
    source(spec).readKeys(parser);

    assertThat(parser.keys()).isEqualTo(MILLION);
    assertThat(parser.nulls()).isEqualTo(LONG_NULLS);
    assertThat(outOfRange[0]).isZero();
    assertThat(seen.cardinality()).as("every key 1..1M arrived").isEqualTo(MILLION);
  }

  @Test
  void streamsAMillionTextKeys() throws Exception {
    BitSet seen = new BitSet(MILLION + 1);
    List<String> unexpected = new ArrayList<>();
    LineParser parser =
        new LineParser(
            KeyType.STRING,
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {
                if (key.startsWith("sku-")) {
                  seen.set(Integer.parseInt(key.substring(4)));
                } else if (unexpected.size() < 5) {
                  unexpected.add(key);
                }
              }

              @Override
              public void putLong(long key) {
                throw new AssertionError("a text column must arrive as text, got " + key);
              }
            },
            0);
    source(spec("select k from " + TEXT_TABLE)).readKeys(parser);

    assertThat(unexpected).isEmpty();
    assertThat(parser.keys()).isEqualTo(MILLION);
    assertThat(parser.nulls()).isEqualTo(TEXT_NULLS);
    assertThat(seen.cardinality()).isEqualTo(MILLION);
    assertThat(seen.get(1) && seen.get(777_777) && seen.get(MILLION)).isTrue();
  }

  /**
   * Proves the cursor: the 5000th row raises an error, so with a cursor exactly the complete
   * batches before it arrive (4900 rows at fetchSize 100, 4000 at 1000), whereas a driver that
   * buffers the whole result would deliver none.
   */
  @Test
  void fetchesFetchSizeRowsPerRoundTrip() {
    String failingAt5000 =
        "select case when g = 5000 then g / (g - g) else g end "
            + "from generate_series(1, "
            + MILLION
            + ") g";
    for (int fetchSize : new int[] {100, 1000}) {
      CollectedKeys collected = new CollectedKeys();
      JdbcSourceSpec spec = spec(failingAt5000);
      spec.setFetchSize(fetchSize);
      assertThatThrownBy(() -> source(spec).readKeys(new LineParser(KeyType.LONG, collected, 0)))
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("SQLState 22012")
          .hasMessageNotContaining("division")
          .extracting(e -> ((SourceException) e).reason())
          .isEqualTo(Reasons.SOURCE_QUERY_FAILED);
      assertThat(collected.keys)
          .as("rows delivered at fetchSize %d", fetchSize)
          .hasSize(4999 / fetchSize * fetchSize);
    }
  }

  @Test
  void longFilterOverTextColumnCountsMalformedAndNulls() throws Exception {
    CollectedKeys tolerant = new CollectedKeys();
    LineParser parser = new LineParser(KeyType.LONG, tolerant, 1);
    source(spec("select k from mixed")).readKeys(parser);
    assertThat(tolerant.keys).containsExactly(1L, 2L, 3L);
    assertThat(parser.malformed()).isEqualTo(1);
    assertThat(parser.nulls()).isEqualTo(1);

    assertThatThrownBy(
            () ->
                source(spec("select k from mixed"))
                    .readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("value(s) are not Long keys")
        .hasMessageNotContaining("not-a-number")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.MALFORMED_KEYS);
  }

  @Test
  void integerColumnFeedsAStringFilterAsDecimalTextAndCharPaddingIsDropped() throws Exception {
    CollectedKeys numbers = new CollectedKeys();
    source(spec("select k::int from " + LONG_TABLE + " where k in (7, 42) order by k"))
        .readKeys(new LineParser(KeyType.STRING, numbers, 0));
    assertThat(numbers.keys).containsExactly("7", "42");

    CollectedKeys padded = new CollectedKeys();
    source(spec("select k from padded order by k"))
        .readKeys(new LineParser(KeyType.STRING, padded, 0));
    assertThat(padded.keys).containsExactly("ab", "abc");
  }

  /**
   * An integer column cannot hold an over-long value, so it is sent without the server's length
   * check, which cast every value to text (about 110 ns per bigint row, more than the driver's
   * whole read: docs/benchmarks.md); text columns keep it. The filter is the one the checked
   * statement gives.
   */
  @Test
  void integerColumnsSkipTheLengthCheckAndGiveTheSameFilter() throws Exception {
    int max = JdbcSourceSettings.defaults().maxValueBytes();
    try (Connection c = pg.connect()) {
      JdbcDriver.Checked integer =
          JdbcDriver.POSTGRESQL.checked(c, "select k from " + LONG_TABLE, max);
      assertThat(integer.flagged()).isFalse();
      assertThat(integer.sql()).doesNotContainIgnoringCase("octet_length");
      JdbcDriver.Checked text =
          JdbcDriver.POSTGRESQL.checked(c, "select k from " + TEXT_TABLE, max);
      assertThat(text.flagged()).isTrue();
      assertThat(text.sql()).containsIgnoringCase("octet_length");
      assertThat(
              JdbcDriver.POSTGRESQL
                  .checked(c, "select k from " + LONG_TABLE, JdbcDriver.LONGEST_INTEGER_TEXT - 1)
                  .flagged())
          .as("a limit under the longest bigint text keeps the check")
          .isTrue();
      // The driver takes the jsonb operator '?' for a parameter and cannot describe the query.
      assertThat(
              JdbcDriver.POSTGRESQL
                  .checked(
                      c, "select k from " + LONG_TABLE + " where '{\"a\":1}'::jsonb ? 'a'", max)
                  .flagged())
          .isTrue();
    }

    FilterBuilder.Request request =
        new FilterBuilder.Request(KeyType.LONG, 0.01, (long) MILLION, 0, 1L << 30);
    FilterBuilder.Result unchecked =
        new FilterBuilder().build(source(spec("select k from " + LONG_TABLE)), request);
    FilterBuilder.Result checked =
        new FilterBuilder().build(source(spec("select k::text from " + LONG_TABLE)), request);
    assertThat(unchecked.keys()).isEqualTo(checked.keys()).isEqualTo(MILLION);
    assertThat(unchecked.nulls()).isEqualTo(checked.nulls()).isEqualTo(LONG_NULLS);
    assertThat(unchecked.bits()).isEqualTo(checked.bits());
    CollectedKeys fallback = new CollectedKeys();
    source(spec("select k from " + LONG_TABLE + " where k <= 3 and '{\"a\":1}'::jsonb ? 'a'"))
        .readKeys(new LineParser(KeyType.LONG, fallback, 0));
    assertThat(fallback.keys).containsExactlyInAnyOrder(1L, 2L, 3L);
  }

  @Test
  void binaryColumnIsRejected() {
    assertThatThrownBy(
            () ->
                source(spec("select 'x'::bytea as blob"))
                    .readKeys(new LineParser(KeyType.STRING, new CollectedKeys(), 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("binary")
        .as("the server's label and type name are not repeated")
        .hasMessageNotContaining("blob")
        .hasMessageNotContaining("bytea")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_QUERY_FAILED);
  }

  @Test
  void wrongPasswordIsSourceAuthFailed() {
    JdbcSource source =
        new JdbcSource(
            spec("select 1"),
            JdbcTestSettings.LOOPBACK,
            () -> new JdbcCredentials(PostgresServer.USER, "wrong-password"));
    assertThatThrownBy(() -> source.readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
        .isInstanceOf(SourceException.class)
        .hasMessage("authentication to 127.0.0.1:" + pg.port() + " failed (SQLState 28P01)")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_AUTH_FAILED);
  }

  @Test
  void unreachableServerIsUnreadableNamingTheHostForEveryDriver() {
    for (String url :
        List.of(
            "jdbc:postgresql://127.0.0.1:1/db",
            "jdbc:mysql://127.0.0.1:1/db",
            "jdbc:mariadb://127.0.0.1:1/db")) {
      JdbcSourceSpec spec = spec("select 1");
      spec.setUrl(url);
      assertThatThrownBy(
              () -> source(spec).readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
          .as(url)
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("cannot connect to 127.0.0.1:1")
          .extracting(e -> ((SourceException) e).reason())
          .isEqualTo(Reasons.SOURCE_UNREADABLE);
    }
  }

  @Test
  void missingTableIsSourceQueryFailedWithTheSqlStateNotTheDatabaseMessage() {
    assertThatThrownBy(
            () ->
                source(spec("select id from no_such_table"))
                    .readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageNotContaining("no_such_table")
        .hasMessageNotContaining("does not exist")
        .hasMessageContaining("SQLState 42P01")
        .hasNoCause()
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_QUERY_FAILED);
  }

  @Test
  void slowQueryIsSourceTimeout() {
    JdbcSourceSpec spec = spec("select 1 from pg_sleep(10)");
    spec.setQueryTimeout("1s");
    long started = System.nanoTime();
    assertThatThrownBy(
            () -> source(spec).readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("within 1s")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(6));
  }

  /**
   * Every fetch is fast (10 rows, 0.2 s) but the whole read would take 20 s: the timeout bounds the
   * read, not only the first execution.
   */
  @Test
  void timeoutBoundsTheWholeReadNotJustTheFirstFetch() {
    JdbcSourceSpec spec =
        spec(
            "select g::bigint from generate_series(1, 1000) g "
                + "where pg_sleep(0.02) is not null");
    spec.setFetchSize(10);
    spec.setQueryTimeout("1500ms");
    CollectedKeys collected = new CollectedKeys();
    long started = System.nanoTime();
    assertThatThrownBy(() -> source(spec).readKeys(new LineParser(KeyType.LONG, collected, 0)))
        .isInstanceOf(SourceException.class)
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(collected.keys).as("rows streamed before the timeout").isNotEmpty();
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(6));
  }

  @Test
  void describesTheUrlWithoutCredentialsAndHasNoChangeToken() {
    JdbcSourceSpec spec = spec("select 1");
    spec.setUrl("jdbc:postgresql://db.example/shop?ssl=true");
    JdbcSource source = source(spec);
    assertThat(source.description())
        .isEqualTo("jdbc jdbc:postgresql://db.example:5432/shop?ssl=true");
    assertThat(source.target().host()).isEqualTo("db.example");
    assertThat(source.target().port()).isEqualTo(5432);
    assertThat(source.changeToken()).isNull();

    spec.setUrl("jdbc:postgresql://db.example/shop?user=app&password=hunter2");
    assertThatThrownBy(() -> source(spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("parameter user is not allowed")
        .hasMessageNotContaining("hunter2");
  }

  /**
   * The URL cannot turn the read-only transaction off (readOnlyMode=ignore is refused) and a
   * data-modifying query fails in it: the rows stay.
   */
  @Test
  void queriesRunInAReadOnlyTransaction() throws Exception {
    pg.execute("create table keep_me (k text)", "insert into keep_me values ('a'), ('b')");
    JdbcSourceSpec writing = spec("with d as (delete from keep_me returning k) select k from d");
    // The operator sends the query inside its value-length check, where PostgreSQL refuses a
    // data-modifying WITH outright (0A000); the read-only transaction (25006) stays the net, as
    // nextval below shows.
    assertThatThrownBy(
            () -> source(writing).readKeys(new LineParser(KeyType.STRING, new CollectedKeys(), 0)))
        .isInstanceOf(SourceException.class)
        .hasMessageMatching(".*SQLState (25006|0A000).*")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_QUERY_FAILED);
    JdbcSourceSpec sequence = spec("select nextval('keep_me_seq')");
    pg.execute("create sequence keep_me_seq");
    assertThatThrownBy(
            () -> source(sequence).readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
        .hasMessageContaining("SQLState 25006");

    JdbcSourceSpec ignoring = spec("select k from keep_me");
    ignoring.setUrl(pg.url() + "?readOnlyMode=ignore");
    assertThatThrownBy(() -> source(ignoring))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("parameter readOnlyMode is not allowed");

    CollectedKeys kept = new CollectedKeys();
    source(spec("select k from keep_me order by k"))
        .readKeys(new LineParser(KeyType.STRING, kept, 0));
    assertThat(kept.keys).containsExactly("a", "b");
  }

  /**
   * A source made to read in an exported snapshot sees exactly what that snapshot saw, on every
   * read (a build without expectedInsertions reads twice), while the plain source sees the rows
   * committed since; what cannot be imported fails without the server's text.
   */
  @Test
  void readsInAnExportedSnapshotAndOnlyInOne() throws Exception {
    pg.execute(
        "create table snapshotted (k text)",
        "insert into snapshotted values ('old')",
        "create table snapshotted_ids (k bigint)",
        "insert into snapshotted_ids values (1)");
    JdbcSource plain = source(spec("select k from snapshotted"));
    // An integer column is described before the query (JdbcDriver.checked): that must not open
    // the transaction the snapshot is imported into.
    JdbcSource ids = source(spec("select k from snapshotted_ids"));
    try (Connection exporter = pg.connect();
        java.sql.Statement s = exporter.createStatement()) {
      exporter.setAutoCommit(false);
      s.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      java.sql.ResultSet r = s.executeQuery("SELECT pg_export_snapshot()");
      r.next();
      ExportedSnapshot snapshot = new ExportedSnapshot(r.getString(1));
      pg.execute(
          "insert into snapshotted values ('new')", "insert into snapshotted_ids values (2)");
      CollectedKeys longs = new CollectedKeys();
      ids.inSnapshot(snapshot).readKeys(new LineParser(KeyType.LONG, longs, 0));
      assertThat(longs.keys).containsExactly(1L);
      JdbcSource inSnapshot = plain.inSnapshot(snapshot);
      for (int read = 0; read < 2; read++) {
        CollectedKeys seen = new CollectedKeys();
        inSnapshot.readKeys(new LineParser(KeyType.STRING, seen, 0));
        assertThat(seen.keys).containsExactly("old");
      }
      CollectedKeys now = new CollectedKeys();
      plain.readKeys(new LineParser(KeyType.STRING, now, 0));
      assertThat(now.keys).containsExactlyInAnyOrder("old", "new");
      exporter.rollback(); // the snapshot is gone with its transaction
      assertThatThrownBy(
              () -> inSnapshot.readKeys(new LineParser(KeyType.STRING, new CollectedKeys(), 0)))
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("snapshot of the change stream's replication slot")
          .hasMessageNotContaining(snapshot.name())
          .extracting(e -> ((SourceException) e).reason())
          .isEqualTo(Reasons.SOURCE_UNREADABLE);
    }
    // Names only of the server's form; and only PostgreSQL has exported snapshots.
    for (String name : List.of("", "x", "00000003-00000002-1'; DROP TABLE snapshotted; --")) {
      assertThatThrownBy(() -> new ExportedSnapshot(name))
          .isInstanceOf(IllegalArgumentException.class);
    }
    JdbcSourceSpec mysql = spec("select 1");
    mysql.setUrl("jdbc:mysql://127.0.0.1:1/db");
    assertThatThrownBy(() -> source(mysql).inSnapshot(new ExportedSnapshot("00000003-00000002-1")))
        .isInstanceOf(IllegalStateException.class);
  }
}
