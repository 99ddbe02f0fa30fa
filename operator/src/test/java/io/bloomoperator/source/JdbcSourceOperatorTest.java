package io.bloomoperator.source;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.source.JdbcTestTables.LONG_NULLS;
import static io.bloomoperator.source.JdbcTestTables.LONG_TABLE;
import static io.bloomoperator.source.JdbcTestTables.MILLION;
import static io.bloomoperator.source.JdbcTestTables.TEXT_NULLS;
import static io.bloomoperator.source.JdbcTestTables.TEXT_TABLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import com.google.common.hash.Funnels;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.LogCapture;
import io.bloomoperator.testing.servers.PostgresServer;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * BloomFilters with a jdbc source over a million-row PostgreSQL table, built by the operator
 * running in-process against a real API server.
 */
@RealKubernetes(crdDirs = "crds")
class JdbcSourceOperatorTest {

  private static final double FPP = 0.01;
  private static final int ABSENT_SAMPLE = 200_000;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(JdbcTestSettings.operator());

  private static PostgresServer pg;

  @BeforeAll
  static void start() {
    pg = PostgresServer.shared();
    JdbcTestTables.load(pg);
  }

  /**
   * A row value the database puts into its error message (a failed cast) appears in no status
   * field, no event and no operator log line at info level or above: only the SQLState does.
   */
  @Test
  void aFailedCastEchoesNoRowValue(KubernetesClient client, TestNamespace ns) {
    String secret = "tok-" + UUID.randomUUID();
    pg.execute(
        "create table if not exists cast_rows (v text)",
        "insert into cast_rows values ('12'), ('" + secret + "')");
    credentials(client, ns.name(), PostgresServer.PASSWORD);
    LogCapture logs = LogCapture.attach();
    try {
      apply(
          client,
          ns.name(),
          filterYaml("casts", "Long", "select cast(v as bigint) from cast_rows", ""));
      var failed =
          awaitStatus(
              client, ns.name(), "casts", f -> ready(f, "False", Reasons.SOURCE_QUERY_FAILED));
      assertThat(ReadyCondition.of(failed).orElseThrow().getMessage()).contains("SQLState 22P02");
      // A second build fails the same way, so the status and logs have settled on the error.
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  logs.events().stream().anyMatch(e -> e.getFormattedMessage().contains("22P02")));
      String status =
          Serialization.asJson(
              client
                  .resources(BloomFilter.class)
                  .inNamespace(ns.name())
                  .withName("casts")
                  .get()
                  .getStatus());
      assertThat(status).contains("22P02").doesNotContain(secret);
      assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
          .isNotEmpty()
          .allSatisfy(e -> assertThat(e.getMessage()).doesNotContain(secret));
    } finally {
      logs.close();
    }
    assertThat(logs.events())
        .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.INFO))
        .noneSatisfy(
            e ->
                assertThat(
                        e.getFormattedMessage()
                            + (e.getThrowableProxy() == null
                                ? ""
                                : e.getThrowableProxy().getMessage()))
                    .contains(secret));
  }

  /**
   * One 300 MB value ({@code select repeat('x', 300000000)}, issue 17: it crashed the packaged
   * operator in the counting pass) is a SourceLimitExceeded status of its filter, with no byte of
   * it in the status; the operator stays up and builds the next filter.
   */
  @Test
  void aHugeValueIsALimitOfItsFilterNotACrashOfTheOperator(
      KubernetesClient client, TestNamespace ns) {
    credentials(client, ns.name(), PostgresServer.PASSWORD);
    apply(client, ns.name(), filterYaml("huge", "String", "select repeat('x', 300000000)", ""));
    var failed =
        awaitStatus(
            client, ns.name(), "huge", f -> ready(f, "False", Reasons.SOURCE_LIMIT_EXCEEDED));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("BLOOM_JDBC_MAX_VALUE_BYTES")
        .doesNotContain("xxxx");
    apply(client, ns.name(), filterYaml("after-huge", "String", "select 'k1'", ""));
    awaitStatus(client, ns.name(), "after-huge", f -> ready(f, "True", "Published"));
  }

  /** The metadata endpoint as a database host: refused by the operator's egress policy. */
  @Test
  void theMetadataEndpointIsNotADatabase(KubernetesClient client, TestNamespace ns) {
    apply(
        client,
        ns.name(),
        filterYaml("metadata", "String", "select 1", "")
            .replace(pg.url(), "jdbc:postgresql://169.254.169.254:80/latest")
            .replace("      credentialsSecret: pg-credentials\n", ""));
    var refused =
        awaitStatus(
            client,
            ns.name(),
            "metadata",
            f -> ready(f, "False", Reasons.SOURCE_ADDRESS_NOT_ALLOWED));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains("169.254.169.254:80", "link-local");
  }

  private static void credentials(KubernetesClient client, String ns, String password) {
    client
        .secrets()
        .inNamespace(ns)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("pg-credentials")
                // The Secret's owner lets every filter of the test namespace send it to the test
                // server.
                .addToAnnotations(SecretAccess.ALLOWED_FILTERS, "*")
                .addToAnnotations(
                    SecretAccess.ALLOWED_HOSTS, "127.0.0.1:" + PostgresServer.shared().port())
                .endMetadata()
                .withStringData(Map.of("username", PostgresServer.USER, "password", password))
                .build())
        .serverSideApply();
  }

  private static String filterYaml(String name, String keyType, String query, String extra) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: %s}
    spec:
      falsePositiveRate: %s
      keyType: %s
    %s  source:
        jdbc:
          url: %s
          query: %s
          credentialsSecret: pg-credentials
          fetchSize: 20000
    """
        .formatted(name, FPP, keyType, extra, pg.url(), query);
  }

  /**
   * {@code spec.source.jdbc.partitions} through the operator: the filter read over 4 connections
   * (ranges of the key column, in one exported snapshot) publishes the very payload of the same
   * filter read over one, and reports the same key counts; so does a String filter in the
   * split-block layout read over 2.
   */
  @Test
  void aPartitionedReadPublishesTheSamePayloadAsOneConnection(
      KubernetesClient client, TestNamespace ns) throws Exception {
    credentials(client, ns.name(), PostgresServer.PASSWORD);
    String sized = "  expectedInsertions: " + MILLION + "\n";
    apply(
        client, ns.name(), filterYaml("one-reader", "Long", "select k from " + LONG_TABLE, sized));
    apply(
        client,
        ns.name(),
        filterYaml("four-readers", "Long", "select k from " + LONG_TABLE, sized)
            + "      partitions: {column: k, count: 4, lowerBound: 1, upperBound: "
            + MILLION
            + "}\n");
    var one = awaitStatus(client, ns.name(), "one-reader", f -> ready(f, "True", "Published"));
    var four = awaitStatus(client, ns.name(), "four-readers", f -> ready(f, "True", "Published"));
    assertThat(four.getStatus().getKeys())
        .isEqualTo(one.getStatus().getKeys())
        .isEqualTo((long) MILLION);
    assertThat(four.getStatus().getNullKeys()).isEqualTo(one.getStatus().getNullKeys());
    assertThat(manifest(client, ns.name(), "four-readers").sha256())
        .isEqualTo(manifest(client, ns.name(), "one-reader").sha256());

    // String keys in the split-block layout, through the build guard: the reading threads hash
    // their own rows and route them to the block-range claimants; the same payload again.
    String skus = "select k, cast(substr(k, 5) as bigint) as n from " + TEXT_TABLE;
    String splitBlock = sized + "  format: SplitBlock\n";
    apply(client, ns.name(), filterYaml("one-sku-reader", "String", skus, splitBlock));
    apply(
        client,
        ns.name(),
        filterYaml("two-sku-readers", "String", skus, splitBlock)
            + "      partitions: {column: n, count: 2, lowerBound: 1, upperBound: "
            + MILLION
            + "}\n");
    var oneSku =
        awaitStatus(client, ns.name(), "one-sku-reader", f -> ready(f, "True", "Published"));
    var twoSku =
        awaitStatus(client, ns.name(), "two-sku-readers", f -> ready(f, "True", "Published"));
    assertThat(twoSku.getStatus().getKeys())
        .isEqualTo(oneSku.getStatus().getKeys())
        .isEqualTo((long) MILLION);
    assertThat(twoSku.getStatus().getNullKeys())
        .isEqualTo(oneSku.getStatus().getNullKeys())
        .isEqualTo((long) TEXT_NULLS);
    assertThat(manifest(client, ns.name(), "two-sku-readers").sha256())
        .isEqualTo(manifest(client, ns.name(), "one-sku-reader").sha256());
  }

  @Test
  void longFilterFromABigintColumnHoldsEveryKey(KubernetesClient client, TestNamespace ns)
      throws Exception {
    credentials(client, ns.name(), PostgresServer.PASSWORD);
    // No expectedInsertions: the operator counts (one query), then fills (a second query).
    apply(client, ns.name(), filterYaml("order-ids", "Long", "select k from " + LONG_TABLE, ""));

    var filter = awaitStatus(client, ns.name(), "order-ids", f -> ready(f, "True", "Published"));
    assertThat(filter.getStatus().getKeys()).isEqualTo((long) MILLION);
    assertThat(filter.getStatus().getNullKeys()).isEqualTo((long) LONG_NULLS);
    assertThat(filter.getStatus().getMalformedKeys()).isIn(null, 0L);

    Manifest manifest = manifest(client, ns.name(), "order-ids");
    assertThat(manifest.sha256()).isEqualTo(filter.getStatus().getSha256());
    com.google.common.hash.BloomFilter<Long> published =
        com.google.common.hash.BloomFilter.readFrom(
            new ByteArrayInputStream(payload(client, ns.name(), manifest)), Funnels.longFunnel());
    assertThat(LongStream.rangeClosed(1, MILLION).filter(k -> !published.mightContain(k)).count())
        .as("keys missing from the published filter")
        .isZero();
    long falsePositives =
        LongStream.rangeClosed(MILLION + 1L, MILLION + (long) ABSENT_SAMPLE)
            .filter(published::mightContain)
            .count();
    assertThat((double) falsePositives / ABSENT_SAMPLE)
        .as("measured FPP")
        .isLessThanOrEqualTo(FPP * 1.5);
  }

  @Test
  void stringFilterFromATextColumnThenAWrongPasswordKeepsTheLastGoodSnapshot(
      KubernetesClient client, TestNamespace ns) throws Exception {
    credentials(client, ns.name(), PostgresServer.PASSWORD);
    // Rebuilt every 10s (a database has no change token); one query per build.
    apply(
        client,
        ns.name(),
        filterYaml(
            "skus",
            "String",
            "select k from " + TEXT_TABLE,
            "  expectedInsertions: " + MILLION + "\n  refreshInterval: 10s\n"));

    var filter = awaitStatus(client, ns.name(), "skus", f -> ready(f, "True", "Published"));
    assertThat(filter.getStatus().getKeys()).isEqualTo((long) MILLION);
    assertThat(filter.getStatus().getNullKeys()).isEqualTo((long) TEXT_NULLS);

    Manifest good = manifest(client, ns.name(), "skus");
    com.google.common.hash.BloomFilter<CharSequence> published =
        com.google.common.hash.BloomFilter.readFrom(
            new ByteArrayInputStream(payload(client, ns.name(), good)),
            Funnels.stringFunnel(StandardCharsets.UTF_8));
    assertThat(
            IntStream.rangeClosed(1, MILLION)
                .filter(i -> !published.mightContain("sku-" + i))
                .count())
        .as("keys missing from the published filter")
        .isZero();
    long falsePositives =
        IntStream.range(0, ABSENT_SAMPLE)
            .filter(i -> published.mightContain("absent-" + i))
            .count();
    assertThat((double) falsePositives / ABSENT_SAMPLE)
        .as("measured FPP")
        .isLessThanOrEqualTo(FPP * 1.5);

    credentials(client, ns.name(), "not-the-password");
    var failed =
        awaitStatus(client, ns.name(), "skus", f -> ready(f, "False", Reasons.SOURCE_AUTH_FAILED));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("SQLState 28P01")
        .doesNotContain("not-the-password")
        .doesNotContain("password authentication failed");
    Manifest still = manifest(client, ns.name(), "skus");
    assertThat(still.version())
        .as("the last good version stays published")
        .isEqualTo(good.version());
    assertThat(still.sha256()).isEqualTo(good.sha256());
    assertThat(payload(client, ns.name(), still))
        .as("its chunks are still there")
        .hasSize(still.chunks().stream().mapToInt(Manifest.ChunkRef::bytes).sum());
  }
}
