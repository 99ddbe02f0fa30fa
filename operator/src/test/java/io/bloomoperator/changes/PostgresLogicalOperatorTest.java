package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
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
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
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
