package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.KafkaChangesSpec;
import io.bloomoperator.api.KafkaSaslSpec;
import io.bloomoperator.api.KafkaTlsSpec;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.servers.KafkaServer;
import io.bloomoperator.testing.servers.TestCertificates;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * spec.changes.kafka's tls and sasl against a real broker with TLS and SASL listeners (its
 * certificate from a private CA, SCRAM users stored by the broker), the Secrets on a real API
 * server behind the annotation opt-in.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(120)
class KafkaTlsSaslTest {

  private static final EgressPolicy LOOPBACK_ONLY = EgressPolicy.of("127.0.0.1/32", null);
  private static final String FILTER = "products";

  /** Every character a JAAS value could be broken out of with, and a SCRAM name's specials. */
  private static final String AWKWARD_PASSWORD = "p\"a\\ss; w=o,rd\" tokenauth=\"true";

  private static Path dir;
  private static TestCertificates ca;
  private static KafkaServer kafka;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("bloom-kafka-tls-");
    ca = TestCertificates.newCa(dir, "kafka-ca");
    kafka =
        KafkaServer.start(
            KafkaServer.Options.secured(
                ca.issue("broker", "IP:127.0.0.1"),
                ca.certificate(),
                "plain-user",
                "plain-password"));
    kafka.addScramUser("SCRAM-SHA-512", "scram-user", AWKWARD_PASSWORD);
  }

  @AfterAll
  static void stop() {
    if (kafka != null) {
      kafka.close();
    }
  }

  @Test
  void scramOverTlsReadsTheTopicWithAPasswordThatTriesToEndTheJaasValue(
      KubernetesClient client, TestNamespace ns) throws Exception {
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    credentials(client, ns, "kafka-user", "scram-user", AWKWARD_PASSWORD, FILTER, "127.0.0.1");
    String topic = topic(20);

    KafkaChangesSpec spec =
        spec(kafka.saslSslBootstrap(), topic, "kafka-ca", "kafka-user", "SCRAM_SHA_512");
    assertThat(readAll(stream(spec, client, ns), 20)).hasSize(20);
  }

  @Test
  void plainOverTls(KubernetesClient client, TestNamespace ns) throws Exception {
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    credentials(client, ns, "plain", "plain-user", "plain-password", FILTER, "127.0.0.1");
    String topic = topic(5);
    KafkaChangesSpec spec = spec(kafka.saslSslBootstrap(), topic, "kafka-ca", "plain", "PLAIN");
    assertThat(readAll(stream(spec, client, ns), 5)).hasSize(5);
  }

  @Test
  void aWrongPasswordIsReportedInTheOperatorsWords(KubernetesClient client, TestNamespace ns)
      throws Exception {
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    credentials(client, ns, "wrong", "scram-user", "S3CRET-not-it", FILTER, "127.0.0.1");
    KafkaChangesSpec spec =
        spec(kafka.saslSslBootstrap(), topic(1), "kafka-ca", "wrong", "SCRAM_SHA_512");
    try (KafkaChangeStream stream = stream(spec, client, ns)) {
      assertThatThrownBy(() -> stream.read(StreamPosition.start()))
          .isInstanceOf(StreamException.class)
          .hasMessage(
              "a broker refused the SASL login: check the user name, password and mechanism of"
                  + " sasl.credentialsSecret")
          .hasMessageNotContaining("S3CRET");
    }
  }

  @Test
  void aBrokerCertificateTheCaDidNotSignIsRefused(KubernetesClient client, TestNamespace ns)
      throws Exception {
    TestCertificates other = TestCertificates.newCa(Files.createTempDirectory(dir, "other"), "x");
    caSecret(client, ns, "other-ca", other.certificatePem(), FILTER);
    for (String ca : new String[] {"other-ca", null}) { // another CA; the JVM's trust store
      KafkaChangesSpec spec = spec(kafka.sslBootstrap(), topic(1), ca, null, null);
      try (KafkaChangeStream stream = stream(spec, client, ns)) {
        assertThatThrownBy(() -> stream.read(StreamPosition.start()))
            .isInstanceOf(StreamException.class)
            .hasMessageStartingWith("the TLS handshake with a broker failed");
      }
    }
    // The right CA on the TLS listener without SASL reads.
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    String topic = topic(3);
    assertThat(
            readAll(
                stream(spec(kafka.sslBootstrap(), topic, "kafka-ca", null, null), client, ns), 3))
        .hasSize(3);
  }

  @Test
  void aClientCertificateFromASecretAuthenticatesTheStream(
      KubernetesClient client, TestNamespace ns) throws Exception {
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    TestCertificates.ServerCertificate cert = ca.issueClient("bloom-operator");
    secret(
        client,
        ns,
        "client-cert",
        Map.of(
            "tls.crt", Files.readString(cert.certificate()),
            "tls.key", Files.readString(cert.key())),
        FILTER,
        "127.0.0.1");
    String topic = topic(4);
    KafkaChangesSpec without = spec(kafka.mtlsBootstrap(), topic, "kafka-ca", null, null);
    try (KafkaChangeStream stream = stream(without, client, ns)) {
      assertThatThrownBy(() -> stream.read(StreamPosition.start()))
          .isInstanceOf(StreamException.class)
          .hasMessageStartingWith("the TLS handshake with a broker failed");
    }
    KafkaChangesSpec with = spec(kafka.mtlsBootstrap(), topic, "kafka-ca", null, null);
    with.getTls().setClientSecret("client-cert");
    assertThat(readAll(stream(with, client, ns), 4)).hasSize(4);

    // A key in another encoding is refused with the operator's words, naming no content.
    secret(
        client,
        ns,
        "sec1-key",
        Map.of(
            "tls.crt",
            Files.readString(cert.certificate()),
            "tls.key",
            "-----BEGIN EC PRIVATE KEY-----\nS3CRET\n-----END EC PRIVATE KEY-----\n"),
        FILTER,
        "127.0.0.1");
    with.getTls().setClientSecret("sec1-key");
    assertThatThrownBy(() -> stream(with, client, ns))
        .hasMessage(
            "Secret sec1-key key tls.key holds no unencrypted PKCS#8 private key in PEM"
                + " (-----BEGIN PRIVATE KEY-----)");
  }

  @Test
  void secretsMustAllowTheFilterAndEveryBootstrapHostBeforeAnythingIsSent(
      KubernetesClient client, TestNamespace ns) throws Exception {
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    credentials(client, ns, "elsewhere", "scram-user", AWKWARD_PASSWORD, FILTER, "kafka.corp");
    credentials(client, ns, "other-filter", "scram-user", AWKWARD_PASSWORD, "orders", "127.0.0.1");
    caSecret(client, ns, "ca-for-orders", ca.certificatePem(), "orders");
    // Refused in the constructor: no client exists yet, so nothing was sent anywhere.
    assertThatThrownBy(
            () ->
                stream(
                    spec(kafka.saslSslBootstrap(), "t", "kafka-ca", "elsewhere", "SCRAM_SHA_512"),
                    client,
                    ns))
        .isInstanceOf(StreamException.class)
        .hasMessageContaining("does not list that host; nothing was sent");
    assertThatThrownBy(
            () ->
                stream(
                    spec(
                        kafka.saslSslBootstrap(), "t", "kafka-ca", "other-filter", "SCRAM_SHA_512"),
                    client,
                    ns))
        .isInstanceOf(StreamException.class)
        .hasMessageContaining("does not allow BloomFilter products");
    assertThatThrownBy(
            () -> stream(spec(kafka.sslBootstrap(), "t", "ca-for-orders", null, null), client, ns))
        .isInstanceOf(StreamException.class)
        .hasMessageContaining("does not allow BloomFilter products");
  }

  @Test
  void unusableSecretValuesAreRefusedWithoutQuotingThem(KubernetesClient client, TestNamespace ns)
      throws Exception {
    caSecret(client, ns, "kafka-ca", ca.certificatePem(), FILTER);
    caSecret(client, ns, "not-pem", "S3CRET-garbage", FILTER);
    credentials(client, ns, "newline", "scram-user\nS3CRET", "x", FILTER, "127.0.0.1");
    assertThatThrownBy(
            () -> stream(spec(kafka.sslBootstrap(), "t", "not-pem", null, null), client, ns))
        .hasMessage("Secret not-pem key ca.crt holds no PEM certificate");
    assertThatThrownBy(
            () ->
                stream(
                    spec(kafka.saslSslBootstrap(), "t", "kafka-ca", "newline", "SCRAM_SHA_512"),
                    client,
                    ns))
        .hasMessage("Secret newline key username holds a control character");
    // PLAIN sends the password: never without TLS (the API server refuses it too).
    KafkaChangesSpec plain = spec(kafka.bootstrap(), "t", null, "newline", "PLAIN");
    plain.setTls(null);
    assertThatThrownBy(() -> stream(plain, client, ns))
        .hasMessage("sasl mechanism PLAIN sends the password: it needs tls");
  }

  @Test
  void theApiServerRefusesPlainWithoutTls(KubernetesClient client, TestNamespace ns) {
    String yaml =
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: plain, namespace: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 1000
          source: {inline: [a]}
          changes:
            kafka:
              bootstrapServers: ["kafka:9092"]
              topic: keys
              sasl: {mechanism: PLAIN, credentialsSecret: kafka-user}
        """
            .formatted(ns.name());
    assertThatThrownBy(() -> client.resource(yaml).create())
        .hasMessageContaining("sasl mechanism PLAIN sends the password: it needs tls");
  }

  private static KafkaChangesSpec spec(
      String bootstrap, String topic, String caSecret, String credentials, String mechanism) {
    KafkaChangesSpec spec = new KafkaChangesSpec();
    spec.setBootstrapServers(List.of(bootstrap));
    spec.setTopic(topic);
    KafkaTlsSpec tls = new KafkaTlsSpec();
    tls.setCaSecret(caSecret);
    spec.setTls(tls);
    if (credentials != null) {
      KafkaSaslSpec sasl = new KafkaSaslSpec();
      sasl.setMechanism(KafkaSaslSpec.Mechanism.valueOf(mechanism));
      sasl.setCredentialsSecret(credentials);
      spec.setSasl(sasl);
    }
    return spec;
  }

  private static KafkaChangeStream stream(
      KafkaChangesSpec spec, KubernetesClient client, TestNamespace ns) throws StreamException {
    return new KafkaChangeStream(
        spec,
        KeyType.STRING,
        StreamLimits.defaults(),
        LOOPBACK_ONLY,
        "test-" + UUID.randomUUID(),
        new SecretAccess(client, ns.name(), FILTER, SecretAccess.Mode.ANNOTATION));
  }

  private static String topic(int keys) {
    String topic = "keys-" + UUID.randomUUID();
    kafka.createTopic(topic, 1, Map.of());
    kafka.produce(topic, IntStream.range(0, keys).mapToObj(i -> "sku-" + i).toList());
    return topic;
  }

  private static List<String> readAll(KafkaChangeStream stream, int expected)
      throws StreamException {
    try (stream) {
      List<String> read = new ArrayList<>();
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      StreamPosition at = StreamPosition.start();
      while (read.size() < expected && System.nanoTime() < deadline) {
        ChangeStream.Batch batch = stream.read(at);
        read.addAll(batch.adds());
        at = batch.next();
      }
      return read;
    }
  }

  private static void caSecret(
      KubernetesClient client, TestNamespace ns, String name, String pem, String filter) {
    secret(client, ns, name, Map.of("ca.crt", pem), filter, null);
  }

  private static void credentials(
      KubernetesClient client,
      TestNamespace ns,
      String name,
      String user,
      String password,
      String filter,
      String host) {
    secret(client, ns, name, Map.of("username", user, "password", password), filter, host);
  }

  private static void secret(
      KubernetesClient client,
      TestNamespace ns,
      String name,
      Map<String, String> values,
      String filter,
      String host) {
    SecretBuilder secret =
        new SecretBuilder()
            .withNewMetadata()
            .withName(name)
            .addToAnnotations(SecretAccess.ALLOWED_FILTERS, filter)
            .endMetadata();
    if (host != null) {
      secret.editMetadata().addToAnnotations(SecretAccess.ALLOWED_HOSTS, host).endMetadata();
    }
    values.forEach(
        (k, v) ->
            secret.addToData(
                k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    client.secrets().inNamespace(ns.name()).resource(secret.build()).createOr(r -> r.update());
  }
}
