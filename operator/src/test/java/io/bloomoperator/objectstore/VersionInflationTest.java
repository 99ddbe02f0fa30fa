package io.bloomoperator.objectstore;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestCopy;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.testing.operator.TestOperators;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * Audit finding M1 on real servers (kube-apiserver, versitygw): whoever may edit ConfigMaps in the
 * namespace sets the published manifest's version to 10^18-1 or 2*10^18. The operator keeps its own
 * numbering (the next version is the status's + 1, not the forged one + 1, which no reader report
 * or store key parser would accept), reader reports of what it publishes are counted, and deleting
 * the filter removes every object it wrote to the store.
 */
@RealKubernetes(crdDirs = "crds")
class VersionInflationTest {

  private static final String OPERATOR_NAMESPACE = "bloom-m1-operator";
  private static final String PREFIX = "bloom";
  private static final Duration WAIT = Duration.ofSeconds(60);

  private static final S3Server SERVER = S3Server.start();

  @RegisterExtension
  @Order(1)
  static final InProcessOperator OPERATOR =
      TestOperators.withStore(SERVER, OPERATOR_NAMESPACE)
          .setting("BLOOM_MIN_PUBLISH_INTERVAL", "0")
          .build()
          .withReaderSettings(
              new ReaderSettings(
                  Duration.ofSeconds(1), 200, Duration.ofMinutes(10), Duration.ofMinutes(1)));

  @AfterAll
  static void stopServer() {
    SERVER.close();
  }

  @Test
  void aManifestClaimingTheLastVersionDoesNotMoveNumbering(
      KubernetesClient client, TestNamespace ns) throws Exception {
    attack(client, ns, 999_999_999_999_999_999L, true);
  }

  @Test
  void aManifestClaimingTwoTimesTenToThe18DoesNotMoveNumbering(
      KubernetesClient client, TestNamespace ns) throws Exception {
    attack(client, ns, 2_000_000_000_000_000_000L, false);
  }

  private static void attack(
      KubernetesClient client, TestNamespace ns, long forgedVersion, boolean parses)
      throws Exception {
    String storeName = "m1-" + System.nanoTime() % 1_000_000;
    String bucket = SERVER.createBucket("m1");
    TestStores.store(storeName)
        .on(SERVER, bucket)
        .allowing(ns.name())
        .with("prefix: " + PREFIX)
        .create(client);
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: victim}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a, b, c]
          snapshot: {store: %s}
        """
            .formatted(storeName));
    BloomFilter first =
        awaitStatus(client, ns.name(), "victim", f -> ready(f, "True", Reasons.PUBLISHED));
    long v1 = first.getStatus().getVersion();
    Manifest genuine = manifest(client, ns.name(), "victim");
    assertThat(genuine.version()).isEqualTo(v1);
    assertThat(genuine.store()).isEqualTo(storeName);

    // The attack: one ConfigMap update, the manifest's version set to the forged number.
    String forged = ManifestCopy.of(genuine).version(forgedVersion).build().toJson();
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("victim"))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .withData(
                        SnapshotConfigMaps.manifest(ns.name(), "victim", forged, null, null)
                            .getData())
                    .build());

    // The operator replaces it by a version of its own numbering.
    BloomFilter republished =
        awaitStatus(
            client,
            ns.name(),
            "victim",
            f -> f.getStatus().getVersion() != null && f.getStatus().getVersion() != v1);
    long v2 = republished.getStatus().getVersion();
    System.out.printf(
        "VersionInflationTest: forged manifest version %d -> next version published %d%n",
        forgedVersion, v2);
    assertThat(v2).as("the operator's own numbering").isEqualTo(v1 + 1);
    awaitStatus(client, ns.name(), "victim", f -> ready(f, "True", Reasons.PUBLISHED));
    assertThat(manifest(client, ns.name(), "victim").version()).isEqualTo(v2);
    if (parses) {
      // A forged manifest that parses keeps the foreign-manifest handling: a warning event.
      assertThat(
              client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                  .anyMatch(e -> "ManifestNotOurs".equals(e.getReason())))
          .isTrue();
    }

    // A reader of the published version reports it and is counted.
    Pod pod = ReaderPods.pod(client, ns.name(), "app-0");
    ReaderPods.create(
        client,
        ReaderPods.report(
            ns.name(), pod.getMetadata().getName(), pod.getMetadata().getUid(), "victim", v2));
    ReaderStatus readers =
        await()
            .atMost(WAIT)
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> readers(client, ns.name()),
                r -> r != null && r.getCurrent() != null && r.getCurrent() == 1);
    assertThat(readers.getVersion()).isEqualTo(v2);
    assertThat(readers.getServing()).isEqualTo("1/1");

    // Deleting the filter removes every object it wrote to the store.
    String directory = StoreObjectKeys.filterDirectory(PREFIX, ns.name(), "victim");
    assertThat(objects(bucket, directory)).as("objects of the published version").isNotEmpty();
    client.resources(BloomFilter.class).inNamespace(ns.name()).withName("victim").delete();
    await()
        .atMost(WAIT)
        .until(
            () ->
                client.resources(BloomFilter.class).inNamespace(ns.name()).withName("victim").get()
                    == null);
    assertThat(objects(bucket, directory)).as("objects left after the finalizer").isEmpty();
  }

  private static ReaderStatus readers(KubernetesClient client, String namespace) {
    BloomFilter filter =
        client.resources(BloomFilter.class).inNamespace(namespace).withName("victim").get();
    return filter == null || filter.getStatus() == null ? null : filter.getStatus().getReaders();
  }

  private static List<String> objects(String bucket, String directory) {
    try (S3Client s3 = SERVER.client()) {
      return s3.listObjectsV2Paginator(b -> b.bucket(bucket).prefix(directory)).contents().stream()
          .map(S3Object::key)
          .toList();
    }
  }
}
