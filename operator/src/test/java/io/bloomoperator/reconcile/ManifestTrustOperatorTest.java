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
import io.bloomoperator.snapshot.ManifestCopy;
import io.bloomoperator.snapshot.ManifestSignature;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Audit items 5 and 6: whoever may update ConfigMaps edits the published manifest (a createdAt in
 * 2999) or restores a genuinely signed old version with the current build record. The operator
 * builds on, copies and waits for nothing it did not verify against its own records: it replaces
 * such a manifest with a new signed version, promptly, and says so in a Warning event.
 */
@RealKubernetes(crdDirs = "crds", controllerManager = true)
class ManifestTrustOperatorTest {

  private static final String SECRET = "bloom-signing";
  private static final Duration READY = Duration.ofSeconds(30);
  private static final KeyPair KEY = Ed25519Keys.generate();
  private static final String OPERATOR_NS =
      "bloom-trust-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      SigningOperator.signingWith(new SigningKeySecret(OPERATOR_NS, SECRET), KEY);

  @Test
  void createdAtInTheFarFutureIsNeitherWaitedForNorCopied(KubernetesClient client, TestNamespace ns)
      throws Exception {
    applyInline(client, ns.name(), keys("v1", 100));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));

    // Someone with ConfigMap update rights: createdAt 2999. They cannot sign, so the signature
    // goes (as on a manifest published before signing was enabled).
    ConfigMap published = manifestConfigMap(client, ns.name());
    Manifest edited =
        ManifestCopy.of(Manifest.fromJson(SnapshotConfigMaps.manifestJson(published)))
            .createdAt("2999-01-01T00:00:00Z")
            .build();
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("ids"))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .withData(
                        SnapshotConfigMaps.manifest(ns.name(), "ids", edited.toJson(), null, null)
                            .getData())
                    .build());

    // The next spec change is published promptly, with a sane createdAt and a valid signature.
    Instant changed = Instant.now();
    List<String> v2Keys = keys("v2", 100);
    SnapshotFixtures.mergePatch(
        client, ns.name(), "ids", Map.of("spec", Map.of("source", Map.of("inline", v2Keys))));
    await()
        .atMost(READY)
        .untilAsserted(
            () -> {
              Manifest now =
                  Manifest.fromJson(
                      SnapshotConfigMaps.manifestJson(manifestConfigMap(client, ns.name())));
              assertThat(now.version()).isGreaterThan(1);
              assertThat(now.created()).isBefore(Instant.now().plus(Duration.ofMinutes(2)));
              assertThat(now.created()).isAfter(changed.minus(Duration.ofMinutes(1)));
            });
    try (LiveBloomFilter<String> reader =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .trustedKey(KEY.getPublic())
            .start()) {
      assertThat(reader.awaitReady(READY)).isTrue();
      await().atMost(READY).until(() -> v2Keys.stream().allMatch(reader::mightContain));
    }
    BloomFilter filter = awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    assertThat(filter.getStatus().getVersion()).isGreaterThan(1L);
    assertThat(signatureKeyId(manifestConfigMap(client, ns.name())))
        .isEqualTo(Ed25519Keys.keyId(KEY.getPublic()));
    assertNotOursWarningWithoutContent(client, ns.name(), "2999");
  }

  @Test
  void restoredOldSignedVersionIsReplaced(KubernetesClient client, TestNamespace ns)
      throws Exception {
    List<String> revoked = keys("revoked", 50);
    List<String> kept = keys("kept", 100);
    applyInline(client, ns.name(), Stream.concat(kept.stream(), revoked.stream()).toList());
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    // What an attacker keeps of version 1: its signed manifest and its chunks.
    ConfigMap v1Manifest = manifestConfigMap(client, ns.name());
    Manifest v1 = Manifest.fromJson(SnapshotConfigMaps.manifestJson(v1Manifest));
    List<ConfigMap> v1Chunks = new ArrayList<>();
    for (String name : SnapshotFixtures.namedChunks(v1)) {
      v1Chunks.add(client.configMaps().inNamespace(ns.name()).withName(name).get());
    }

    // The tokens are revoked: version 2 no longer has them.
    SnapshotFixtures.mergePatch(
        client, ns.name(), "ids", Map.of("spec", Map.of("source", Map.of("inline", kept))));
    awaitStatus(
        client,
        ns.name(),
        "ids",
        f -> ready(f, "True", "Published") && Long.valueOf(2).equals(f.getStatus().getVersion()));

    // Replay: version 1's chunks and its genuinely signed manifest, with version 2's build record
    // (so the operator's bookkeeping says "up to date").
    for (ConfigMap chunk : v1Chunks) {
      if (client.configMaps().inNamespace(ns.name()).withName(chunk.getMetadata().getName()).get()
          == null) {
        ConfigMap copy =
            new ConfigMapBuilder(chunk)
                .editMetadata()
                .withResourceVersion(null)
                .withUid(null)
                .withCreationTimestamp(null)
                .withManagedFields(List.of())
                .endMetadata()
                .build();
        client.configMaps().inNamespace(ns.name()).resource(copy).create();
      }
    }
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("ids"))
        .edit(cm -> new ConfigMapBuilder(cm).withData(new HashMap<>(v1Manifest.getData())).build());

    // The operator notices the manifest is not what it last published and publishes anew.
    BloomFilter republished =
        awaitStatus(
            client,
            ns.name(),
            "ids",
            f -> f.getStatus().getVersion() != null && f.getStatus().getVersion() >= 3);
    assertThat(republished.getStatus().getVersion()).isEqualTo(3L);
    Manifest now =
        Manifest.fromJson(SnapshotConfigMaps.manifestJson(manifestConfigMap(client, ns.name())));
    assertThat(now.version()).isEqualTo(3);
    assertThat(now.chained()).as("a whole new base, not a delta on the replayed chain").isFalse();

    // A reader that starts now serves the current keys, not the revoked ones.
    try (LiveBloomFilter<String> restarted =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .trustedKey(KEY.getPublic())
            .start()) {
      assertThat(restarted.awaitReady(READY)).isTrue();
      assertThat(restarted.currentVersion()).isEqualTo(3);
      assertThat(kept).allMatch(restarted::mightContain);
      // 1 % false positives: a handful of the 50 revoked keys may still answer "maybe".
      assertThat(revoked.stream().filter(restarted::mightContain).count()).isLessThan(8);
    }
    assertNotOursWarningWithoutContent(client, ns.name(), v1.sha256());
  }

  // ------------------------------------------------------------------ helpers

  private static void assertNotOursWarningWithoutContent(
      KubernetesClient client, String namespace, String forbidden) {
    await()
        .atMost(READY)
        .untilAsserted(
            () -> {
              List<Event> warnings =
                  client.v1().events().inNamespace(namespace).list().getItems().stream()
                      .filter(e -> "ManifestNotOurs".equals(e.getReason()))
                      .toList();
              assertThat(warnings).isNotEmpty();
              assertThat(warnings)
                  .allSatisfy(
                      e -> {
                        assertThat(e.getType()).isEqualTo("Warning");
                        assertThat(e.getMessage()).doesNotContain(forbidden);
                      });
            });
  }

  private static ConfigMap manifestConfigMap(KubernetesClient client, String namespace) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName("ids"))
        .get();
  }

  private static String signatureKeyId(ConfigMap manifest) throws Exception {
    String data = SnapshotConfigMaps.signatureData(manifest);
    return data == null ? null : ManifestSignature.fromData(data).keyId();
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
