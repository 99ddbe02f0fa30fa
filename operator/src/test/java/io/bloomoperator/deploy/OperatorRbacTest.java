package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.reconcile.OperatorSettings;
import io.bloomoperator.reconcile.ReadyCondition;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operator runs under exactly the ClusterRole of deploy/operator-rbac.yaml (impersonating
 * its ServiceAccount on an RBAC-enforcing API server) and still does its whole job.
 */
@RealKubernetes(crdDirs = "crds")
class OperatorRbacTest {

  private static final String SERVICE_ACCOUNT =
      "system:serviceaccount:bloom-operator:bloom-operator";

  @Test
  void deployedClusterRoleIsSufficient(KubernetesClient admin, TestNamespace ns,
      KubeCluster cluster) throws Exception {
    try (InputStream in = Files.newInputStream(RealKubernetesExtension.repoRoot()
        .resolve("deploy/namespace.yaml"))) {
      admin.load(in).serverSideApply();
    }
    try (InputStream in = Files.newInputStream(RealKubernetesExtension.repoRoot()
        .resolve("deploy/operator-rbac.yaml"))) {
      List<HasMetadata> rbac = admin.load(in).items();
      rbac.forEach(item -> admin.resource(item).forceConflicts().serverSideApply());
    }

    Config config = cluster.clientConfig();
    config.setImpersonateUsername(SERVICE_ACCOUNT);
    config.setImpersonateGroups("system:serviceaccounts",
        "system:serviceaccounts:bloom-operator", "system:authenticated");
    try (KubernetesClient asOperator = new KubernetesClientBuilder().withConfig(config).build()) {
      // RBAC is really enforced for this identity.
      org.assertj.core.api.Assertions.assertThatThrownBy(() ->
          asOperator.secrets().inNamespace(ns.name()).list())
          .isInstanceOfSatisfying(KubernetesClientException.class,
              e -> assertThat(e.getCode()).isEqualTo(403));

      // As deployed: with leader election on a Lease in the operator's namespace.
      Operator operator = OperatorMain.start(asOperator, OperatorSettings.defaults(),
          new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
          new RuntimeOptions(0, true, "bloom-operator", "rbac-test", false));
      try {
        admin.configMaps().inNamespace(ns.name()).resource(new ConfigMapBuilder()
            .withNewMetadata().withName("ids").endMetadata()
            .withData(Map.of("ids", "a\nb\nc\n")).build()).create();
        admin.secrets().inNamespace(ns.name()).resource(new SecretBuilder()
            .withNewMetadata().withName("secret-ids")
            .addToAnnotations("bloomoperator.io/allowed-filters", "from-secret").endMetadata()
            .withStringData(Map.of("ids", "x\ny\n")).build()).create();
        for (String yaml : List.of("""
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: from-configmap}
            spec:
              falsePositiveRate: 0.01
              source: {configMap: {name: ids, key: ids}}
              refreshInterval: 10s
              snapshot: {chunkSizeBytes: 1024, retainPreviousFor: 1s}
            """, """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: from-secret}
            spec:
              falsePositiveRate: 0.01
              source: {secret: {name: secret-ids, key: ids}}
            """)) {
          admin.resources(BloomFilter.class).inNamespace(ns.name())
              .resource(Serialization.unmarshal(yaml, BloomFilter.class)).create();
        }
        awaitReady(admin, ns, "from-configmap", 1);
        awaitReady(admin, ns, "from-secret", 1);

        // A new version, the janitor's retirement of the old one, and events all need writes.
        admin.configMaps().inNamespace(ns.name()).withName("ids")
            .edit(cm -> new ConfigMapBuilder(cm).withData(Map.of("ids", "a\nb\nc\nd\n"))
                .build());
        awaitReady(admin, ns, "from-configmap", 2);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
            assertThat(admin.configMaps().inNamespace(ns.name())
                .withLabelSelector(SnapshotNames.chunkSelector("from-configmap", 1)).list()
                .getItems()).isEmpty());
        assertThat(admin.v1().events().inNamespace(ns.name()).list().getItems())
            .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Published"));
        var lease = admin.leases().inNamespace("bloom-operator")
            .withName(RuntimeOptions.LEASE_NAME).get().getSpec();
        assertThat(lease.getHolderIdentity()).isEqualTo("rbac-test");
        // The leader must be able to renew, or it loses the lease (and, in a pod, exits).
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() ->
            assertThat(admin.leases().inNamespace("bloom-operator")
                .withName(RuntimeOptions.LEASE_NAME).get().getSpec().getRenewTime())
                .isAfter(lease.getRenewTime()));
      } finally {
        operator.stop();
      }
    }
  }

  private static void awaitReady(KubernetesClient admin, TestNamespace ns, String name,
      long version) {
    await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
      BloomFilter filter = admin.resources(BloomFilter.class).inNamespace(ns.name())
          .withName(name).get();
      assertThat(filter.getStatus()).isNotNull();
      assertThat(ReadyCondition.of(filter)).hasValueSatisfying(c -> {
        assertThat(c.getStatus()).as(c.getMessage()).isEqualTo("True");
      });
      assertThat(filter.getStatus().getVersion()).isEqualTo(version);
    });
  }
}
