package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.servers.PostgresServer;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Credentials from a Secret (API server mocked; the database is the real PostgreSQL). */
@EnableKubernetesMockClient(crud = true)
class JdbcCredentialsTest {

  static KubernetesClient client;

  /** Trusting the namespace boundary: these tests are about reading the keys. */
  private static final SecretAccess.Mode TRUSTING = SecretAccess.Mode.NAMESPACE;

  private static void secret(String name, Map<String, String> data) {
    secret(name, Map.of(), data);
  }

  private static void secret(
      String name, Map<String, String> annotations, Map<String, String> data) {
    client
        .secrets()
        .inNamespace("ns")
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withAnnotations(annotations)
                .endMetadata()
                .withData(
                    data.entrySet().stream()
                        .collect(
                            java.util.stream.Collectors.toMap(
                                Map.Entry::getKey,
                                e ->
                                    Base64.getEncoder()
                                        .encodeToString(
                                            e.getValue().getBytes(StandardCharsets.UTF_8)))))
                .build())
        .createOr(c -> c.update());
  }

  private static JdbcCredentials read(String name) throws SourceException {
    return JdbcCredentials.fromSecret(
        new SecretAccess(client, "ns", "f", TRUSTING), name, "db", 5432);
  }

  @Test
  void missingSecretIsNotFound() {
    assertThatThrownBy(() -> read("db-creds"))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("Secret db-creds (source.jdbc.credentialsSecret) not found")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_NOT_FOUND);
  }

  @Test
  void missingKeyIsKeyNotFound() {
    secret("only-user", Map.of("username", "app"));
    assertThatThrownBy(() -> read("only-user"))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("has no key password")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(Reasons.SOURCE_KEY_NOT_FOUND);
  }

  @Test
  void dropsOneTrailingNewlineAndNeverShowsThePassword() throws Exception {
    secret("echoed", Map.of("username", "app\n", "password", " pa ss\n"));
    JdbcCredentials credentials = read("echoed");
    assertThat(credentials.username()).isEqualTo("app");
    assertThat(credentials.password()).isEqualTo(" pa ss");
    assertThat(credentials.toString()).doesNotContain("pa ss");
  }

  @Test
  void readsTheDatabaseWithTheSecretsCredentials() throws Exception {
    PostgresServer pg = PostgresServer.shared();
    secret("pg", Map.of("username", PostgresServer.USER, "password", PostgresServer.PASSWORD));
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(pg.url());
    spec.setQuery("select g::bigint from generate_series(1, 10) g");
    spec.setCredentialsSecret("pg");
    LineParser parser = noKeys();
    new JdbcSource(new SecretAccess(client, "ns", "f", TRUSTING), spec, JdbcTestSettings.LOOPBACK)
        .readKeys(parser);
    assertThat(parser.keys()).isEqualTo(10);
  }

  /**
   * The author of a BloomFilter points the URL at a server of their own: without the Secret's
   * consent for that host, the operator does not even connect, so no password can be asked for.
   */
  @Test
  void credentialsGoOnlyToTheHostsTheSecretAllows() throws Exception {
    try (ServerSocket attacker = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      AtomicInteger connections = new AtomicInteger();
      Thread acceptor =
          new Thread(
              () -> {
                while (!attacker.isClosed()) {
                  try (Socket s = attacker.accept()) {
                    connections.incrementAndGet();
                  } catch (IOException e) {
                    return;
                  }
                }
              });
      acceptor.setDaemon(true);
      acceptor.start();
      JdbcSourceSpec spec = new JdbcSourceSpec();
      spec.setUrl("jdbc:postgresql://127.0.0.1:" + attacker.getLocalPort() + "/shop");
      spec.setQuery("select 1");
      spec.setCredentialsSecret("db");
      SecretAccess access = new SecretAccess(client, "ns", "f", SecretAccess.Mode.ANNOTATION);
      Map<String, String> data = Map.of("username", "u", "password", "p");

      secret(
          "db",
          Map.of(
              SecretAccess.ALLOWED_FILTERS,
              "f",
              SecretAccess.ALLOWED_HOSTS,
              "db.shop.internal:5432"),
          data);
      assertThatThrownBy(
              () -> new JdbcSource(access, spec, JdbcTestSettings.LOOPBACK).readKeys(noKeys()))
          .isInstanceOfSatisfying(
              SourceException.class,
              e -> assertThat(e.reason()).isEqualTo(Reasons.SECRET_NOT_ALLOWED))
          .hasMessageContaining("may not be sent to 127.0.0.1:" + attacker.getLocalPort());
      Thread.sleep(200);
      assertThat(connections.get()).as("connections to the author's server").isZero();

      // With the host allowed, the operator does connect: the check above can fail.
      secret(
          "db",
          Map.of(
              SecretAccess.ALLOWED_FILTERS,
              "f",
              SecretAccess.ALLOWED_HOSTS,
              "127.0.0.1:" + attacker.getLocalPort()),
          data);
      assertThatThrownBy(
              () -> new JdbcSource(access, spec, JdbcTestSettings.LOOPBACK).readKeys(noKeys()))
          .isInstanceOf(SourceException.class);
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(10))
          .until(() -> connections.get() > 0);
    }
  }

  private static LineParser noKeys() {
    return new LineParser(KeyType.LONG, new CollectedKeys(), 0);
  }
}
