package io.bloomoperator.source;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.MariaDbServer;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * BloomFilters with a jdbc source on a real MariaDB through both MySQL-protocol drivers, built by
 * the operator running in-process against a real API server; and BloomFilters whose query tries to
 * upload one of the operator's local files.
 */
@RealKubernetes(crdDirs = "crds")
class JdbcMySqlOperatorTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(JdbcTestSettings.operator());

  private static MariaDbServer db;

  @BeforeAll
  static void start() {
    db = MariaDbServer.shared();
    JdbcMySqlSourceTest.loadKeys(db);
    db.execute("create table if not exists uploads (line text)");
  }

  private static void credentials(KubernetesClient client, String ns) {
    client
        .secrets()
        .inNamespace(ns)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("db-credentials")
                .addToAnnotations(SecretAccess.ALLOWED_FILTERS, "*")
                .addToAnnotations(
                    SecretAccess.ALLOWED_HOSTS, "127.0.0.1:" + MariaDbServer.shared().port())
                .endMetadata()
                .withStringData(
                    Map.of("username", MariaDbServer.USER, "password", MariaDbServer.PASSWORD))
                .build())
        .serverSideApply();
  }

  private static String filterYaml(String name, String url, String query) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: %s}
    spec:
      falsePositiveRate: 0.01
      keyType: String
      source:
        jdbc:
          url: "%s"
          query: "%s"
          credentialsSecret: db-credentials
    """
        .formatted(name, url, query.replace("\\", "\\\\").replace("\"", "\\\""));
  }

  @Test
  void bothDriversBuildAFilterHoldingEveryKey(KubernetesClient client, TestNamespace ns)
      throws Exception {
    credentials(client, ns.name());
    for (String scheme : JdbcMySqlSourceTest.SCHEMES) {
      String name = scheme.substring(5, scheme.length() - 1) + "-skus";
      apply(client, ns.name(), filterYaml(name, db.url(scheme), "select k from text_keys"));
      var filter = awaitStatus(client, ns.name(), name, f -> ready(f, "True", "Published"));
      assertThat(filter.getStatus().getKeys())
          .as(scheme)
          .isEqualTo((long) JdbcMySqlSourceTest.KEYS);
      assertThat(filter.getStatus().getNullKeys()).isEqualTo(1L);
      Manifest manifest = manifest(client, ns.name(), name);
      com.google.common.hash.BloomFilter<CharSequence> published =
          com.google.common.hash.BloomFilter.readFrom(
              new ByteArrayInputStream(payload(client, ns.name(), manifest)),
              Funnels.stringFunnel(StandardCharsets.UTF_8));
      assertThat(
              IntStream.rangeClosed(1, JdbcMySqlSourceTest.KEYS)
                  .filter(i -> !published.mightContain("sku-" + i))
                  .count())
          .as(scheme + ": keys missing from the published filter")
          .isZero();
      assertThat(
              IntStream.range(0, 10_000).filter(i -> published.mightContain("absent-" + i)).count())
          .as(scheme + ": false positives of 10000")
          .isLessThan(200);
    }
  }

  /**
   * The query of the review: LOAD DATA LOCAL INFILE of a file the operator can read. With both
   * drivers (and Connector/J's opt-in parameter) the filter is not Ready, the reason says why, and
   * nothing reached the table.
   */
  @Test
  void loadDataLocalInfileIsRefusedAndNothingIsUploaded(
      KubernetesClient client, TestNamespace ns, @TempDir Path dir) throws Exception {
    credentials(client, ns.name());
    Path token = dir.resolve("token");
    Files.writeString(token, "token-" + UUID.randomUUID() + "\n", StandardCharsets.UTF_8);
    String load = "LOAD DATA LOCAL INFILE '" + token + "' INTO TABLE uploads";
    // name -> url, query, what the Ready message must say
    Map<String, List<String>> attempts =
        Map.of(
            "mariadb-load",
                List.of(
                    db.url("jdbc:mariadb:"),
                    load,
                    "spec.source.jdbc.query must be a single SELECT or WITH statement"),
            "mysql-load",
                List.of(
                    db.url("jdbc:mysql:") + "?allowLoadLocalInfile=true",
                    load,
                    "parameter allowLoadLocalInfile is not allowed"),
            "mariadb-hidden",
                List.of(
                    db.url("jdbc:mariadb:"),
                    "select k from text_keys /* " + load + " */",
                    "spec.source.jdbc.query must not contain comments"),
            "mariadb-opt-in",
                List.of(
                    db.url("jdbc:mariadb:") + "?allowLocalInfile=true",
                    "select k from text_keys",
                    "parameter allowLocalInfile is not allowed"));
    attempts.forEach(
        (name, attempt) ->
            apply(client, ns.name(), filterYaml(name, attempt.get(0), attempt.get(1))));
    attempts.forEach(
        (name, attempt) -> {
          var filter = awaitStatus(client, ns.name(), name, f -> ready(f, "False", "InvalidSpec"));
          assertThat(ReadyCondition.of(filter).orElseThrow().getMessage())
              .as(name)
              .contains(attempt.get(2));
        });
    assertThat(db.query("select count(*) from uploads"))
        .as("rows uploaded from " + token)
        .containsExactly("0");
  }
}
