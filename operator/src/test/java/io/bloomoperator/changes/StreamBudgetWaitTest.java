package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.sql.Connection;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stream whose publishes use up the filter's etcd write budget waits for it, on a real API server
 * with a real PostgreSQL stream: the filter stays Ready on its published version, the stream's
 * status says why it is not fresh, one Warning event says it once, and no version is written past
 * the budget. Before, every refused stream publish turned the filter {@code
 * Ready=False/WriteBudgetExceeded}.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(180)
class StreamBudgetWaitTest {

  // The first publish (a ~36 KB payload, its manifest and the status writes) fits, and a handful
  // of stream deltas after it; then the hour's budget is spent.
  private static final long FILTER_BYTES_PER_HOUR = 110 * 1024;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of(
                  "BLOOM_HTTP_ALLOW",
                  "127.0.0.0/8,::1",
                  "BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR",
                  Long.toString(FILTER_BYTES_PER_HOUR))));

  @Test
  void aStreamOverItsWriteBudgetWaitsAndTheFilterStaysReady(
      KubernetesClient client, TestNamespace ns) throws Exception {
    PostgresServer pg = LogicalPostgres.shared();
    String table = PostgresLogicalOperatorTest.readyProducts(client, ns, "bw");

    try (Connection writer = pg.connect();
        var insert = writer.prepareStatement("INSERT INTO " + table + " VALUES (?, 'x')")) {
      // A row a second until the budget refuses a publish.
      BloomFilter waiting = null;
      for (int i = 0; i < 60 && waiting == null; i++) {
        insert.setString(1, "sku-streamed-" + i);
        insert.executeUpdate();
        Thread.sleep(1000);
        BloomFilter now =
            client.resources(BloomFilter.class).inNamespace(ns.name()).withName("products").get();
        assertThat(ready(now, "True", null))
            .as("Ready while the stream publishes: %s", now.getStatus().getConditions())
            .isTrue();
        String message =
            now.getStatus().getStream() == null ? null : now.getStatus().getStream().getMessage();
        if (message != null && message.startsWith("stream publishes wait for the write budget")) {
          waiting = now;
        }
      }
      assertThat(waiting).as("the budget refused a stream publish within 60 rows").isNotNull();
      System.out.println("stream message: " + waiting.getStatus().getStream().getMessage());
      assertThat(waiting.getStatus().getStream().getMessage())
          .contains("BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR")
          .contains("the next publish is possible at");
      long version = manifest(client, ns.name(), "products").version();

      // Rows keep coming; the stream waits: no version is written, the filter stays Ready, and
      // the waiting is said in one event, not one per refusal.
      for (int i = 0; i < 8; i++) {
        insert.setString(1, "sku-waiting-" + i);
        insert.executeUpdate();
        Thread.sleep(1000);
        BloomFilter now =
            client.resources(BloomFilter.class).inNamespace(ns.name()).withName("products").get();
        assertThat(ready(now, "True", null)).as("Ready while waiting").isTrue();
      }
      assertThat(manifest(client, ns.name(), "products").version()).isEqualTo(version);
      List<Event> said =
          client.v1().events().inNamespace(ns.name()).list().getItems().stream()
              .filter(e -> "ChangeStreamWaitsForBudget".equals(e.getReason()))
              .toList();
      assertThat(said).hasSize(1);
      assertThat(said.get(0).getCount() == null ? 1 : said.get(0).getCount()).isEqualTo(1);
      assertThat(said.get(0).getMessage()).doesNotContain("sku-");
    }
  }
}
