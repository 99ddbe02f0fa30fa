package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.Operator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The namespaced install (deploy/namespaced/): the operator, impersonating its ServiceAccount under
 * exactly the RBAC objects {@code kubectl kustomize} renders after the documented edit that lists
 * the watched namespaces, reconciles the BloomFilters of those namespaces and can neither see nor
 * touch anything elsewhere. Its Role's rules equal the cluster-wide ClusterRole's, each of which
 * {@link OperatorRbacNecessityTest} shows to be needed.
 */
@RealKubernetes(crdDirs = "crds")
class OperatorNamespacedInstallTest {

  private static final String WATCH_ENV = "BLOOM_WATCH_NAMESPACES";

  @Test
  void shippedVariantGrantsOnlyInTheNamespacesItWatches(
      KubernetesClient admin, KubeCluster cluster) {
    Path deploy = RealKubernetesExtension.repoRoot().resolve("deploy");
    InstallManifests clusterWide = InstallManifests.render(cluster, admin, deploy);
    InstallManifests namespaced =
        InstallManifests.render(cluster, admin, deploy.resolve("namespaced"));

    // Cluster-wide only the unbound ClusterRoles that add BloomFilters to the built-in user roles.
    assertThat(namespaced.all(ClusterRole.class))
        .allSatisfy(
            role ->
                assertThat(role.getMetadata().getLabels())
                    .containsKey("rbac.authorization.k8s.io/aggregate-to-edit"));
    assertThat(namespaced.all(ClusterRoleBinding.class)).isEmpty();
    assertThat(namespaced.env(WATCH_ENV)).isNotNull();
    Set<String> watched =
        RuntimeOptions.fromEnvironment(Map.of(WATCH_ENV, namespaced.env(WATCH_ENV))).namespaces();
    assertThat(watched).isNotEmpty();
    assertGrantsExactlyIn(namespaced, watched);
    assertThat(namespaced.all(Role.class))
        .filteredOn(this::isOperatorRole)
        .allSatisfy(
            role ->
                assertThat(role.getRules())
                    .isEqualTo(clusterWide.one(ClusterRole.class, "bloom-operator").getRules()));
    assertThat(
            namespaced
                .one(Role.class, "bloom-operator-leader-election")
                .getMetadata()
                .getNamespace())
        .isEqualTo("bloom-operator");

    // The variant patches one env entry into the shared Deployment rather than forking it, so
    // settings added to deploy/base reach both installs.
    assertThat(clusterWide.env(WATCH_ENV)).isNull();
    Deployment patched = namespaced.deployment();
    patched
        .getSpec()
        .getTemplate()
        .getSpec()
        .getContainers()
        .get(0)
        .getEnv()
        .removeIf(e -> e.getName().equals(WATCH_ENV));
    assertThat(patched).isEqualTo(clusterWide.deployment());
    assertThat(clusterWide.env("JAVA_TOOL_OPTIONS")).contains("-XX:+ExitOnOutOfMemoryError");
  }

  @Test
  void operatorReconcilesWatchedNamespacesAndCannotReachOthers(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws Exception {
    String first = ns.name();
    String second = createNamespace(admin, ns.name() + "-w2");
    String other = createNamespace(admin, ns.name() + "-x");
    try {
      InstallManifests install = install(admin, cluster, work, List.of(first, second));

      admin
          .secrets()
          .inNamespace(other)
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName("secret-ids")
                  .endMetadata()
                  .withStringData(Map.of("ids", "secret\n"))
                  .build())
          .create();
      // Created first, so by the time the watched ones are Ready it has had every chance.
      OperatorWorkload.createFilter(
          admin,
          other,
          """
          metadata: {name: unwatched}
          spec:
            falsePositiveRate: 0.01
            source: {secret: {name: secret-ids, key: ids}}
          """);
      OperatorWorkload workload = new OperatorWorkload(admin, first, second);
      workload.create();

      try (KubernetesClient asOperator = InstallManifests.asOperator(cluster)) {
        Operator operator = start(asOperator, install.env(WATCH_ENV));
        try {
          // (a) both watched namespaces are served: every kind of write the operator makes.
          workload.awaitDone();
          assertThat(operator.getRuntimeInfo().allEventSourcesAreHealthy()).isTrue();

          // (b) the third namespace is left alone.
          assertThat(
                  admin
                      .resources(BloomFilter.class)
                      .inNamespace(other)
                      .withName("unwatched")
                      .get()
                      .getStatus())
              .isNull();
          assertThat(
                  admin
                      .configMaps()
                      .inNamespace(other)
                      .withLabel(SnapshotNames.LABEL_MANAGED_BY)
                      .list()
                      .getItems())
              .isEmpty();
          assertThat(admin.v1().events().inNamespace(other).list().getItems()).isEmpty();

          // (c) and out of the operator's reach, whatever a BloomFilter there might ask for.
          assertForbidden(
              () -> asOperator.secrets().inNamespace(other).withName("secret-ids").get());
          assertForbidden(
              () ->
                  asOperator
                      .configMaps()
                      .inNamespace(other)
                      .resource(
                          new ConfigMapBuilder()
                              .withNewMetadata()
                              .withName("planted")
                              .endMetadata()
                              .build())
                      .create());
          assertForbidden(() -> asOperator.resources(BloomFilter.class).inNamespace(other).list());
          assertForbidden(() -> asOperator.secrets().inAnyNamespace().list());
          assertForbidden(() -> asOperator.configMaps().inAnyNamespace().list());
          assertThat(admin.configMaps().inNamespace(other).withName("planted").get()).isNull();
        } finally {
          operator.stop();
        }
      }
    } finally {
      admin.namespaces().withName(second).delete();
      admin.namespaces().withName(other).delete();
    }
  }

  @Test
  void namespaceListedWithoutItsRoleStopsTheStart(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work) {
    String missing = createNamespace(admin, ns.name() + "-norole");
    try {
      InstallManifests install = install(admin, cluster, work, List.of(ns.name()));
      // The administrator lists a namespace but forgets its watched/<ns> directory.
      String listed = install.env(WATCH_ENV) + "," + missing;
      try (KubernetesClient asOperator = InstallManifests.asOperator(cluster)) {
        assertThatThrownBy(() -> start(asOperator, listed).stop())
            .satisfies(
                e ->
                    assertThat(Stream.iterate(e, Objects::nonNull, Throwable::getCause))
                        .anySatisfy(
                            cause ->
                                assertThat(cause)
                                    .isInstanceOfSatisfying(
                                        KubernetesClientException.class,
                                        k -> assertThat(k.getCode()).isEqualTo(403))));
      }
    } finally {
      admin.namespaces().withName(missing).delete();
    }
  }

  /**
   * Installs the namespaced variant's RBAC objects for these namespaces, after removing a
   * cluster-wide install's grant as the documentation says.
   */
  private InstallManifests install(
      KubernetesClient admin, KubeCluster cluster, Path work, List<String> namespaces) {
    InstallManifests.removeClusterWideGrant(admin);
    InstallManifests install =
        InstallManifests.render(cluster, admin, namespacedVariantWatching(work, namespaces));
    assertGrantsExactlyIn(install, Set.copyOf(namespaces));
    install.applyIdentityAndRbac(admin);
    // The API server's authorizer learns of RBAC changes asynchronously.
    try (KubernetesClient asOperator = InstallManifests.asOperator(cluster)) {
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () -> {
                assertForbidden(() -> asOperator.secrets().inAnyNamespace().list());
                assertThat(asOperator.configMaps().inNamespace(namespaces.get(0)).list())
                    .isNotNull();
              });
    }
    return install;
  }

  /**
   * The documented way to choose the watched namespaces, done on a copy of deploy/ and crds/: a
   * copy of watched/shop/ per namespace, listed under resources and in BLOOM_WATCH_NAMESPACES.
   */
  private static Path namespacedVariantWatching(Path work, List<String> namespaces) {
    try {
      Path root = RealKubernetesExtension.repoRoot();
      copyTree(root.resolve("deploy"), work.resolve("deploy"));
      copyTree(root.resolve("crds"), work.resolve("crds"));
      Path variant = work.resolve("deploy/namespaced");
      Path example = variant.resolve("watched/shop/kustomization.yaml");
      String unit = Files.readString(example);
      for (String namespace : namespaces) {
        Path dir = Files.createDirectories(variant.resolve("watched").resolve(namespace));
        Files.writeString(
            dir.resolve("kustomization.yaml"),
            replaceOnce(unit, "namespace: shop\n", "namespace: " + namespace + "\n"));
      }
      Files.delete(example);
      Path kustomization = variant.resolve("kustomization.yaml");
      String text = Files.readString(kustomization);
      text =
          replaceOnce(
              text,
              "  - watched/shop\n",
              namespaces.stream()
                  .map(n -> "  - watched/" + n + "\n")
                  .collect(Collectors.joining()));
      text = replaceOnce(text, "value: shop\n", "value: " + String.join(",", namespaces) + "\n");
      Files.writeString(kustomization, text);
      return variant;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String replaceOnce(String text, String from, String to) {
    assertThat(text.split(java.util.regex.Pattern.quote(from), -1)).as(from).hasSize(2);
    return text.replace(from, to);
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> files = Files.walk(from)) {
      for (Path file : files.toList()) {
        Path target = to.resolve(from.relativize(file).toString());
        if (Files.isDirectory(file)) {
          Files.createDirectories(target);
        } else {
          Files.copy(file, target);
        }
      }
    }
  }

  private boolean isOperatorRole(Role role) {
    return role.getMetadata().getName().equals("bloom-operator");
  }

  /** The operator's Role and RoleBinding exist in exactly these namespaces, bound to its SA. */
  private void assertGrantsExactlyIn(InstallManifests install, Set<String> namespaces) {
    assertThat(
            install.all(Role.class).stream()
                .filter(this::isOperatorRole)
                .map(r -> r.getMetadata().getNamespace()))
        .containsExactlyInAnyOrderElementsOf(namespaces);
    List<RoleBinding> bindings =
        install.all(RoleBinding.class).stream()
            .filter(b -> b.getRoleRef().getName().equals("bloom-operator"))
            .toList();
    assertThat(bindings)
        .map(b -> b.getMetadata().getNamespace())
        .containsExactlyInAnyOrderElementsOf(namespaces);
    assertThat(bindings)
        .allSatisfy(
            b -> {
              assertThat(b.getRoleRef().getKind()).isEqualTo("Role");
              assertThat(b.getSubjects())
                  .singleElement()
                  .satisfies(
                      (Subject s) -> {
                        assertThat(s.getKind()).isEqualTo("ServiceAccount");
                        assertThat(s.getNamespace() + "/" + s.getName())
                            .isEqualTo("bloom-operator/bloom-operator");
                      });
            });
  }

  /** As deployed: leader election on the Lease in bloom-operator, namespaces from the env. */
  private static Operator start(KubernetesClient asOperator, String watchNamespaces) {
    Set<String> namespaces =
        RuntimeOptions.fromEnvironment(Map.of(WATCH_ENV, watchNamespaces)).namespaces();
    // A Lease left by an operator another test stopped would delay this one's election.
    try (KubernetesClient admin = KubeCluster.shared().newClient()) {
      admin.leases().inNamespace("bloom-operator").withName(RuntimeOptions.LEASE_NAME).delete();
    }
    return OperatorMain.start(
        asOperator,
        OperatorSettings.defaults(),
        null,
        new RuntimeOptions(0, true, "bloom-operator", "namespaced-test", false, namespaces));
  }

  static String createNamespace(KubernetesClient admin, String name) {
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    return name;
  }

  static void assertForbidden(ThrowingCallable request) {
    assertThatThrownBy(request)
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
  }
}
