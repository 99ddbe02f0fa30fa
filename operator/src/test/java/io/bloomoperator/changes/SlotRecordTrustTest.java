package io.bloomoperator.changes;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.source.JdbcTestSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The record of which replication slot the operator created ({@code status.stream.slot}) cannot be
 * forged through the status: on a real API server and a real PostgreSQL with {@code wal_level =
 * logical}, whoever may patch the BloomFilter status writes another application's slot (one that
 * exists in the database) into it and names that slot in the spec. Before, the operator took the
 * record for its own: it read that slot (moving its consumer's confirmed position) and dropped it
 * when the filter was deleted.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(180)
class SlotRecordTrustTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(JdbcTestSettings.operator());

  /** The victim slot as pg_replication_slots shows it: in use now, and its confirmed position. */
  private record SlotState(boolean active, String confirmed) {}

  private static SlotState state(PostgresServer pg, String slot) throws Exception {
    try (Connection c = pg.connect();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT active, confirmed_flush_lsn::text FROM pg_replication_slots"
                    + " WHERE slot_name = ?")) {
      s.setString(1, slot);
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? new SlotState(r.getBoolean(1), r.getString(2)) : null;
      }
    }
  }

  @Test
  void aSlotRecordWrittenIntoTheStatusBySomeoneElseIsNeitherReadNorDropped(
      KubernetesClient client, TestNamespace ns) throws Exception {
    PostgresServer pg = LogicalPostgres.shared();
    String table = LogicalPostgres.publishedTable("tr");
    LogicalPostgres.replicationSecret(client, ns.name(), "pg-repl");
    String own = "slot_" + table;
    String yaml =
        PostgresLogicalOperatorTest.filter("products", table, pg.url(), "pub_" + table, own);
    apply(client, ns.name(), yaml);
    awaitStatus(client, ns.name(), "products", f -> ready(f, "True", "Published"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> products(client, ns).get().getStatus().getStream().getSlot() != null);
    String ownRecord = products(client, ns).get().getStatus().getStream().getSlot();
    assertThat(ownRecord).endsWith("/" + own);

    // Another application's slot in the same database, with changes after it for it to consume.
    String victim = "victim_" + table;
    pg.executeAsSuperuser(
        "SELECT pg_create_logical_replication_slot('" + victim + "', 'pgoutput')");
    pg.execute("INSERT INTO " + table + " VALUES ('sku-after-victim', 'x')");
    SlotState before = state(pg, victim);
    AtomicBoolean victimActive = new AtomicBoolean();
    AtomicReference<String> victimConfirmed = new AtomicReference<>(before.confirmed());
    AtomicBoolean watching = new AtomicBoolean(true);
    Thread watch =
        new Thread(
            () -> {
              while (watching.get()) {
                try {
                  SlotState now = state(pg, victim);
                  if (now != null) {
                    victimActive.compareAndSet(false, now.active());
                    victimConfirmed.set(now.confirmed());
                  }
                  Thread.sleep(50);
                } catch (Exception e) {
                  return;
                }
              }
            });
    watch.setDaemon(true);
    watch.start();

    // The attack: the status subresource names the victim as the operator's slot (same server and
    // database, so the identity matches), and the spec names it. The operator restarts meanwhile
    // (an upgrade), so its stream is opened from what it reads back.
    OPERATOR.stop();
    String forged = ownRecord.substring(0, ownRecord.lastIndexOf('/') + 1) + victim;
    products(client, ns)
        .editStatus(
            f -> {
              f.getStatus().getStream().setSlot(forged);
              return f;
            });
    products(client, ns)
        .edit(
            f -> {
              f.getSpec().getChanges().getPostgresLogical().setSlot(victim);
              return f;
            });
    OPERATOR.start();

    // A while of reconciles (publishEvery 1s, at least 10 s), watching for the refusal, which a
    // restarted operator on a busy machine may take longer to report (at most 45 s); then the
    // deletion (the finalizer drops the filter's slot).
    AtomicReference<Condition> condition = new AtomicReference<>();
    long started = System.nanoTime();
    long atLeast = started + Duration.ofSeconds(10).toNanos();
    long atMost = started + Duration.ofSeconds(45).toNanos();
    while (System.nanoTime() < atLeast || (condition.get() == null && System.nanoTime() < atMost)) {
      BloomFilter now = products(client, ns).get();
      now.getStatus().getConditions().stream()
          .filter(c -> "SlotRecordTrusted".equals(c.getType()))
          .findFirst()
          .ifPresent(condition::set);
      Thread.sleep(200);
    }
    boolean warned =
        client.v1().events().inNamespace(ns.name()).list().getItems().stream()
            .anyMatch(
                e -> "SlotRecordNotOurs".equals(e.getReason()) && "Warning".equals(e.getType()));
    products(client, ns).delete();
    await().atMost(Duration.ofSeconds(60)).until(() -> products(client, ns).get() == null);
    watching.set(false);
    watch.join(5_000);

    SoftAssertions soft = new SoftAssertions();
    soft.assertThat(LogicalPostgres.slotExists(victim)).as("the victim slot survives").isTrue();
    soft.assertThat(victimActive.get()).as("the victim slot was never read").isFalse();
    soft.assertThat(victimConfirmed.get())
        .as("the victim's confirmed position did not move")
        .isEqualTo(before.confirmed());
    soft.assertThat(condition.get()).as("condition SlotRecordTrusted").isNotNull();
    if (condition.get() != null) {
      soft.assertThat(condition.get().getStatus()).isEqualTo("False");
      soft.assertThat(condition.get().getReason()).isEqualTo("SlotRecordNotOurs");
      soft.assertThat(condition.get().getMessage()).doesNotContain(victim);
    }
    soft.assertThat(warned).as("Warning event SlotRecordNotOurs").isTrue();
    // The operator's own slot, which the spec no longer names, goes as before.
    soft.assertThat(LogicalPostgres.slotExists(own))
        .as("the operator's own slot dropped")
        .isFalse();
    if (LogicalPostgres.slotExists(victim)) {
      pg.executeAsSuperuser("SELECT pg_drop_replication_slot('" + victim + "')");
    }
    soft.assertAll();
  }

  private static Resource<BloomFilter> products(KubernetesClient client, TestNamespace ns) {
    return client.resources(BloomFilter.class).inNamespace(ns.name()).withName("products");
  }
}
