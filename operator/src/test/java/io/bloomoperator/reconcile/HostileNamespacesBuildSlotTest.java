package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.source.JdbcTestSettings;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.PostgresServer;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 17 item 3: two hostile namespaces whose JDBC queries return one key and then sleep (each
 * build takes a build slot at its first key and would hold it for its {@code queryTimeout}, an
 * hour) must not keep a third namespace from publishing. With the default two slots, before the fix
 * both slots stayed with the hostile builds and the honest filter never built.
 *
 * <p>The bound the honest filter gets: a stalled build loses its slot after {@code
 * BLOOM_SOURCE_STALL_TIMEOUT} (5 s here) and the free slot goes to the namespace served longest
 * ago, so the honest filter publishes within its refresh interval plus that timeout.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(240)
class HostileNamespacesBuildSlotTest {

  private static final Duration STALL = Duration.ofSeconds(5);
  private static final Duration REFRESH = Duration.ofSeconds(20);
  private static final String SLEEP = "pg_sleep(100000)";
  private static final String SILENT = "pg_sleep(100001)";

  /**
   * Default slots (2) and slot shares; a short stall bound, and two builds per namespace at once
   * (of the default 50 reconcile threads) so that three filters show the thread bound.
   */
  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
                  Map.of("BLOOM_SOURCE_STALL_TIMEOUT", "5s", "BLOOM_MAX_BUILDS_PER_NAMESPACE", "2"))
              // The test database listens on loopback, which the operator refuses by default.
              .toBuilder()
              .jdbc(JdbcTestSettings.LOOPBACK)
              .build());

  @Test
  void twoStallingNamespacesDoNotKeepAThirdFromPublishing(KubernetesClient client, TestNamespace ns)
      throws Exception {
    PostgresServer pg = PostgresServer.shared();
    List<String> hostile = List.of(ns.name() + "-h1", ns.name() + "-h2");
    try {
      for (String namespace : hostile) {
        client
            .namespaces()
            .resource(
                new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
            .create();
        credentials(client, namespace, pg);
        for (String name : List.of("stall-1", "stall-2")) {
          apply(client, namespace, stallingFilter(name, pg));
        }
      }
      // Every hostile query has run: two builds hold the two slots (their sessions sleep), the two
      // others have their first key and wait for a slot (their sessions idle in the transaction).
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> queries(pg, SLEEP) >= 4);
      Thread.sleep(1000); // their first keys are in, the slots taken

      sourceConfigMap(client, ns.name(), "ids", "ids.txt", List.of("a", "b", "c"));
      apply(
          client,
          ns.name(),
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: honest}
          spec:
            falsePositiveRate: 0.01
            refreshInterval: %ds
            source: {configMap: {name: ids, key: ids.txt}}
          """
              .formatted(REFRESH.toSeconds()));
      long created = System.nanoTime();
      BloomFilter first = awaitVersion(client, ns.name(), 1, REFRESH);
      long firstMillis = millisSince(created);
      assertThat(first.getStatus().getKeys()).isEqualTo(3);

      sourceConfigMap(client, ns.name(), "ids", "ids.txt", List.of("a", "b", "c", "d"));
      long changed = System.nanoTime();
      // Noticed at the next refresh (at most REFRESH), then a slot within the stall bound.
      BloomFilter second = awaitVersion(client, ns.name(), 2, REFRESH.plus(STALL).plusSeconds(5));
      long secondMillis = millisSince(changed);
      assertThat(second.getStatus().getKeys()).isEqualTo(4);

      // The hostile builds stalled all along: stopped by the stall bound, said so, retried.
      for (String namespace : hostile) {
        for (String name : List.of("stall-1", "stall-2")) {
          BloomFilter f =
              client.resources(BloomFilter.class).inNamespace(namespace).withName(name).get();
          assertThat(f.getStatus() == null || !ready(f, "True", null))
              .as("%s/%s never published", namespace, name)
              .isTrue();
        }
      }
      assertThat(
              hostile.stream()
                  .flatMap(
                      namespace ->
                          client
                              .resources(BloomFilter.class)
                              .inNamespace(namespace)
                              .list()
                              .getItems()
                              .stream())
                  .filter(f -> ready(f, "False", Reasons.SOURCE_TIMEOUT))
                  .map(f -> ReadyCondition.of(f).orElseThrow().getMessage()))
          .as("a stalled build is stopped by BLOOM_SOURCE_STALL_TIMEOUT")
          .isNotEmpty()
          .allSatisfy(m -> assertThat(m).contains("BLOOM_SOURCE_STALL_TIMEOUT"));
      System.out.printf(
          "honest filter beside 4 stalling filters of 2 hostile namespaces (2 slots, stall bound"
              + " %ds): first publish %d ms after creation, republish %d ms after its source"
              + " changed (refresh %ds)%n",
          STALL.toSeconds(), firstMillis, secondMillis, REFRESH.toSeconds());
    } finally {
      for (String namespace : hostile) {
        client.resources(BloomFilter.class).inNamespace(namespace).delete();
        client.namespaces().withName(namespace).delete();
      }
      pg.execute(
          "select pg_terminate_backend(pid) from pg_stat_activity where query like '%"
              + SLEEP
              + "%' and pid <> pg_backend_pid()");
    }
  }

  /**
   * A namespace whose filters' queries sleep before their first row holds no build slot, but each
   * such build keeps a reconcile thread: without a bound, one namespace with enough filters would
   * take all of java-operator-sdk's threads. With BLOOM_MAX_BUILDS_PER_NAMESPACE=2 (this class),
   * three such filters never run more than two queries at once, and the third waits without a
   * thread; another namespace still publishes.
   */
  @Test
  void oneNamespaceOccupiesAtMostItsShareOfReconcileThreads(
      KubernetesClient client, TestNamespace ns) throws Exception {
    PostgresServer pg = PostgresServer.shared();
    String hostile = ns.name() + "-h";
    try {
      client
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(hostile).endMetadata().build())
          .create();
      credentials(client, hostile, pg);
      for (String name : List.of("silent-1", "silent-2", "silent-3")) {
        apply(client, hostile, silentFilter(name, pg));
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> queries(pg, SILENT) >= 2);
      int most = 0;
      long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
      while (System.nanoTime() < until) {
        most = Math.max(most, queries(pg, SILENT));
        Thread.sleep(200);
      }
      assertThat(most).as("queries of the namespace running at once").isEqualTo(2);

      apply(
          client,
          ns.name(),
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: honest}
          spec:
            falsePositiveRate: 0.01
            source: {inline: [a, b, c]}
          """);
      awaitVersion(client, ns.name(), 1, Duration.ofSeconds(20));
    } finally {
      client.resources(BloomFilter.class).inNamespace(hostile).delete();
      client.namespaces().withName(hostile).delete();
      pg.execute(
          "select pg_terminate_backend(pid) from pg_stat_activity where query like '%"
              + SILENT
              + "%' and pid <> pg_backend_pid()");
    }
  }

  /** A query that sends nothing for a day: the build holds a reconcile thread, no slot. */
  private static String silentFilter(String name, PostgresServer pg) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: %s}
    spec:
      falsePositiveRate: 0.01
      expectedInsertions: 1000
      source:
        jdbc:
          url: %s
          query: "select %s::text"
          credentialsSecret: pg-credentials
          queryTimeout: 1h
    """
        .formatted(name, pg.url(), SILENT);
  }

  private static BloomFilter awaitVersion(
      KubernetesClient client, String namespace, long version, Duration within) {
    return await()
        .atMost(within)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                client.resources(BloomFilter.class).inNamespace(namespace).withName("honest").get(),
            f ->
                f != null
                    && f.getStatus() != null
                    && f.getStatus().getVersion() != null
                    && f.getStatus().getVersion() >= version
                    && ready(f, "True", Reasons.PUBLISHED));
  }

  private static long millisSince(long nanos) {
    return Duration.ofNanos(System.nanoTime() - nanos).toMillis();
  }

  /** One key, then a sleep far beyond the test: the build takes its slot and holds it. */
  private static String stallingFilter(String name, PostgresServer pg) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: %s}
    spec:
      falsePositiveRate: 0.01
      expectedInsertions: 1000
      source:
        jdbc:
          url: %s
          query: "select 'k1' union all select %s::text"
          credentialsSecret: pg-credentials
          fetchSize: 1
          queryTimeout: 1h
    """
        .formatted(name, pg.url(), SLEEP);
  }

  /** Sessions of the database running {@code query} or holding its open result. */
  private static int queries(PostgresServer pg, String query) throws Exception {
    try (Connection c = pg.connect();
        Statement s = c.createStatement();
        ResultSet rows =
            s.executeQuery(
                "select count(*) from pg_stat_activity where state in ('active', 'idle in"
                    + " transaction') and query like '%"
                    + query
                    + "%' and pid <> pg_backend_pid()")) {
      rows.next();
      return rows.getInt(1);
    }
  }

  private static void credentials(KubernetesClient client, String namespace, PostgresServer pg) {
    client
        .secrets()
        .inNamespace(namespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("pg-credentials")
                .addToAnnotations(SecretAccess.ALLOWED_FILTERS, "*")
                .addToAnnotations(SecretAccess.ALLOWED_HOSTS, "127.0.0.1:" + pg.port())
                .endMetadata()
                .withStringData(
                    Map.of("username", PostgresServer.USER, "password", PostgresServer.PASSWORD))
                .build())
        .serverSideApply();
  }
}
