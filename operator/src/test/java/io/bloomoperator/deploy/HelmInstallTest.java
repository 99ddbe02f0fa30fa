package io.bloomoperator.deploy;

import static io.bloomoperator.deploy.OperatorNamespacedInstallTest.assertForbidden;
import static io.bloomoperator.deploy.OperatorNamespacedInstallTest.createNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.ManifestSignature;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart against the real API server, with the real helm: what {@code helm template} renders for
 * each install variant is accepted by {@code kubectl apply --dry-run=server}; {@code helm install},
 * {@code upgrade} and {@code uninstall} create, change and remove the objects; and the operator,
 * impersonating the ServiceAccount of an installed release, does its job under the rights the chart
 * gave it and with the settings its Deployment passes.
 */
@RealKubernetes(crdDirs = "crds")
class HelmInstallTest {

  private final HelmCli helm = HelmCli.find();

  @Test
  void everyVariantPassesServerSideDryRun(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws Exception {
    String watched = createNamespace(admin, ns.name() + "-w2");
    try {
      String clusterWide =
          dryRun(
              cluster,
              work,
              "cluster-wide",
              ns.name(),
              "--include-crds",
              "--set",
              "operator.signingKeySecret.enabled=true");
      assertThat(clusterWide)
          .contains("customresourcedefinition.apiextensions.k8s.io/bloomfilters.bloomoperator.io")
          .contains("clusterrole.rbac.authorization.k8s.io/bloom-operator-dry")
          .contains("deployment.apps/bloom-operator-dry");

      String namespaced =
          dryRun(
              cluster,
              work,
              "namespaced",
              ns.name(),
              "--include-crds",
              "--set",
              "watchNamespaces={" + ns.name() + "," + watched + "}",
              "--set-json",
              "readers=[{\"namespace\":\"" + watched + "\",\"serviceAccount\":\"app\"}]");
      // Cluster-scoped only the CRD and the unbound ClusterRoles aggregated into view/edit/admin.
      assertThat(namespaced)
          .doesNotContain("clusterrolebinding")
          .doesNotContain("clusterrole.rbac.authorization.k8s.io/bloom-operator-dry ")
          .contains("clusterrole.rbac.authorization.k8s.io/bloom-operator-dry-edit")
          .contains("role.rbac.authorization.k8s.io/bloom-operator-dry")
          .contains("role.rbac.authorization.k8s.io/bloom-operator-dry-reader")
          .contains("deployment.apps/bloom-operator-dry");

      // The dry run really checks: a Role for a namespace that does not exist is refused.
      assertThatThrownBy(
              () ->
                  dryRun(
                      cluster,
                      work,
                      "missing",
                      ns.name(),
                      "--set",
                      "watchNamespaces={" + ns.name() + "-absent}"))
          .hasMessageContaining("not found");
    } finally {
      admin.namespaces().withName(watched).delete();
    }
  }

  @Test
  void installUpgradeUninstall(KubernetesClient admin, TestNamespace ns, KubeCluster cluster) {
    String release = "bloom-operator-it";
    String namespace = ns.name();
    String kubeconfig = "--kubeconfig=" + cluster.kubeconfig();
    String chart = HelmCli.installable(cluster).toString();
    try {
      helm.run("install", release, chart, "--namespace", namespace, kubeconfig);
      Deployment installed = deployment(admin, namespace, release);
      assertThat(installed.getSpec().getReplicas()).isEqualTo(2);
      assertThat(env(installed)).containsEntry("BLOOM_MAX_CONCURRENT_BUILDS", "2");
      assertThat(env(installed)).doesNotContainKey("BLOOM_WATCH_NAMESPACES");
      assertThat(admin.serviceAccounts().inNamespace(namespace).withName(release).get())
          .isNotNull();
      assertThat(
              admin
                  .rbac()
                  .roles()
                  .inNamespace(namespace)
                  .withName(release + "-leader-election")
                  .get())
          .isNotNull();
      assertThat(admin.rbac().clusterRoles().withName(release).get()).isNotNull();
      assertThat(admin.rbac().clusterRoleBindings().withName(release).get().getSubjects())
          .singleElement()
          .satisfies(
              s ->
                  assertThat(s.getNamespace() + "/" + s.getName())
                      .isEqualTo(namespace + "/" + release));

      // A changed value changes the Deployment.
      upgrade(
          chart, release, namespace, kubeconfig, "replicas=1", "operator.maxConcurrentBuilds=3");
      Deployment upgraded = deployment(admin, namespace, release);
      assertThat(upgraded.getMetadata().getGeneration())
          .isGreaterThan(installed.getMetadata().getGeneration());
      assertThat(upgraded.getSpec().getReplicas()).isEqualTo(1);
      assertThat(env(upgraded)).containsEntry("BLOOM_MAX_CONCURRENT_BUILDS", "3");

      // Unlike `kubectl apply -k`, an upgrade to the namespaced variant removes the cluster-wide
      // grant.
      upgrade(chart, release, namespace, kubeconfig, "watchNamespaces={" + namespace + "}");
      assertThat(admin.rbac().clusterRoles().withName(release).get()).isNull();
      assertThat(admin.rbac().clusterRoleBindings().withName(release).get()).isNull();
      assertThat(admin.rbac().roles().inNamespace(namespace).withName(release).get()).isNotNull();
      assertThat(env(deployment(admin, namespace, release)))
          .containsEntry("BLOOM_WATCH_NAMESPACES", namespace)
          .containsEntry("BLOOM_MAX_CONCURRENT_BUILDS", "3");

      helm.run("uninstall", release, "--namespace", namespace, kubeconfig, "--wait");
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                assertThat(
                        admin.apps().deployments().inNamespace(namespace).withName(release).get())
                    .isNull();
                assertThat(admin.serviceAccounts().inNamespace(namespace).withName(release).get())
                    .isNull();
                assertThat(admin.rbac().roles().inNamespace(namespace).list().getItems()).isEmpty();
                assertThat(admin.rbac().roleBindings().inNamespace(namespace).list().getItems())
                    .isEmpty();
              });
      // Helm leaves CRDs from crds/ in place, so an uninstall does not delete every BloomFilter.
      assertThat(
              admin
                  .apiextensions()
                  .v1()
                  .customResourceDefinitions()
                  .withName("bloomfilters.bloomoperator.io")
                  .get())
          .isNotNull();
    } finally {
      helm.tryRun("uninstall", release, "--namespace", namespace, kubeconfig);
    }
  }

  /**
   * A release with its own name and namespace, namespaced and signing: the operator impersonating
   * that release's ServiceAccount starts with the settings of the installed Deployment (its
   * environment, as the pod would get it), reads the signing key, reconciles the watched namespace
   * and is refused everywhere else.
   */
  @Test
  void operatorRunsUnderAnInstalledRelease(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    String release = "bloom-operator-run";
    String home = ns.name();
    String watched = createNamespace(admin, ns.name() + "-w");
    String other = createNamespace(admin, ns.name() + "-x");
    String kubeconfig = "--kubeconfig=" + cluster.kubeconfig();
    KeyPair key = Ed25519Keys.generate();
    admin
        .secrets()
        .inNamespace(home)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("helm-signing")
                .endMetadata()
                .withData(
                    Map.of(
                        "ed25519.pem",
                        Base64.getEncoder()
                            .encodeToString(
                                Ed25519Keys.toPem(key.getPrivate())
                                    .getBytes(StandardCharsets.US_ASCII))))
                .build())
        .create();
    try {
      helm.run(
          "install",
          release,
          HelmCli.installable(cluster).toString(),
          "--namespace",
          home,
          kubeconfig,
          "--set",
          "watchNamespaces={" + watched + "}",
          "--set",
          "operator.signingKeySecret.enabled=true",
          "--set",
          "operator.signingKeySecret.name=helm-signing");
      Map<String, String> env = env(deployment(admin, home, release));
      env.put("POD_NAMESPACE", home);
      env.put("POD_NAME", "helm-pod");
      RuntimeOptions asDeployed = RuntimeOptions.fromEnvironment(env);
      assertThat(asDeployed.namespaces()).containsExactly(watched);
      assertThat(asDeployed.leaderElection()).isTrue();
      OperatorSettings settings = OperatorSettings.fromEnvironment(env);
      assertThat(settings.publishing().signingKey()).isNotNull();

      try (KubernetesClient asOperator =
          InstallManifests.asServiceAccount(cluster, home, release)) {
        awaitRbac(() -> asOperator.configMaps().inNamespace(watched).list());
        Operator operator =
            OperatorMain.start(
                asOperator,
                settings,
                null,
                // In a test the JVM must not exit when the lease is lost; the HTTP port is free.
                new RuntimeOptions(
                    0,
                    true,
                    asDeployed.leaseNamespace(),
                    "helm-pod",
                    false,
                    asDeployed.namespaces()));
        try {
          OperatorWorkload workload = new OperatorWorkload(admin, watched, watched);
          workload.create();
          workload.awaitDone();
          String signature =
              SnapshotConfigMaps.signatureData(
                  admin
                      .configMaps()
                      .inNamespace(watched)
                      .withName(SnapshotNames.manifestName("from-secret"))
                      .get());
          assertThat(signature).isNotNull();
          assertThat(ManifestSignature.fromData(signature).keyId())
              .isEqualTo(Ed25519Keys.keyId(key.getPublic()));
          assertThat(
                  admin
                      .leases()
                      .inNamespace(home)
                      .withName(RuntimeOptions.LEASE_NAME)
                      .get()
                      .getSpec()
                      .getHolderIdentity())
              .isEqualTo("helm-pod");

          assertForbidden(() -> asOperator.secrets().inNamespace(other).list());
          assertForbidden(() -> asOperator.configMaps().inNamespace(other).list());
          assertForbidden(() -> asOperator.secrets().inAnyNamespace().list());
          // In its own namespace, only the signing key.
          assertForbidden(() -> asOperator.secrets().inNamespace(home).withName("other").get());
        } finally {
          operator.stop();
        }
      }
    } finally {
      helm.tryRun("uninstall", release, "--namespace", home, kubeconfig);
      admin.namespaces().withName(watched).delete();
      admin.namespaces().withName(other).delete();
    }
  }

  /** {@code helm upgrade --reuse-values} with these {@code --set} values. */
  private void upgrade(
      String chart, String release, String namespace, String kubeconfig, String... values) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "upgrade", release, chart, "--namespace", namespace, kubeconfig, "--reuse-values"));
    for (String value : values) {
      args.add("--set");
      args.add(value);
    }
    helm.run(args.toArray(String[]::new));
  }

  /** Renders one variant as release bloom-operator-dry and applies it with --dry-run=server. */
  private String dryRun(
      KubeCluster cluster, Path work, String variant, String namespace, String... values)
      throws Exception {
    Path file = work.resolve(variant + ".yaml");
    String yaml = helm.templateYaml("bloom-operator-dry", namespace, values);
    Files.writeString(file, yaml);
    String out = cluster.kubectl("apply", "--dry-run=server", "-f", file.toString());
    // One line per object; kubectl's warnings (the CRD was not created by kubectl apply) aside.
    assertThat(out.lines().filter(line -> !line.isBlank() && !line.startsWith("Warning:")))
        .hasSize((int) yaml.lines().filter(line -> line.startsWith("kind: ")).count())
        .allSatisfy(line -> assertThat(line).endsWith("(server dry run)"));
    return out;
  }

  private static Deployment deployment(KubernetesClient admin, String namespace, String name) {
    Deployment deployment = admin.apps().deployments().inNamespace(namespace).withName(name).get();
    assertThat(deployment).as("Deployment %s/%s", namespace, name).isNotNull();
    return deployment;
  }

  /** The operator container's plain environment values. */
  private static Map<String, String> env(Deployment deployment) {
    Map<String, String> env = new HashMap<>();
    List<EnvVar> vars =
        deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
    vars.stream()
        .filter(v -> v.getValue() != null)
        .forEach(v -> env.put(v.getName(), v.getValue()));
    return env;
  }

  /** The API server's authorizer learns of new RBAC objects asynchronously. */
  private static void awaitRbac(ThrowingCallable allowed) {
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThatCode(allowed).doesNotThrowAnyException());
  }
}
