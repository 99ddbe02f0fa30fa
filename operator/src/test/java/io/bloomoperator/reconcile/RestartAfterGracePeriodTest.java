package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.chunkNames;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Found by the fault suite (operator-kill): an operator that comes back after the previous
 * version's grace period ended, with a source change pending, retires the old version and publishes
 * the new one in the same reconcile. Retiring rewrites the manifest's annotations, so the publish
 * must not use the resourceVersion read before it (that failed with 409, Ready=False
 * ManifestConflict, and a retry after backoff, on every such restart).
 */
@RealKubernetes(crdDirs = "crds")
class RestartAfterGracePeriodTest {

  /** No minimum publish interval: as after any restart that came later than it. */
  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(java.util.Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")));

  @Test
  void retiringAndPublishingInOneReconcileDoesNotConflict(KubernetesClient client, TestNamespace ns)
      throws Exception {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("a"));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source: {configMap: {name: ids, key: ids}}
          snapshot: {retainPreviousFor: 2s}
        """);
    awaitStatus(client, ns.name(), "ids", f -> Long.valueOf(1).equals(f.getStatus().getVersion()));
    OPERATOR.stop();
    try {
      sourceConfigMap(client, ns.name(), "ids", "ids", keys("b"));
      OPERATOR.start();
      awaitStatus(
          client, ns.name(), "ids", f -> Long.valueOf(2).equals(f.getStatus().getVersion()));
    } finally {
      OPERATOR.stop();
    }
    // Version 1 is now the previous one, retained; the operator stays away past its grace period.
    assertThat(chunkNames(client, ns.name(), "ids")).contains(SnapshotNames.chunkName("ids", 1, 0));
    Thread.sleep(3_000);
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("c"));
    OPERATOR.start();

    awaitStatus(
        client,
        ns.name(),
        "ids",
        f -> Long.valueOf(3).equals(f.getStatus().getVersion()) && ready(f, "True", "Published"));
    assertThat(
            client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .map(e -> e.getReason())
                .toList())
        .contains("Published")
        .doesNotContain(Reasons.MANIFEST_CONFLICT);
    Manifest v3 = manifest(client, ns.name(), "ids");
    assertThat(chunkNames(client, ns.name(), "ids"))
        .doesNotContain(SnapshotNames.chunkName("ids", 1, 0))
        .contains(v3.chunks().get(0).name());
  }

  private static List<String> keys(String prefix) {
    return IntStream.range(0, 500).mapToObj(i -> prefix + i).toList();
  }
}
