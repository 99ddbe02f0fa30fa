package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The operator runs under exactly the RBAC objects of the cluster-wide install (kubectl kustomize
 * deploy/; impersonating its ServiceAccount on an RBAC-enforcing API server) and still does its
 * whole job.
 */
@RealKubernetes(crdDirs = "crds")
class OperatorRbacTest {

  @Test
  void deployedClusterRoleIsSufficient(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    InstallManifests.render(cluster, admin, RealKubernetesExtension.repoRoot().resolve("deploy"))
        .applyIdentityAndRbac(admin);
    try (KubernetesClient asOperator = InstallManifests.asOperator(cluster)) {
      // RBAC is really enforced for this identity.
      assertThatThrownBy(() -> asOperator.secrets().inNamespace(ns.name()).list())
          .isInstanceOfSatisfying(
              KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));

      // As deployed: with leader election on a Lease in the operator's namespace.
      Operator operator =
          OperatorMain.start(
              asOperator,
              OperatorSettings.defaults(),
              new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
              new RuntimeOptions(0, true, "bloom-operator", "rbac-test", false));
      try {
        OperatorWorkload workload = new OperatorWorkload(admin, ns.name(), ns.name());
        workload.create();
        workload.awaitDone();
        var lease =
            admin
                .leases()
                .inNamespace("bloom-operator")
                .withName(RuntimeOptions.LEASE_NAME)
                .get()
                .getSpec();
        assertThat(lease.getHolderIdentity()).isEqualTo("rbac-test");
        // The leader must be able to renew, or it loses the lease (and, in a pod, exits).
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () ->
                    assertThat(
                            admin
                                .leases()
                                .inNamespace("bloom-operator")
                                .withName(RuntimeOptions.LEASE_NAME)
                                .get()
                                .getSpec()
                                .getRenewTime())
                        .isAfter(lease.getRenewTime()));
      } finally {
        operator.stop();
      }
    } finally {
      // Cluster-scoped, so the namespace cleanup leaves it: later tests of the same
      // ServiceAccount (the namespaced install) must not inherit it.
      InstallManifests.removeClusterWideGrant(admin);
    }
  }
}
