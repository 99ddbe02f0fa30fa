package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.TcpProxy.Mode;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.testing.servers.PostgresServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 8 of docs/reliability.md, for a JDBC source on a real PostgreSQL, reached through a proxy
 * that breaks the connection: the database is down (connections refused), slow (the login and the
 * first rows pass, then the answer stalls past the source's queryTimeout) or sends garbage
 * mid-stream (the first rows, then random bytes, then the connection is closed), each for several
 * refresh intervals, while new rows wait behind it. Throughout: the published version stays, it
 * keeps verifying, a reader keeps serving it, and Ready=False names the failure without quoting a
 * row or a stack trace; the first good read afterwards publishes the new rows.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class JdbcSourceOutageFaultTest {

  private static final String FILTER = "jdbc-outage";
  private static final String TABLE = "outage_keys";
  private static final int ROWS = 20_000;

  /** Past the login and two or three fetches of 1,000 rows: faults strike mid-result. */
  private static final int PASS_BYTES = 48 * 1024;

  @Test
  void lastGoodSnapshotKeepsServingThroughDatabaseOutages(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    Duration outage = FaultParameters.millis("sourceOutage", 25_000);
    String namespace = ns.name();
    PostgresServer pg = PostgresServer.shared();
    pg.execute("drop table if exists " + TABLE, "create table " + TABLE + " (k text)");
    writeRound(pg, 0);
    try (TcpProxy proxy = new TcpProxy("127.0.0.1", pg.port(), PASS_BYTES)) {
      credentials(client, namespace, proxy.port());
      SnapshotFixtures.apply(
          client,
          namespace,
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: %s}
          spec:
            falsePositiveRate: 0.01
            source:
              jdbc:
                url: "jdbc:postgresql://127.0.0.1:%d/%s"
                query: "select k from %s"
                credentialsSecret: pg-credentials
                fetchSize: 1000
                queryTimeout: 3s
            refreshInterval: 10s
            snapshot: {chunkSizeBytes: 4096, retainPreviousFor: 5s}
          """
              .formatted(FILTER, proxy.port(), PostgresServer.DATABASE, TABLE));
      Path log = Files.createTempFile("jdbc-source-outage-", ".log");
      List<String> figures = new ArrayList<>();
      try (OperatorProcess operator =
              new OperatorProcess(
                  cluster.kubeconfig(),
                  Map.of(
                      "BLOOM_MIN_PUBLISH_INTERVAL",
                      "0",
                      "BLOOM_WATCH_NAMESPACES",
                      namespace,
                      // The database (behind a proxy) listens on loopback, refused by default.
                      "BLOOM_HTTP_ALLOW",
                      "127.0.0.0/8"),
                  log);
          SnapshotChecker checker =
              new SnapshotChecker(client, namespace, List.of(FILTER), Duration.ofSeconds(5));
          LiveBloomFilter<String> reader =
              BloomFilterWatcher.builder(client, namespace, FILTER, LiveKeyType.STRING).start()) {
        operator.start();
        checker.start();
        assertThat(reader.awaitReady(Duration.ofSeconds(90))).isTrue();
        OutageWatch watch = new OutageWatch(client, namespace, FILTER, reader);
        int round = 0;
        for (Mode mode : List.of(Mode.DOWN, Mode.STALL, Mode.GARBAGE)) {
          long good = SnapshotFixtures.manifest(client, namespace, FILTER).version();
          List<String> goodKeys = keys(round);
          round++;
          proxy.mode(mode);
          writeRound(pg, round); // new rows wait behind the broken connection
          int acceptedBefore = proxy.accepted();
          Set<String> reasons =
              watch.during(
                  mode,
                  outage,
                  good,
                  goodKeys,
                  message ->
                      assertThat(message)
                          .doesNotContain("rowkey-") // no row value
                          .matches("[ -~]*")); // no byte of the garbage
          int attempts = proxy.accepted() - acceptedBefore;
          proxy.mode(Mode.PASS);
          long publishedAfter = watch.recovery(keys(round));
          figures.add(
              String.format(
                  "%s[connectionsDuringOutage=%d readyFalseReasons=%s"
                      + " recovered->readerOnNewVersion=%dms]",
                  mode, attempts, reasons, publishedAfter));
          if (mode != Mode.DOWN) { // a refused connection is never accepted
            assertThat(attempts)
                .as("%s: the operator tried again during the outage", mode)
                .isGreaterThan(1);
          }
          assertThat(reasons)
              .as("%s: Ready=False says why", mode)
              .isNotEmpty()
              .isSubsetOf(expectedReasons(mode));
        }
        checker.close();
        String operatorLog = operator.logSinceStart();
        FaultParameters.report(
            "jdbc-source-outage",
            String.format(
                "outageEach=%s rows=%d %s samples=%d checks=%d violations=%d",
                outage,
                ROWS,
                String.join(" ", figures),
                watch.samples(),
                checker.checks(),
                checker.violations().size()));
        assertThat(checker.violations()).isEmpty();
        assertThat(operatorLog).as("no row value in the operator log").doesNotContain("rowkey-");
        assertThat(operatorLog).as("no stack trace in the operator log").doesNotContain("\tat ");
      }
    }
  }

  private static Set<String> expectedReasons(Mode mode) {
    return switch (mode) {
      case DOWN -> Set.of(Reasons.SOURCE_UNREADABLE);
      // Garbage read as a row length may announce a row over BLOOM_JDBC_MAX_BATCH_BYTES, which
      // the driver refuses before allocating it: indistinguishable from a real oversized row.
      case GARBAGE -> Set.of(Reasons.SOURCE_UNREADABLE, Reasons.SOURCE_LIMIT_EXCEEDED);
      case STALL -> Set.of(Reasons.SOURCE_TIMEOUT);
      case PASS -> Set.of();
    };
  }

  /** Replaces the table's rows with round {@code round}'s keys. */
  private static void writeRound(PostgresServer pg, int round) {
    pg.execute(
        "truncate " + TABLE,
        "insert into "
            + TABLE
            + " select 'rowkey-"
            + round
            + "-' || g from generate_series(0, "
            + (ROWS - 1)
            + ") g");
  }

  private static List<String> keys(int round) {
    List<String> keys = new ArrayList<>(ROWS);
    for (int i = 0; i < ROWS; i++) {
      keys.add("rowkey-" + round + "-" + i);
    }
    return keys;
  }

  /** Credentials the test namespace's filters may send to the proxy's address only. */
  private static void credentials(KubernetesClient client, String namespace, int port) {
    client
        .secrets()
        .inNamespace(namespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("pg-credentials")
                .addToAnnotations(SecretAccess.ALLOWED_FILTERS, "*")
                .addToAnnotations(SecretAccess.ALLOWED_HOSTS, "127.0.0.1:" + port)
                .endMetadata()
                .withStringData(
                    Map.of("username", PostgresServer.USER, "password", PostgresServer.PASSWORD))
                .build())
        .serverSideApply();
  }
}
