package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.cluster.RestartableCluster;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The operator's manifest watch keeps nothing (no informer cache to compare with after a relist):
 * when its API server comes back after etcd's history was compacted, the watch is answered 410
 * Gone, and a manifest deleted meanwhile must still be repaired. Two API servers on one etcd: the
 * operator talks to the first, the test to the second.
 */
@Tag("fault")
class ManifestWatchGoneFaultTest {

  private static final String NS = "watch-gone";

  @Test
  void aManifestDeletedWhileTheWatchWasGoneIsRepaired() {
    try (RestartableCluster cluster = RestartableCluster.start(2, 0)) {
      cluster.installCrds("crds");
      try (KubernetesClient admin = cluster.newClient(1);
          KubernetesClient operatorClient = cluster.newClient(0)) {
        admin
            .namespaces()
            .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
            .create();
        SnapshotFixtures.apply(
            admin,
            NS,
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: ids}
            spec:
              falsePositiveRate: 0.01
              source: {inline: [a, b, c]}
            """);
        Operator operator = OperatorMain.start(operatorClient, OperatorSettings.defaults());
        try {
          SnapshotFixtures.awaitStatus(
              admin, NS, "ids", f -> SnapshotFixtures.ready(f, "True", "Published"));
          var manifests = admin.configMaps().inNamespace(NS);
          String manifest = SnapshotNames.manifestName("ids");
          String before = manifests.withName(manifest).get().getMetadata().getUid();

          cluster.killApiServer(0);
          manifests.withName(manifest).delete();
          for (int i = 0; i < 20; i++) {
            manifests
                .resource(
                    new ConfigMapBuilder()
                        .withNewMetadata()
                        .withName("churn-" + i)
                        .endMetadata()
                        .withData(Map.of("i", Integer.toString(i)))
                        .build())
                .create();
          }
          cluster.compactEtcd();
          cluster.startApiServer(0);

          // Inline keys have no refresh: nothing but the manifest watch reconciles this filter.
          var repaired =
              await()
                  .atMost(Duration.ofSeconds(120))
                  .pollInterval(Duration.ofMillis(500))
                  .until(
                      () -> manifests.withName(manifest).get(),
                      cm -> cm != null && !cm.getMetadata().getUid().equals(before));
          assertThat(repaired.getMetadata().getOwnerReferences()).hasSize(1);
        } finally {
          operator.stop();
        }
      }
    }
  }
}
