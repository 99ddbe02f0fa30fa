package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.Reasons;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which Secret may be used by which filter, and sent where (API server mocked). */
@EnableKubernetesMockClient(crud = true)
class SecretAccessTest {

  static KubernetesClient client;
  static KubernetesMockServer server;

  @BeforeEach
  void secrets() {
    client.secrets().inNamespace("ns").delete();
    secret("plain", Map.of());
    secret("for-ids", Map.of(SecretAccess.ALLOWED_FILTERS, " other , ids "));
    secret("for-all", Map.of(SecretAccess.ALLOWED_FILTERS, "*"));
    secret(
        "token",
        Map.of(
            SecretAccess.ALLOWED_FILTERS,
            "ids",
            SecretAccess.ALLOWED_HOSTS,
            "exports.shop.internal:443, *.db.internal"));
  }

  private static void secret(String name, Map<String, String> annotations) {
    client
        .secrets()
        .inNamespace("ns")
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withAnnotations(annotations)
                .endMetadata()
                .withStringData(Map.of("k", "v"))
                .build())
        .create();
  }

  private static SecretAccess access(String filter, SecretAccess.Mode mode) {
    return new SecretAccess(client, "ns", filter, mode);
  }

  @Test
  void aSecretWithoutConsentIsNotUsable() {
    assertThatThrownBy(
            () ->
                access("ids", SecretAccess.Mode.ANNOTATION).forPublishing("plain", "source.secret"))
        .isInstanceOfSatisfying(
            SourceException.class,
            e -> assertThat(e.reason()).isEqualTo(Reasons.SECRET_NOT_ALLOWED))
        .hasMessageContaining("Secret plain (source.secret) does not allow BloomFilter ids")
        .hasMessageContaining(SecretAccess.ALLOWED_FILTERS);
  }

  @Test
  void onlyTheNamedFiltersMayUseIt() throws SourceException {
    assertThat(access("ids", SecretAccess.Mode.ANNOTATION).forPublishing("for-ids", "f"))
        .isNotNull();
    assertThat(access("other", SecretAccess.Mode.ANNOTATION).forPublishing("for-ids", "f"))
        .isNotNull();
    assertThatThrownBy(
            () -> access("ids-2", SecretAccess.Mode.ANNOTATION).forPublishing("for-ids", "f"))
        .isInstanceOf(SourceException.class);
    assertThat(access("anyone", SecretAccess.Mode.ANNOTATION).forPublishing("for-all", "f"))
        .isNotNull();
  }

  @Test
  void sendingNeedsTheHostToo() throws SourceException {
    SecretAccess ids = access("ids", SecretAccess.Mode.ANNOTATION);
    assertThat(ids.forSending("token", "h", "exports.shop.internal", 443)).isNotNull();
    assertThat(ids.forSending("token", "h", "pg.db.internal", 5432)).isNotNull();
    assertThatThrownBy(() -> ids.forSending("token", "h", "attacker.example", 443))
        .isInstanceOfSatisfying(
            SourceException.class,
            e -> assertThat(e.reason()).isEqualTo(Reasons.SECRET_NOT_ALLOWED))
        .hasMessageContaining("may not be sent to attacker.example:443")
        .hasMessageContaining("nothing was sent");
    assertThatThrownBy(() -> ids.forSending("token", "h", "exports.shop.internal", 8443))
        .isInstanceOf(SourceException.class);
    // allowed-filters alone does not let a Secret travel.
    assertThatThrownBy(() -> ids.forSending("for-ids", "h", "exports.shop.internal", 443))
        .isInstanceOf(SourceException.class);
  }

  @Test
  void aSecretSentToSeveralHostsIsReadOnceAndMustAllowEachOfThem() throws SourceException {
    SecretAccess access = access("ids", SecretAccess.Mode.ANNOTATION);
    List<SecretAccess.Destination> allowed =
        List.of(
            new SecretAccess.Destination("a.db.internal", 9093),
            new SecretAccess.Destination("b.db.internal", 9093),
            new SecretAccess.Destination("exports.shop.internal", 443));
    int before = server.getRequestCount();
    assertThat(access.forSending("token", "changes.kafka.sasl.credentialsSecret", allowed))
        .isNotNull();
    assertThat(server.getRequestCount() - before).as("API requests").isEqualTo(1);

    List<SecretAccess.Destination> oneOutside =
        List.of(
            new SecretAccess.Destination("a.db.internal", 9093),
            new SecretAccess.Destination("kafka.attacker.example", 9093));
    assertThatThrownBy(() -> access.forSending("token", "f", oneOutside))
        .isInstanceOfSatisfying(
            SourceException.class,
            e -> assertThat(e.reason()).isEqualTo(Reasons.SECRET_NOT_ALLOWED))
        .hasMessageContaining("may not be sent to kafka.attacker.example:9093");
  }

  @Test
  void namespaceModeTrustsTheNamespaceBoundary() throws SourceException {
    SecretAccess trusting = access("ids", SecretAccess.Mode.NAMESPACE);
    assertThat(trusting.forPublishing("plain", "f")).isNotNull();
    assertThat(trusting.forSending("plain", "h", "anywhere.example", 80)).isNotNull();
  }

  @Test
  void missingSecretIsNotFoundInEitherMode() {
    for (SecretAccess.Mode mode : SecretAccess.Mode.values()) {
      assertThatThrownBy(() -> access("ids", mode).forPublishing("absent", "source.secret"))
          .isInstanceOfSatisfying(
              SourceException.class,
              e -> assertThat(e.reason()).isEqualTo(Reasons.SOURCE_NOT_FOUND));
    }
  }

  @ParameterizedTest(name = "{0} allows {1}:{2} = {3}")
  @CsvSource(
      delimiter = '|',
      value = {
        "exports.shop.internal        | exports.shop.internal | 443  | true",
        "EXPORTS.shop.internal        | exports.Shop.Internal | 80   | true",
        "exports.shop.internal:443    | exports.shop.internal | 443  | true",
        "exports.shop.internal:443    | exports.shop.internal | 80   | false",
        "exports.shop.internal:x      | exports.shop.internal | 443  | false",
        "*.shop.internal              | a.b.shop.internal     | 443  | true",
        "*.shop.internal              | shop.internal         | 443  | false",
        "*.shop.internal              | evilshop.internal     | 443  | false",
        "shop.internal                | exports.shop.internal | 443  | false",
        "exports.shop.internal        | exports.shop.internal.attacker.example | 443 | false",
        "'a.example, b.example:5432'  | b.example             | 5432 | true",
        "[::1]:5432                   | [::1]                 | 5432 | true",
        "fd00::10                     | fd00::10              | 5432 | true",
        "''                           | exports.shop.internal | 443  | false",
        "'*'                          | exports.shop.internal | 443  | false"
      })
  void hostPatterns(String annotation, String host, int port, boolean allowed) {
    assertThat(SecretAccess.hostAllowed(annotation, host, port)).isEqualTo(allowed);
  }

  @Test
  void modeParsing() {
    assertThat(SecretAccess.Mode.parse(" Namespace ")).isEqualTo(SecretAccess.Mode.NAMESPACE);
    assertThatThrownBy(() -> SecretAccess.Mode.parse("none"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
