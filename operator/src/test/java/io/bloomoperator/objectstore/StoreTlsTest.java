package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.testing.operator.TestStores.filter;
import static io.bloomoperator.testing.operator.TestStores.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomStore;
import io.bloomoperator.api.BloomStoreSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.cli.BloomCli;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.storeread.RecordingListener;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.testing.servers.TestCertificates;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A store behind a private CA (versitygw serving HTTPS with a certificate the test's own CA signs):
 * the BloomStore names the CA bundle, the operator publishes and readers given the same bundle
 * load; without the CA, with another CA or with a certificate that does not match the endpoint,
 * nothing is published, the published version keeps serving, and the store and its filters say why
 * in fixed texts.
 */
@RealKubernetes(crdDirs = "crds")
class StoreTlsTest {

  private static final String OPERATOR_NAMESPACE = "bloom-s3tls-operator";
  private static final String CA_CONFIGMAP = "store-ca";
  private static final String CA_SECRET = "store-ca-secret";
  private static final String OTHER_CA_CONFIGMAP = "other-ca";
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static final Path DIR = tempDir();
  private static final TestCertificates CA = TestCertificates.newCa(DIR, "store-ca");
  private static final TestCertificates OTHER_CA = TestCertificates.newCa(DIR, "other-ca");

  /** Its certificate names 127.0.0.1 only: {@code https://localhost:<port>} does not match. */
  private static final S3Server SERVER =
      S3Server.startTls(new S3Server.Tls(CA.issue("store", "IP:127.0.0.1"), CA.certificate()));

  private static final AtomicInteger STORES = new AtomicInteger();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_HTTP_ALLOW", TestOperators.LOOPBACK + ", ::1/128")
          .build()
          .beforeStart(StoreTlsTest::caBundles);

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  private static Path tempDir() {
    try {
      return Files.createTempDirectory("bloom-tls-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The CA bundles, in the operator's namespace (where the fixture put the credentials). */
  private static void caBundles(KubernetesClient client) {
    caConfigMap(client, CA_CONFIGMAP, CA.certificatePem());
    caConfigMap(client, OTHER_CA_CONFIGMAP, OTHER_CA.certificatePem());
    caSecret(client, CA.certificatePem());
  }

  private static void caConfigMap(KubernetesClient client, String name, String pem) {
    client
        .configMaps()
        .inNamespace(OPERATOR_NAMESPACE)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withData(Map.of(BloomStoreSpec.CaBundle.DEFAULT_KEY, pem))
                .build())
        .createOr(c -> c.update());
  }

  private static void caSecret(KubernetesClient client, String pem) {
    client
        .secrets()
        .inNamespace(OPERATOR_NAMESPACE)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(CA_SECRET)
                .endMetadata()
                .withStringData(Map.of(BloomStoreSpec.CaBundle.DEFAULT_KEY, pem))
                .build())
        .createOr(c -> c.update());
  }

  private record Store(String name, String bucket) {}

  /** A store on its own bucket; {@code tls}: its spec.tls line, or empty for none. */
  private static Store store(KubernetesClient client, String allowed, String tls) {
    String name = "tls-" + STORES.incrementAndGet() + "-" + System.nanoTime() % 100000;
    String bucket = SERVER.createBucket("tls");
    TestStores.store(name).on(SERVER, bucket).allowing(allowed).with(tls).create(client);
    return new Store(name, bucket);
  }

  private static String caFrom(String kind, String name) {
    return "tls: {caBundle: {" + kind + ": " + name + "}}";
  }

  private static Condition storeReady(KubernetesClient client, String name) {
    BloomStore store = client.resources(BloomStore.class).withName(name).get();
    return store == null || store.getStatus() == null || store.getStatus().getConditions() == null
        ? null
        : store.getStatus().getConditions().stream()
            .filter(c -> "Ready".equals(c.getType()))
            .findFirst()
            .orElse(null);
  }

  private static void awaitStoreReady(
      KubernetesClient client, String name, String status, String messagePart) {
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              Condition ready = storeReady(client, name);
              assertThat(ready).isNotNull();
              assertThat(ready.getObservedGeneration())
                  .isEqualTo(
                      client
                          .resources(BloomStore.class)
                          .withName(name)
                          .get()
                          .getMetadata()
                          .getGeneration());
              assertThat(ready.getStatus()).isEqualTo(status);
              assertThat(ready.getMessage()).contains(messagePart);
            });
  }

  private static int objectCount(Store store, String namespace, String filter) {
    try (S3Client s3 = SERVER.client()) {
      return s3.listObjectsV2(
              b ->
                  b.bucket(store.bucket())
                      .prefix(StoreObjectKeys.filterDirectory("bloom", namespace, filter)))
          .contents()
          .size();
    }
  }

  private static S3ObjectStore.Builder reader(Store store) {
    return S3ObjectStore.builder()
        .endpoint(SERVER.endpoint())
        .bucket(store.bucket())
        .region(S3Server.REGION)
        .credentials(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create(SERVER.accessKey(), SERVER.secretKey())));
  }

  @Test
  void aStoreBehindAPrivateCaPublishesAndReadersGivenTheCaLoad(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    Store store = store(client, ns.name(), caFrom("configMapName", CA_CONFIGMAP));
    awaitStoreReady(client, store.name(), "True", "answers");
    List<String> keys = keys(500, "sku");
    apply(client, ns.name(), filter("f", store.name(), keys));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(objectCount(store, ns.name(), "f")).isPositive();

    RecordingListener trusted = new RecordingListener();
    try (S3ObjectStore s3 = reader(store).caCertificatesFile(CA.certificate()).build();
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(client, ns.name(), "f", LiveKeyType.STRING)
                .objectStore(store.name(), s3)
                .listener(trusted)
                .start()) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      assertThat(keys).allMatch(live::mightContain);
      assertThat(trusted.failures).isEmpty();
    }

    // A reader left with the JVM's default CAs does not trust the store, and says so.
    RecordingListener untrusted = new RecordingListener();
    try (S3ObjectStore s3 = reader(store).build();
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(client, ns.name(), "f", LiveKeyType.STRING)
                .objectStore(store.name(), s3)
                .listener(untrusted)
                .start()) {
      Exception failure = untrusted.awaitFailure(WAIT);
      assertThat(LoadFailureReason.of(failure)).isEqualTo(LoadFailureReason.STORE_UNAVAILABLE);
      assertThat(live.currentVersion()).isEqualTo(LiveBloomFilter.NO_VERSION);
    }

    // The CLI: the same bundle with --store-ca-file; without it the store is not trusted.
    Path id = Files.writeString(DIR.resolve("cli-id"), SERVER.accessKey());
    Path secret = Files.writeString(DIR.resolve("cli-secret"), SERVER.secretKey());
    List<String> query =
        List.of(
            "query",
            "-n",
            ns.name(),
            "--name",
            "f",
            "--kubeconfig",
            cluster.kubeconfig().toString(),
            "--store-endpoint",
            SERVER.endpoint().toString(),
            "--store-bucket",
            store.bucket(),
            "--store-access-key-file",
            id.toString(),
            "--store-secret-key-file",
            secret.toString(),
            "sku-7");
    List<String> withCa = new java.util.ArrayList<>(query);
    withCa.addAll(1, List.of("--store-ca-file", CA.certificate().toString()));
    String[] ran = cli(withCa);
    assertThat(ran[0]).as(ran[1]).isEqualTo("0");
    assertThat(ran[1]).contains("sku-7\tmaybe-present");
    assertThat(cli(query)[0]).as("the JVM's CAs do not know the store's").isNotEqualTo("0");
  }

  /** Runs the CLI in-process: exit code, then stdout and stderr. */
  private static String[] cli(List<String> args) {
    java.io.StringWriter out = new java.io.StringWriter();
    java.io.StringWriter err = new java.io.StringWriter();
    int exit =
        BloomCli.commandLine(
                new java.io.ByteArrayInputStream(new byte[0]),
                new java.io.PrintWriter(out, true),
                new java.io.PrintWriter(err, true))
            .execute(args.toArray(String[]::new));
    return new String[] {String.valueOf(exit), out + "\n" + err};
  }

  @Test
  void withoutTheRightCaNothingIsPublishedAndThePublishedVersionKeepsServing(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Store store = store(client, ns.name(), caFrom("secretName", CA_SECRET));
    apply(client, ns.name(), filter("f", store.name(), keys(300, "v1")));
    awaitStatus(client, ns.name(), "f", f -> ready(f, "True", Reasons.PUBLISHED));
    Manifest first = manifest(client, ns.name(), "f");
    int objects = objectCount(store, ns.name(), "f");

    // Each step changes the store, then the filter's keys (a reconcile now, not after the
    // backoff); the texts alternate so that every step is judged on a fresh status.
    // Another CA: the store's certificate does not verify.
    setTls(client, store, caFrom("configMapName", OTHER_CA_CONFIGMAP));
    assertRefused(client, ns, store, first, objects, StoreFailures.TLS);

    // A CA bundle that is not there.
    setTls(client, store, caFrom("configMapName", "no-such-ca"));
    assertRefused(client, ns, store, first, objects, "CA bundle ConfigMap missing");

    // No CA at all: the JVM's default CAs do not know the private one.
    setTls(client, store, null);
    assertRefused(client, ns, store, first, objects, StoreFailures.TLS);

    // A bundle that is no certificate.
    caConfigMap(client, "not-a-ca", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n");
    setTls(client, store, caFrom("configMapName", "not-a-ca"));
    assertRefused(client, ns, store, first, objects, "CA bundle is not a PEM certificate bundle");

    // The right CA, but the certificate names 127.0.0.1, not localhost.
    client
        .resources(BloomStore.class)
        .withName(store.name())
        .edit(
            s -> {
              s.getSpec().setEndpoint("https://localhost:" + SERVER.port());
              s.getSpec().setTls(tls(CA_SECRET));
              return s;
            });
    assertRefused(client, ns, store, first, objects, StoreFailures.TLS);

    // Fixed: published on the next retry.
    client
        .resources(BloomStore.class)
        .withName(store.name())
        .edit(
            s -> {
              s.getSpec().setEndpoint(URI.create("https://127.0.0.1:" + SERVER.port()).toString());
              return s;
            });
    awaitStoreReady(client, store.name(), "True", "answers");
    await()
        .atMost(Duration.ofSeconds(90))
        .until(
            () -> manifest(client, ns.name(), "f").version(), version -> version > first.version());
  }

  private static BloomStoreSpec.Tls tls(String secretName) {
    BloomStoreSpec.CaBundle bundle = new BloomStoreSpec.CaBundle();
    bundle.setSecretName(secretName);
    BloomStoreSpec.Tls tls = new BloomStoreSpec.Tls();
    tls.setCaBundle(bundle);
    return tls;
  }

  /** Sets the store's spec.tls from a YAML line ("tls: {...}"), or removes it (null). */
  private static void setTls(KubernetesClient client, Store store, String line) {
    BloomStoreSpec.Tls tls =
        line == null
            ? null
            : io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                    "spec:\n  " + line + "\n", BloomStoreTlsHolder.class)
                .spec
                .getTls();
    client
        .resources(BloomStore.class)
        .withName(store.name())
        .edit(
            s -> {
              s.getSpec().setTls(tls);
              return s;
            });
  }

  /** For reading a spec.tls line. */
  static final class BloomStoreTlsHolder {
    public BloomStoreSpec spec;
  }

  private static void assertRefused(
      KubernetesClient client,
      TestNamespace ns,
      Store store,
      Manifest first,
      int objects,
      String why)
      throws Exception {
    awaitStoreReady(client, store.name(), "False", why);
    assertThat(storeReady(client, store.name()).getReason()).isEqualTo(Reasons.STORE_UNAVAILABLE);
    mergePatch(
        client,
        ns.name(),
        "f",
        Map.of("spec", Map.of("source", Map.of("inline", keys(300, "v" + System.nanoTime())))));
    // The filter's next attempt, whenever its backoff makes it.
    var refused =
        await()
            .atMost(Duration.ofSeconds(90))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () ->
                    client
                        .resources(io.bloomoperator.api.BloomFilter.class)
                        .inNamespace(ns.name())
                        .withName("f")
                        .get(),
                f ->
                    ready(f, "False", Reasons.STORE_UNAVAILABLE)
                        && ReadyCondition.of(f).orElseThrow().getMessage().contains(why));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains(store.name())
        .doesNotContain("127.0.0.1")
        .doesNotContain("localhost")
        .doesNotContain(store.bucket())
        .doesNotContain("BEGIN");
    assertThat(manifest(client, ns.name(), "f"))
        .as("the published version keeps serving")
        .isEqualTo(first);
    assertThat(objectCount(store, ns.name(), "f")).as("nothing was written").isEqualTo(objects);
  }
}
