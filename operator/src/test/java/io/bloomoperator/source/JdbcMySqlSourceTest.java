package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.operator.LogCapture;
import io.bloomoperator.testing.servers.MariaDbServer;
import java.util.BitSet;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The JDBC source against a real MariaDB through both MySQL-protocol drivers (no Kubernetes): MySQL
 * Connector/J for {@code jdbc:mysql:} URLs, MariaDB Connector/J for {@code jdbc:mariadb:}.
 */
class JdbcMySqlSourceTest {

  static final List<String> SCHEMES = List.of("jdbc:mysql:", "jdbc:mariadb:");
  static final int KEYS = 20_000;

  private static MariaDbServer db;

  @BeforeAll
  static void startMariaDb() {
    db = MariaDbServer.shared();
    loadKeys(db);
    db.execute("create table if not exists writes (k int)");
    db.script(
        """
        delimiter //
        create or replace function write_one() returns int modifies sql data
        begin insert into writes values (1); return 1; end //
        """);
    db.execute("grant execute on function write_one to '" + MariaDbServer.USER + "'@'127.0.0.1'");
  }

  /** {@code long_keys}/{@code text_keys}: 1..{@value #KEYS} and sku-1..sku-20000, one NULL. */
  static synchronized void loadKeys(MariaDbServer server) {
    server.execute(
        "create table if not exists long_keys (k bigint)",
        "create table if not exists text_keys (k varchar(32))",
        "delete from long_keys",
        "delete from text_keys",
        "insert into long_keys select seq from seq_1_to_" + KEYS,
        "insert into long_keys values (null)",
        "insert into text_keys select concat('sku-', seq) from seq_1_to_" + KEYS,
        "insert into text_keys values (null)");
  }

  static JdbcSource source(String scheme, String query) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(db.url(scheme));
    spec.setQuery(query);
    spec.setFetchSize(1000);
    return new JdbcSource(
        spec,
        JdbcTestSettings.LOOPBACK,
        () -> new JdbcCredentials(MariaDbServer.USER, MariaDbServer.PASSWORD));
  }

  @Test
  void streamsIntegerAndTextKeysWithBothDrivers() throws Exception {
    for (String scheme : SCHEMES) {
      CollectedKeys longs = new CollectedKeys();
      LineParser parser = new LineParser(KeyType.LONG, longs, 0);
      source(scheme, "select k from long_keys").readKeys(parser);
      assertThat(parser.nulls()).as(scheme).isEqualTo(1);
      BitSet seen = new BitSet();
      longs.keys.forEach(k -> seen.set((int) (long) (Long) k));
      assertThat(seen.cardinality()).as(scheme).isEqualTo(KEYS);
      assertThat(seen.nextSetBit(0)).isEqualTo(1);

      CollectedKeys texts = new CollectedKeys();
      source(scheme, "select k from text_keys where k is not null order by length(k), k;")
          .readKeys(new LineParser(KeyType.STRING, texts, 0));
      assertThat(texts.keys)
          .as(scheme)
          .hasSize(KEYS)
          .startsWith("sku-1", "sku-2")
          .endsWith("sku-" + KEYS);
    }
  }

  /**
   * A function that writes, called from a SELECT, fails in the read-only transaction with both
   * drivers; MariaDB Connector/J's setReadOnly alone sends nothing to the server.
   */
  @Test
  void queriesRunInAReadOnlyTransactionWithBothDrivers() {
    for (String scheme : SCHEMES) {
      assertThatThrownBy(
              () ->
                  source(scheme, "select write_one()")
                      .readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
          .as(scheme)
          .isInstanceOf(SourceException.class)
          .hasMessageContaining("SQLState 25006")
          .extracting(e -> ((SourceException) e).reason())
          .isEqualTo(Reasons.SOURCE_QUERY_FAILED);
    }
    assertThat(db.query("select count(*) from writes")).containsExactly("0");
  }

  /**
   * The server's error text (here naming a table) reaches neither the message nor any log line at
   * info or above: MariaDB Connector/J would log it at warn level.
   */
  @Test
  void databaseErrorsAreReportedByStateWithoutTheServersText() {
    String table = "no_such_table_" + UUID.randomUUID().toString().replace("-", "");
    LogCapture logs = LogCapture.attach();
    try {
      databaseErrors(table);
    } finally {
      logs.close();
    }
    assertThat(logs.events())
        .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
        .noneSatisfy(e -> assertThat(e.getFormattedMessage()).contains(table));
  }

  private static void databaseErrors(String table) {
    for (String scheme : SCHEMES) {
      assertThatThrownBy(
              () ->
                  source(scheme, "select k from " + table)
                      .readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
          .as(scheme)
          .isInstanceOf(SourceException.class)
          .hasMessage(
              "the query failed on 127.0.0.1:"
                  + db.port()
                  + " (SQLState 42S02); the "
                  + "database's message is logged at debug level");
      JdbcSourceSpec spec = new JdbcSourceSpec();
      spec.setUrl(db.url(scheme));
      spec.setQuery("select 1");
      JdbcSource wrongPassword =
          new JdbcSource(
              spec,
              JdbcTestSettings.LOOPBACK,
              () -> new JdbcCredentials(MariaDbServer.USER, "wrong-password"));
      assertThatThrownBy(
              () -> wrongPassword.readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)))
          .as(scheme)
          .hasMessage("authentication to 127.0.0.1:" + db.port() + " failed (SQLState 28000)")
          .extracting(e -> ((SourceException) e).reason())
          .isEqualTo(Reasons.SOURCE_AUTH_FAILED);
    }
  }
}
