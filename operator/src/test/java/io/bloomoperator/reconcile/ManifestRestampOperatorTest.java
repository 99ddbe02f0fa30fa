package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Readers may refuse manifests older than a maximum age (their defence against a replayed old
 * signed version when they start): the operator re-stamps an unchanged version, re-signed, so that
 * it stays acceptable without a new version or a chunk written.
 */
@RealKubernetes(crdDirs = "crds", controllerManager = true)
class ManifestRestampOperatorTest {

  private static final String SECRET = "bloom-signing";
  private static final Duration READY = Duration.ofSeconds(30);
  private static final KeyPair KEY = Ed25519Keys.generate();
  private static final Duration RESTAMP = Duration.ofSeconds(3);
  private static final String OPERATOR_NS =
      "bloom-trust-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      SigningOperator.signingWith(new SigningKeySecret(OPERATOR_NS, SECRET, RESTAMP), KEY);

  @Test
  void unchangedVersionIsReStampedSoReadersWithAMaximumAgeStillLoadIt(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> ids = keys("id", 100);
    applyInline(client, ns.name(), ids);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    Manifest first = manifest(client, ns.name());
    List<String> chunksBefore = SnapshotFixtures.chunkNames(client, ns.name(), "ids");

    try (LiveBloomFilter<String> running =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .trustedKey(KEY.getPublic())
            .maxManifestAge(Duration.ofSeconds(8))
            .start()) {
      assertThat(running.awaitReady(READY)).isTrue();
      long loads = running.loads();

      // Well past the maximum age of the first stamp: the version is the same, its stamp is not.
      Instant deadline = first.created().plus(Duration.ofSeconds(12));
      await()
          .pollDelay(Duration.between(Instant.now(), deadline))
          .atMost(READY)
          .untilAsserted(
              () -> {
                Manifest now = manifest(client, ns.name());
                assertThat(now.version()).isEqualTo(first.version());
                assertThat(now.sha256()).isEqualTo(first.sha256());
                assertThat(now.created()).isAfter(Instant.now().minus(Duration.ofSeconds(8)));
              });
      assertThat(SnapshotFixtures.chunkNames(client, ns.name(), "ids"))
          .containsExactlyInAnyOrderElementsOf(chunksBefore);
      assertThat(running.currentVersion()).isEqualTo(first.version());
      assertThat(running.loads()).as("a re-stamp is not a new version to load").isEqualTo(loads);

      try (LiveBloomFilter<String> started =
          BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
              .trustedKey(KEY.getPublic())
              .maxManifestAge(Duration.ofSeconds(8))
              .start()) {
        assertThat(started.awaitReady(READY)).isTrue();
        assertThat(ids).allMatch(started::mightContain);
      }
    }
    BloomFilter filter = awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    assertThat(filter.getStatus().getVersion()).isEqualTo(first.version());
  }

  private static Manifest manifest(KubernetesClient client, String namespace) throws Exception {
    return Manifest.fromJson(
        SnapshotConfigMaps.manifestJson(
            client
                .configMaps()
                .inNamespace(namespace)
                .withName(SnapshotNames.manifestName("ids"))
                .get()));
  }

  private static void applyInline(KubernetesClient client, String namespace, List<String> ids) {
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [%s]
        """
            .formatted(String.join(", ", ids)));
  }

  private static List<String> keys(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }
}
