package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.ReaderPods;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each rule of the ClusterRole in deploy/operator-rbac.yaml (and so of the namespaced variant's
 * Role, which {@link OperatorNamespacedInstallTest} holds equal to it) is needed: with that one
 * rule removed (and everything else as deployed) the operator visibly fails at the job the rule is
 * for. {@link OperatorRbacTest} shows the rules together are sufficient.
 */
@RealKubernetes(crdDirs = "crds")
class OperatorRbacNecessityTest {

  /** What breaks without a rule, as a user would see it on the BloomFilter or around it. */
  record Case(String rule, Predicate<PolicyRule> matches, Symptom symptom) {
    @Override
    public String toString() {
      return "without " + rule;
    }
  }

  @FunctionalInterface
  interface Symptom {
    void await(KubernetesClient admin, String namespace);
  }

  static Stream<Arguments> cases() {
    Symptom neverReconciled = (admin, ns) -> assertNoStatusFor(admin, ns, Duration.ofSeconds(8));
    return Stream.of(
        Arguments.of(
            new Case(
                "bloomfilters get/list/watch/patch/update",
                r -> r.getResources().equals(List.of("bloomfilters")),
                neverReconciled)),
        Arguments.of(
            new Case(
                "bloomfilters/status",
                r -> r.getResources().equals(List.of("bloomfilters/status")),
                (admin, ns) ->
                    await()
                        .pollDelay(Duration.ofSeconds(8))
                        .atMost(Duration.ofSeconds(13))
                        .untilAsserted(
                            () ->
                                assertThat(
                                        admin
                                            .resources(BloomFilter.class)
                                            .inNamespace(ns)
                                            .withName("f")
                                            .get()
                                            .getStatus())
                                    .as("status never written")
                                    .isNull()))),
        Arguments.of(
            new Case(
                "configmaps",
                r -> r.getResources().equals(List.of("configmaps")),
                neverReconciled)),
        Arguments.of(
            new Case(
                "secrets get",
                r -> r.getResources().equals(List.of("secrets")),
                (admin, ns) -> awaitReason(admin, ns, "SourceUnreadable"))),
        Arguments.of(
            new Case(
                "events create",
                r -> r.getResources().equals(List.of("events")),
                (admin, ns) -> {
                  awaitReason(admin, ns, "Published");
                  assertThat(admin.v1().events().inNamespace(ns).list().getItems()).isEmpty();
                })),
        Arguments.of(new Case("leases (leader election)", null, neverReconciled)),
        Arguments.of(
            new Case(
                "leases list/watch (reader reports)",
                r -> r.getResources().equals(List.of("leases")),
                OperatorRbacNecessityTest::readerNeverCounted)),
        Arguments.of(
            new Case(
                "pods get (reader reports)",
                r -> r.getResources().equals(List.of("pods")),
                OperatorRbacNecessityTest::readerNeverCounted)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void everyRuleIsNeeded(Case c, KubernetesClient admin, TestNamespace ns, KubeCluster cluster)
      throws Exception {
    String identity = "op-" + ns.name();
    String account = "system:serviceaccount:" + ns.name() + ":" + identity;
    admin
        .serviceAccounts()
        .inNamespace(ns.name())
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName(identity).endMetadata().build())
        .create();
    InstallManifests deployed =
        InstallManifests.render(
            cluster, admin, RealKubernetesExtension.repoRoot().resolve("deploy"));
    ClusterRole role = deployed.one(ClusterRole.class, "bloom-operator");
    List<PolicyRule> rules = new ArrayList<>(role.getRules());
    if (c.matches() != null) {
      assertThat(rules.removeIf(c.matches())).as("rule exists in deploy/").isTrue();
    }
    role.getMetadata().setName(identity);
    role.setRules(rules);
    admin.resource(role).create();
    admin
        .resource(
            new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(identity)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole")
                .withName(identity)
                .endRoleRef()
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(identity)
                .withNamespace(ns.name())
                .endSubject()
                .build())
        .create();
    if (c.matches() != null) {
      Role leases = deployed.one(Role.class, "bloom-operator-leader-election");
      leases.getMetadata().setName(identity);
      leases.getMetadata().setNamespace(ns.name());
      admin.resource(leases).create();
      admin
          .resource(
              new RoleBindingBuilder()
                  .withNewMetadata()
                  .withName(identity)
                  .withNamespace(ns.name())
                  .endMetadata()
                  .withNewRoleRef()
                  .withApiGroup("rbac.authorization.k8s.io")
                  .withKind("Role")
                  .withName(identity)
                  .endRoleRef()
                  .addNewSubject()
                  .withKind("ServiceAccount")
                  .withName(identity)
                  .withNamespace(ns.name())
                  .endSubject()
                  .build())
          .create();
    }

    Config config = cluster.clientConfig();
    config.setImpersonateUsername(account);
    config.setImpersonateGroups("system:serviceaccounts", "system:authenticated");
    try (KubernetesClient asOperator = new KubernetesClientBuilder().withConfig(config).build()) {
      // The operator watches every namespace; this case's resources live in its own one and
      // the leader Lease too, so cases do not see each other.
      Operator operator = startQuietly(asOperator, ns.name());
      try {
        admin
            .configMaps()
            .inNamespace(ns.name())
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName("ids")
                    .endMetadata()
                    .withData(Map.of("ids", "a\nb\n"))
                    .build())
            .create();
        admin
            .secrets()
            .inNamespace(ns.name())
            .resource(
                new SecretBuilder()
                    .withNewMetadata()
                    .withName("ids")
                    .addToAnnotations("bloomoperator.io/allowed-filters", "f")
                    .endMetadata()
                    .withStringData(Map.of("ids", "a\nb\n"))
                    .build())
            .create();
        String kind = c.rule().startsWith("secrets") ? "secret" : "configMap";
        admin
            .resources(BloomFilter.class)
            .inNamespace(ns.name())
            .resource(
                Serialization.unmarshal(
                    """
                apiVersion: bloomoperator.io/v1alpha1
                kind: BloomFilter
                metadata: {name: f}
                spec:
                  falsePositiveRate: 0.01
                  source: {%s: {name: ids, key: ids}}
                """
                        .formatted(kind),
                    BloomFilter.class))
            .create();
        c.symptom().await(admin, ns.name());
      } finally {
        if (operator != null) {
          operator.stop();
        }
      }
    } finally {
      admin.rbac().clusterRoleBindings().withName(identity).delete();
      admin.rbac().clusterRoles().withName(identity).delete();
    }
  }

  /** Without list/watch rights java-operator-sdk may refuse to start at all: that counts too. */
  private static Operator startQuietly(KubernetesClient asOperator, String leaseNamespace) {
    try {
      return OperatorMain.start(
          asOperator,
          OperatorSettings.defaults(),
          null,
          new RuntimeOptions(
              0, true, leaseNamespace, "necessity", false, java.util.Set.of(leaseNamespace)));
    } catch (RuntimeException e) {
      return null;
    }
  }

  private static void assertNoStatusFor(KubernetesClient admin, String ns, Duration wait) {
    await()
        .pollDelay(wait)
        .atMost(wait.plusSeconds(5))
        .untilAsserted(
            () -> {
              BloomFilter f =
                  admin.resources(BloomFilter.class).inNamespace(ns).withName("f").get();
              assertThat(
                      f.getStatus() == null
                          || ReadyCondition.of(f)
                              .map(cond -> !"True".equals(cond.getStatus()))
                              .orElse(true))
                  .as("never Ready")
                  .isTrue();
              assertThat(
                      admin
                          .configMaps()
                          .inNamespace(ns)
                          .withLabel("bloomoperator.io/role")
                          .list()
                          .getItems())
                  .as("no snapshot written")
                  .isEmpty();
            });
  }

  /**
   * A reader report of a live pod is never counted into status.readers (the filter builds).
   * ReaderRolloutTest shows the same report counted within a few seconds when the operator may read
   * it.
   */
  private static void readerNeverCounted(KubernetesClient admin, String ns) {
    awaitReason(admin, ns, "Published");
    long version =
        admin
            .resources(BloomFilter.class)
            .inNamespace(ns)
            .withName("f")
            .get()
            .getStatus()
            .getVersion();
    var pod = ReaderPods.pod(admin, ns, "app");
    ReaderPods.create(
        admin, ReaderPods.report(ns, "app", pod.getMetadata().getUid(), "f", version));
    await()
        .pollDelay(Duration.ofSeconds(12))
        .atMost(Duration.ofSeconds(17))
        .untilAsserted(
            () ->
                assertThat(
                        admin
                            .resources(BloomFilter.class)
                            .inNamespace(ns)
                            .withName("f")
                            .get()
                            .getStatus()
                            .getReaders())
                    .as("reader never counted")
                    .isNull());
  }

  private static void awaitReason(KubernetesClient admin, String ns, String reason) {
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              BloomFilter f =
                  admin.resources(BloomFilter.class).inNamespace(ns).withName("f").get();
              assertThat(ReadyCondition.of(f))
                  .hasValueSatisfying(
                      cond -> assertThat(cond.getReason()).as(cond.getMessage()).isEqualTo(reason));
            });
  }
}
