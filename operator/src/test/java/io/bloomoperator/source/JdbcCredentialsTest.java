package io.bloomoperator.source;

import io.bloomoperator.testing.PostgresServer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.snapshot.KeyType;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Credentials from a Secret (API server mocked; the database is the real PostgreSQL). */
@EnableKubernetesMockClient(crud = true)
class JdbcCredentialsTest {

  static KubernetesClient client;

  private static void secret(String name, Map<String, String> data) {
    client.secrets().inNamespace("ns").resource(new SecretBuilder().withNewMetadata()
        .withName(name).endMetadata().withData(data.entrySet().stream().collect(
            java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> Base64.getEncoder()
                .encodeToString(e.getValue().getBytes(StandardCharsets.UTF_8))))).build())
        .create();
  }

  @Test
  void missingSecretIsNotFound() {
    assertThatThrownBy(() -> JdbcCredentials.fromSecret(client, "ns", "db-creds"))
        .isInstanceOf(SourceException.class)
        .hasMessage("Secret db-creds not found")
        .extracting(e -> ((SourceException) e).reason()).isEqualTo(SourceException.NOT_FOUND);
  }

  @Test
  void missingKeyIsKeyNotFound() {
    secret("only-user", Map.of("username", "app"));
    assertThatThrownBy(() -> JdbcCredentials.fromSecret(client, "ns", "only-user"))
        .isInstanceOf(SourceException.class)
        .hasMessageContaining("has no key password")
        .extracting(e -> ((SourceException) e).reason())
        .isEqualTo(SourceException.KEY_NOT_FOUND);
  }

  @Test
  void dropsOneTrailingNewlineAndNeverShowsThePassword() throws Exception {
    secret("echoed", Map.of("username", "app\n", "password", " pa ss\n"));
    JdbcCredentials credentials = JdbcCredentials.fromSecret(client, "ns", "echoed");
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
    LineParser parser = new LineParser(KeyType.LONG, new LineParser.KeyConsumer() {
      @Override
      public void putString(String key) {
      }

      @Override
      public void putLong(long key) {
      }
    }, 0);
    new JdbcSource(client, "ns", spec).readKeys(parser);
    assertThat(parser.keys()).isEqualTo(10);
  }
}
