package io.bloomoperator.source;

import static io.bloomoperator.source.JdbcPartitionsTest.partitions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcPartitionsSpec;
import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.MariaDbServer;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Partitioned reads against a real MariaDB through both drivers: on the table's single-column
 * primary key, when it is also the key column, the filter is the single-connection build's byte for
 * byte; any other column is refused before a partition is read, with a message that repeats no
 * name.
 */
class JdbcMySqlPartitionedSourceTest {

  static final int ROWS = 50_000;

  private static MariaDbServer db;

  @BeforeAll
  static void load() {
    db = MariaDbServer.shared();
    db.execute(
        "drop view if exists part_view",
        "drop table if exists part_pk",
        "drop table if exists part_two",
        "create table part_pk (id bigint primary key, n bigint not null, sku varchar(32))",
        "insert into part_pk select seq, seq, if(seq % 5000 = 0, null, concat('sku-', seq))"
            + " from seq_1_to_"
            + ROWS,
        "create table part_two (a bigint, b bigint, primary key (a, b))",
        "insert into part_two select seq, seq from seq_1_to_100",
        "create view part_view as select id, sku from part_pk");
  }

  static JdbcSource source(String scheme, String query, JdbcPartitionsSpec partitions) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(db.url(scheme));
    spec.setQuery(query);
    spec.setFetchSize(1000);
    spec.setPartitions(partitions);
    return new JdbcSource(
        spec,
        JdbcTestSettings.LOOPBACK,
        () -> new JdbcCredentials(MariaDbServer.USER, MariaDbServer.PASSWORD),
        "mysql-partitions");
  }

  @Test
  void onThePrimaryKeyTheFilterIsTheSingleConnectionBuildsByteForByte() throws Exception {
    for (String scheme : JdbcMySqlSourceTest.SCHEMES) {
      // The keys are the primary key itself (the first column): a row cannot change partition
      // without being another key.
      String query = "select id, sku from part_pk";
      for (FilterFormat format : List.of(FilterFormat.GUAVA, FilterFormat.SPLIT_BLOCK)) {
        String single =
            JdbcPartitionedSourceTest.sha256(source(scheme, query, null), KeyType.LONG, format);
        for (JdbcPartitionsSpec plan :
            List.of(partitions("id", 3, 0, ROWS), partitions("ID", 5, 10_000, 10_010))) {
          assertThat(
                  JdbcPartitionedSourceTest.sha256(
                      source(scheme, query, plan), KeyType.LONG, format))
              .as("%s %s %d partitions", scheme, format, plan.getCount())
              .isEqualTo(single);
        }
      }
      // An alias of the key is the key.
      assertThat(
              JdbcPartitionedSourceTest.sha256(
                  source(
                      scheme,
                      "select t.id as pk, sku from part_pk t",
                      partitions("pk", 4, 0, ROWS)),
                  KeyType.LONG,
                  FilterFormat.SPLIT_BLOCK))
          .isEqualTo(
              JdbcPartitionedSourceTest.sha256(
                  source(scheme, "select id from part_pk", null),
                  KeyType.LONG,
                  FilterFormat.SPLIT_BLOCK));
    }
  }

  @Test
  void aColumnNotShownToBeTheSingleColumnPrimaryKeyIsRefused() {
    record Case(String query, String column, String why) {}
    List<Case> cases =
        List.of(
            // Keys read from another column than the partition column: a row keeping its key
            // could get a new id (REPLACE) in a partition already read, and be read by none.
            new Case("select sku, id from part_pk", "id", "is not the query's first column"),
            new Case("select n, sku from part_pk", "n", "is not the single-column primary key"),
            new Case("select id, sku from part_view", "id", "is not the single-column primary key"),
            new Case(
                "select id + 0 as pid, sku from part_pk", "pid", "not a column read from a table"),
            new Case("select a, b from part_two", "a", "is not the single-column primary key"),
            new Case(
                "select q.id, p.sku from part_pk p left join part_pk q on q.id = p.id + " + ROWS,
                "id",
                "may be NULL"),
            new Case(
                "select id, sku from part_pk", "nope", "is not a column of the query's result"),
            new Case("select id, sku, id from part_pk", "id", "more than one column"));
    for (String scheme : JdbcMySqlSourceTest.SCHEMES) {
      for (Case c : cases) {
        assertThatThrownBy(
                () ->
                    source(scheme, c.query(), partitions(c.column(), 3, 0, ROWS))
                        .readKeys(new LineParser(KeyType.STRING, new DiscardedKeys(), 0)))
            .as("%s %s", scheme, c.query())
            .isInstanceOf(SourceException.class)
            .hasMessageContaining(c.why())
            .hasMessageNotContaining("part_")
            .extracting(e -> ((SourceException) e).reason())
            .isEqualTo(Reasons.SOURCE_QUERY_FAILED);
      }
    }
  }

  /**
   * A connection whose driver reports aliases instead of original names
   * (useOldAliasMetadataBehavior, which the URL allowlist refuses, set here directly) cannot pass a
   * non-key column off as the key by aliasing it: {@code n AS id} would otherwise look like
   * part_pk's primary key {@code id} (MySQL Connector/J then reports the alias; MariaDB Connector/J
   * 3 still reports {@code n}).
   */
  @Test
  void aDriverReportingAliasesCannotPassAnotherColumnOffAsTheKey() throws Exception {
    for (String scheme : JdbcMySqlSourceTest.SCHEMES) {
      assertThatThrownBy(() -> JdbcUrl.parse(db.url(scheme) + "?useOldAliasMetadataBehavior=true"))
          .isInstanceOf(IllegalArgumentException.class);
      java.util.Properties login = new java.util.Properties();
      login.setProperty("user", MariaDbServer.USER);
      login.setProperty("password", MariaDbServer.PASSWORD);
      login.setProperty("useOldAliasMetadataBehavior", "true");
      java.sql.Driver driver =
          scheme.equals("jdbc:mysql:")
              ? new com.mysql.cj.jdbc.Driver()
              : new org.mariadb.jdbc.Driver();
      JdbcErrors errors =
          new JdbcErrors(
              JdbcUrl.parse(db.url(scheme)),
              JdbcTestSettings.LOOPBACK,
              1000,
              java.time.Duration.ofSeconds(30),
              null);
      try (java.sql.Connection aliasing = driver.connect(db.url(scheme), login)) {
        for (String query :
            List.of("select n as id, sku from part_pk", "select n as id, sku from part_pk as t")) {
          assertThatThrownBy(() -> MySqlPartitionKey.check(aliasing, query, "id", errors))
              .as("%s %s", scheme, query)
              .isInstanceOf(SourceException.class)
              .hasMessageContaining("spec.source.jdbc.partitions.column")
              .hasMessageNotContaining("part_");
        }
        if (scheme.equals("jdbc:mysql:")) {
          // The case only the probe refuses: the alias names the table's key.
          assertThatThrownBy(
                  () ->
                      MySqlPartitionKey.check(
                          aliasing, "select n as id, sku from part_pk", "id", errors))
              .hasMessageContaining("reports aliases");
        }
      }
    }
  }
}
