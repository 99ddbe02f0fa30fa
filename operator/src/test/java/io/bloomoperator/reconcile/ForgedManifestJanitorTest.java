package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.namedChunks;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestCopy;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Whoever may edit ConfigMaps replaces the published manifest with one naming another version while
 * the filter's source is failing (so no new version replaces it). The chunk clean-up acts only on a
 * manifest the operator verified as its own: it must not delete the chunks of the genuine version
 * because a forged manifest does not name them, or restoring the genuine manifest would find them
 * gone.
 */
@RealKubernetes(crdDirs = "crds")
class ForgedManifestJanitorTest {

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  @Test
  void aForgedManifestDoesNotGetTheGenuineChunksDeleted(KubernetesClient client, TestNamespace ns)
      throws Exception {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a, b, c]
        """);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    ConfigMap genuine = manifestConfigMap(client, ns.name());
    Manifest v1 = Manifest.fromJson(SnapshotConfigMaps.manifestJson(genuine));
    List<String> v1Chunks = namedChunks(v1);
    assertThat(existing(client, ns.name(), v1Chunks)).containsExactlyElementsOf(v1Chunks);

    // The source breaks: no new version will replace whatever the manifest says.
    Map<String, Object> source = new HashMap<>();
    source.put("inline", null);
    source.put("configMap", Map.of("name", "gone", "key", "ids"));
    SnapshotFixtures.mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", source)));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "False", Reasons.SOURCE_NOT_FOUND));

    // The forged manifest names version 99 (the same refs, so it parses).
    Manifest forged = ManifestCopy.of(v1).version(99).build();
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("ids"))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .withData(
                        SnapshotConfigMaps.manifest(ns.name(), "ids", forged.toJson(), null, null)
                            .getData())
                    .build());

    // The operator has looked at it (it warns only after its clean-up step) ...
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                    .anyMatch(e -> "ManifestNotOurs".equals(e.getReason())));
    // ... and keeps doing so while the source fails; the genuine chunks all stay.
    await()
        .during(Duration.ofSeconds(10))
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(
            () ->
                assertThat(existing(client, ns.name(), v1Chunks))
                    .as("chunks of the genuine version 1")
                    .containsExactlyElementsOf(v1Chunks));
  }

  private static List<String> existing(KubernetesClient client, String namespace, List<String> n) {
    return n.stream()
        .filter(name -> client.configMaps().inNamespace(namespace).withName(name).get() != null)
        .toList();
  }

  private static ConfigMap manifestConfigMap(KubernetesClient client, String namespace) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName("ids"))
        .get();
  }
}
