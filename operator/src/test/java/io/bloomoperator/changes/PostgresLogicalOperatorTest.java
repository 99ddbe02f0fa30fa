package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.common.hash.Funnels;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.JdbcTestSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.ServedLatencies;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * spec.changes.postgresLogical end to end: a real API server, the operator in-process, a real
 * PostgreSQL 15 with {@code wal_level = logical} and a real reader (sidecar-lib). Rows inserted
 * after the first build are served within seconds without a full build; the slot the operator
 * created is shown with its retained log and dropped when the filter is deleted.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(180)
class PostgresLogicalOperatorTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(JdbcTestSettings.operator());

  private static final AtomicInteger NAMES = new AtomicInteger();
  private static PostgresServer pg;

  @BeforeAll
  static void start() {
    pg = LogicalPostgres.shared();
  }

  /** A table of {@code rows} keys, its key-only publication, readable by the replication role. */
  private static String table(int rows) {
    String table = "op" + NAMES.incrementAndGet() + "_products";
    pg.execute(
        "CREATE TABLE " + table + " (id text PRIMARY KEY, note text)",
        "INSERT INTO " + table + " SELECT 'sku-' || g, 'x' FROM generate_series(1, " + rows + ") g",
        "GRANT SELECT ON " + table + " TO " + LogicalPostgres.ROLE);
    pg.executeAsSuperuser("CREATE PUBLICATION pub_" + table + " FOR TABLE " + table + " (id)");
    return table;
  }

  /**
   * A filter {@code products} in {@code ns} streaming a new {@link LogicalPostgres#publishedTable}
   * (slot {@code slot_<table>}), once it is Ready.
   *
   * @return the table's name
   */
  static String readyProducts(KubernetesClient client, TestNamespace ns, String prefix)
      throws Exception {
    String table = LogicalPostgres.publishedTable(prefix);
    LogicalPostgres.replicationSecret(client, ns.name(), "pg-repl");
    apply(
        client,
        ns.name(),
        filter("products", table, LogicalPostgres.shared().url(), "pub_" + table, "slot_" + table));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    return table;
  }

  static String filter(String name, String table, String url, String publication, String slot) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.001
          expectedInsertions: 20000
          source:
            jdbc:
              url: %s
              query: select id from %s
              credentialsSecret: pg-repl
          changes:
            publishEvery: 1s
            postgresLogical:
              publication: '%s'
              slot: '%s'
              keyColumn: id
        """
        .formatted(name, url, table, publication, slot);
  }

  @Test
  void insertedRowsAreServedWithinSecondsWithoutAFullBuildAndTheSlotGoesWithTheFilter(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String table = table(3);
    String slot = "slot_" + table;
    LogicalPostgres.replicationSecret(client, ns.name(), "pg-repl");
    apply(client, ns.name(), filter("products", table, pg.url(), "pub_" + table, slot));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    assertThat(LogicalPostgres.slotExists(slot)).isTrue();
    String builtAt = builtAt(client, ns.name());

    int rows = 300;
    List<Long> sorted;
    try (LiveBloomFilter<String> reader =
            BloomFilterWatcher.watch(client, ns.name(), "products", LiveKeyType.STRING);
        ServedLatencies served = new ServedLatencies(key -> reader.mightContain(key));
        Connection writer = pg.connect();
        var insert = writer.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
      await().atMost(Duration.ofSeconds(30)).until(() -> reader.mightContain("sku-1"));
      // One row per transaction, 20 a second.
      for (int i = 0; i < rows; i++) {
        String key = "sku-fresh-" + i;
        insert.setString(1, key);
        insert.executeUpdate();
        served.produced(key);
        Thread.sleep(50);
      }
      await().atMost(Duration.ofSeconds(60)).until(() -> served.pending() == 0);
      sorted = served.sorted();
      System.out.printf(
          Locale.ROOT,
          "postgresLogical: %d rows inserted (committed) -> served by the reader: %s%n",
          sorted.size(),
          served.summary());
    }
    assertThat(sorted).hasSize(rows);
    // No full build: the build record keeps the first build's time; only the position moved.
    assertThat(builtAt(client, ns.name())).isEqualTo(builtAt);
    BloomFilter resource = products(client, ns).get();
    assertThat(resource.getStatus().getStream().getSlot()).endsWith("/" + slot);
    assertThat(resource.getStatus().getStream().getMessage()).isNull();
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> products(client, ns).get().getStatus().getStream().getRetainedWalBytes() != null);

    products(client, ns).delete();
    await().atMost(Duration.ofSeconds(60)).until(() -> products(client, ns).get() == null);
    assertThat(LogicalPostgres.slotExists(slot))
        .as("the slot is dropped with the filter")
        .isFalse();
  }

  /**
   * A commit whose record is in the log before a full build's stream position but which becomes
   * visible only after the build's scan took its snapshot (here: a commit waiting for a synchronous
   * standby that does not exist, released with {@code pg_cancel_backend}, which leaves it
   * committed) must be in the scan or in the stream. Before the scan ran in the snapshot a slot
   * exported, it was in neither, and the key stayed "definitely absent" until the next full build.
   */
  @Test
  void aCommitVisibleOnlyAfterTheBuildsPositionIsStillServed(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String table = table(3);
    String slot = "slot_" + table;
    LogicalPostgres.replicationSecret(client, ns.name(), "pg-repl");
    apply(client, ns.name(), filter("products", table, pg.url(), "pub_" + table, slot));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    String hidden = "sku-committed-invisible";
    assertThat(publishedContains(client, ns.name(), hidden))
        .as("not a false positive of the first version")
        .isFalse();

    ExecutorService writer = Executors.newSingleThreadExecutor();
    Connection waiting = pg.connect();
    int pid = backendPid(waiting);
    try {
      pg.executeAsSuperuser(
          "ALTER SYSTEM SET synchronous_standby_names = 'bloom_absent_standby'",
          "SELECT pg_reload_conf()");
      // pg_reload_conf() returns before the waiting backend has the new setting (a backend reads
      // it between two commands): an INSERT sent too early commits at once and never waits.
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () -> "bloom_absent_standby".equals(setting(waiting, "synchronous_standby_names")));
      // Committed locally (its commit record is written and flushed), invisible to every other
      // session until the wait for the standby ends.
      Future<?> commit =
          writer.submit(
              () -> {
                try (Statement s = waiting.createStatement()) {
                  s.execute("SET synchronous_commit = on");
                  s.execute("INSERT INTO " + table + " VALUES ('" + hidden + "', 'x')");
                }
                return null;
              });
      await().atMost(Duration.ofSeconds(20)).until(() -> "SyncRep".equals(waitEvent(pid)));
      // A visible change too, so the full build publishes a new version (and position).
      pg.execute("INSERT INTO " + table + " VALUES ('sku-visible', 'x')");
      SnapshotFixtures.mergePatch(
          client,
          ns.name(),
          "products",
          Map.of("metadata", Map.of("annotations", Map.of(RebuildRequest.ANNOTATION, "r1"))));
      // The full build either finished while the commit was invisible, or is waiting for it
      // (a slot's consistent point waits for the transactions running when it is created).
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> "r1".equals(rebuildRequest(client, ns.name())) || walsenderWaits());
      pg.executeAsSuperuser("SELECT pg_cancel_backend(" + pid + ")");
      commit.get(20, TimeUnit.SECONDS);
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> "r1".equals(rebuildRequest(client, ns.name())));
      assertThat(count(table, hidden)).as("the transaction stayed committed").isEqualTo(1);
      await()
          .atMost(Duration.ofSeconds(40))
          .untilAsserted(
              () ->
                  assertThat(publishedContains(client, ns.name(), hidden))
                      .as("the key committed before the build's position is served")
                      .isTrue());
    } finally {
      pg.executeAsSuperuser(
          "ALTER SYSTEM RESET synchronous_standby_names",
          "SELECT pg_reload_conf()",
          "SELECT pg_terminate_backend(" + pid + ")");
      writer.shutdownNow();
      waiting.close();
    }
  }

  /**
   * A database that stops answering (every server process stopped) shows in the filter's status as
   * a failing stream, in the operator's words (no server text), once a read needs the database: at
   * the latest the retained-log measurement, every 30 s, connects anew. Each such read gives its
   * thread back within the stream read bound (PostgresLogicalStreamTest measures it).
   */
  @Test
  void aSilentDatabaseShowsAsAFailingStream(KubernetesClient client, TestNamespace ns)
      throws Exception {
    String table = table(3);
    LogicalPostgres.replicationSecret(client, ns.name(), "pg-repl");
    apply(client, ns.name(), filter("products", table, pg.url(), "pub_" + table, "slot_" + table));
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    String message;
    pg.pause();
    try {
      message =
          await()
              .atMost(Duration.ofSeconds(90))
              .until(
                  () -> {
                    BloomFilter f = products(client, ns).get();
                    return f.getStatus().getStream() == null
                        ? null
                        : f.getStatus().getStream().getMessage();
                  },
                  m -> m != null && m.contains("did not answer within"));
    } finally {
      pg.resume();
    }
    assertThat(message)
        .contains("did not answer within 3000 ms")
        .doesNotContain("FATAL", "ERROR", "PSQLException", "Connection");
    // The published version keeps serving.
    assertThat(products(client, ns).get().getStatus().getConditions())
        .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True"));
  }

  private static int backendPid(Connection c) throws java.sql.SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
      r.next();
      return r.getInt(1);
    }
  }

  /** The value of the setting {@code name} in the session of {@code c}. */
  private static String setting(Connection c, String name) throws java.sql.SQLException {
    try (PreparedStatement s = c.prepareStatement("SELECT current_setting(?)")) {
      s.setString(1, name);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getString(1);
      }
    }
  }

  /** What the backend {@code pid} waits for now, or null. */
  private static String waitEvent(int pid) throws java.sql.SQLException {
    try (Connection c = pg.connect();
        PreparedStatement s =
            c.prepareStatement("SELECT wait_event FROM pg_stat_activity WHERE pid = ?")) {
      s.setInt(1, pid);
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? r.getString(1) : null;
      }
    }
  }

  /** Whether a walsender waits for a transaction to end (a slot being created). */
  private static boolean walsenderWaits() throws java.sql.SQLException {
    // As the walsenders' role: pg_stat_activity hides other roles' wait events.
    try (Connection c = pg.connect(LogicalPostgres.ROLE, LogicalPostgres.PASSWORD);
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walsender'"
                    + " AND wait_event = 'transactionid'")) {
      r.next();
      return r.getInt(1) > 0;
    }
  }

  private static long count(String table, String key) throws java.sql.SQLException {
    try (Connection c = pg.connect();
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM " + table + " WHERE id = ?")) {
      s.setString(1, key);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getLong(1);
      }
    }
  }

  private static String rebuildRequest(KubernetesClient client, String ns) {
    BloomFilter f = client.resources(BloomFilter.class).inNamespace(ns).withName("products").get();
    return f == null || f.getStatus() == null ? null : f.getStatus().getRebuildRequest();
  }

  /** Whether the version published now answers {@code key} "maybe present". */
  private static boolean publishedContains(KubernetesClient client, String ns, String key)
      throws Exception {
    Manifest manifest = SnapshotFixtures.manifest(client, ns, "products");
    return com.google.common.hash.BloomFilter.readFrom(
            new ByteArrayInputStream(SnapshotFixtures.payload(client, ns, manifest)),
            Funnels.stringFunnel(StandardCharsets.UTF_8))
        .mightContain(key);
  }

  @Test
  void namesThatTryInjectionAreRefusedByTheSchema(KubernetesClient client, TestNamespace ns) {
    String table = table(1);
    String pub = "pub_" + table;
    String url = pg.url();
    String injected = "pub_" + table + "\"; DROP TABLE " + table + "; --";
    refused(client, ns, filter("hostile", table, url, injected, "slot_ok"), "should match");
    String slotInjected = "s''); DROP TABLE " + table + "; --";
    refused(client, ns, filter("hostile", table, url, pub, slotInjected), "should match");
    refused(client, ns, filter("hostile", table, url, pub, "Upper_Case_Slot"), "should match");
    // postgresLogical on a source that is not a PostgreSQL one, and beside kafka.
    String mysql = "jdbc:mysql://127.0.0.1:3306/x";
    refused(client, ns, filter("hostile", table, mysql, "p", "s"), "jdbc:postgresql:");
    String both =
        filter("hostile", table, url, "p", "s")
            .replace(
                "    postgresLogical:",
                "    kafka: {bootstrapServers: [\"127.0.0.1:9\"], topic: t}\n"
                    + "    postgresLogical:");
    refused(client, ns, both, "exactly one of kafka and postgresLogical");
    // Nothing reached the database: the table is still there.
    pg.execute("SELECT count(*) FROM " + table);
  }

  private static io.fabric8.kubernetes.client.dsl.Resource<BloomFilter> products(
      KubernetesClient client, TestNamespace ns) {
    return client.resources(BloomFilter.class).inNamespace(ns.name()).withName("products");
  }

  private static void refused(
      KubernetesClient client, TestNamespace ns, String yaml, String message) {
    assertThatThrownBy(() -> apply(client, ns.name(), yaml))
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining(message);
  }

  private static String builtAt(KubernetesClient client, String ns) {
    return client
        .configMaps()
        .inNamespace(ns)
        .withName(SnapshotNames.manifestName("products"))
        .get()
        .getMetadata()
        .getAnnotations()
        .get(SnapshotConfigMaps.ANNOTATION_BUILT_AT);
  }
}
