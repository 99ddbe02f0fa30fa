package io.bloomoperator.deploy;

import static io.bloomoperator.deploy.OperatorNamespacedInstallTest.assertForbidden;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The chart installed on the real API server with every extension point set (the values file {@code
 * operator/src/test/resources/helm/non-default-values.yaml}): the API server accepts every object,
 * a pod of the Deployment passes the {@code restricted} Pod Security admission and the Priority
 * admission, and a user bound to the built-in {@code edit} role in a namespace may create
 * BloomFilters there, through kube-controller-manager's real ClusterRole aggregation.
 */
@RealKubernetes(crdDirs = "crds", controllerManager = true)
class HelmNonDefaultInstallTest {

  private static final String RELEASE = "bloom-operator-nd";
  private static final String PRIORITY_CLASS = "bloom-operator-test";
  private static final String DIGEST =
      "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  private static final String AGGREGATE_TO_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit";
  private static final Duration AGGREGATION = Duration.ofSeconds(60);

  private final HelmCli helm = HelmCli.find();

  @Test
  void nonDefaultValuesInstallAndPassPodAdmission(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) {
    String namespace = ns.name();
    // The Pod Security Standard closest to OpenShift's restricted SCC.
    admin
        .namespaces()
        .withName(namespace)
        .edit(
            n -> {
              n.getMetadata().getLabels().put("pod-security.kubernetes.io/enforce", "restricted");
              return n;
            });
    admin
        .scheduling()
        .v1()
        .priorityClasses()
        .resource(
            new PriorityClassBuilder()
                .withNewMetadata()
                .withName(PRIORITY_CLASS)
                .endMetadata()
                .withValue(1_000_000)
                .build())
        .createOr(existing -> existing.update());
    String kubeconfig = "--kubeconfig=" + cluster.kubeconfig();
    try {
      helm.run(
          "install",
          RELEASE,
          HelmCli.installable(cluster).toString(),
          "--namespace",
          namespace,
          kubeconfig,
          "-f",
          HelmCli.nonDefaultValues().toString());

      Deployment deployment =
          admin.apps().deployments().inNamespace(namespace).withName(RELEASE).get();
      assertThat(deployment).isNotNull();
      PodSpec pod = deployment.getSpec().getTemplate().getSpec();
      Container operator = pod.getContainers().get(0);
      assertThat(operator.getImage()).isEqualTo("registry.example/bloom-operator@" + DIGEST);
      assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
          .containsEntry("team", "platform")
          .containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
      assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
          .containsEntry("example.com/owner", "platform");
      assertThat(pod.getPriorityClassName()).isEqualTo(PRIORITY_CLASS);
      assertThat(pod.getNodeSelector()).containsOnly(Map.entry("kubernetes.io/os", "linux"));
      assertThat(pod.getTolerations())
          .singleElement()
          .satisfies(t -> t.getKey().equals("dedicated"));
      assertThat(pod.getAffinity().getNodeAffinity()).isNotNull();
      assertThat(pod.getTopologySpreadConstraints())
          .singleElement()
          .satisfies(
              c ->
                  assertThat(c.getLabelSelector().getMatchLabels())
                      .isEqualTo(deployment.getSpec().getSelector().getMatchLabels()));
      Map<String, EnvVar> env =
          operator.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e));
      assertThat(env.get("BLOOM_MANIFEST_RESTAMP_INTERVAL").getValue()).isEqualTo("2h");
      assertThat(env.get("NODE_NAME").getValueFrom().getFieldRef().getFieldPath())
          .isEqualTo("spec.nodeName");
      assertThat(env.get("JAVA_TOOL_OPTIONS").getValue())
          .contains("-Djavax.net.ssl.trustStore=/etc/bloom/trust/truststore.p12");
      assertThat(pod.getVolumes())
          .extracting(Volume::getName)
          .containsExactly("tmp", "stream", "ca-trust");
      assertThat(operator.getVolumeMounts())
          .extracting(VolumeMount::getMountPath)
          .containsExactly("/tmp", "/stream", "/etc/bloom/trust");

      ServiceAccount account =
          admin.serviceAccounts().inNamespace(namespace).withName(RELEASE).get();
      assertThat(account.getMetadata().getAnnotations())
          .containsEntry(
              "eks.amazonaws.com/role-arn", "arn:aws:iam::123456789012:role/bloom-operator");

      PodDisruptionBudget budget =
          admin.policy().v1().podDisruptionBudget().inNamespace(namespace).withName(RELEASE).get();
      assertThat(budget).isNotNull();
      assertThat(budget.getSpec().getMaxUnavailable().getStrVal()).isEqualTo("50%");
      assertThat(budget.getSpec().getSelector()).isEqualTo(deployment.getSpec().getSelector());

      // No controller creates pods here: admit one from the template, as the ReplicaSet would.
      Pod admitted = admit(admin, namespace, deployment, operator.getSecurityContext());
      assertThat(admitted.getSpec().getPriority()).isEqualTo(1_000_000);

      // The control: the same pod outside the restricted profile is refused.
      operator.getSecurityContext().setAllowPrivilegeEscalation(true);
      assertThatThrownBy(() -> admit(admin, namespace, deployment, operator.getSecurityContext()))
          .isInstanceOf(KubernetesClientException.class)
          .hasMessageContaining("PodSecurity \"restricted");

      // The documented CRD upgrade step works on the CRD in place.
      assertThat(
              cluster.kubectl(
                  "apply",
                  "--server-side",
                  "--force-conflicts",
                  "--dry-run=server",
                  "-f",
                  HelmCli.chart().resolve("crds").toString()))
          .contains("customresourcedefinition.apiextensions.k8s.io/bloomfilters.bloomoperator.io");
    } finally {
      helm.tryRun("uninstall", RELEASE, "--namespace", namespace, kubeconfig);
      admin.scheduling().v1().priorityClasses().withName(PRIORITY_CLASS).delete();
    }
  }

  /**
   * Without the chart no ClusterRole adds BloomFilters to {@code edit}, and a namespace editor is
   * refused; after {@code helm install}, kube-controller-manager folds the chart's roles into the
   * built-in ones and the same editor creates, changes and deletes BloomFilters in that namespace
   * (but not their status, and nothing in another namespace), while a viewer only reads them.
   */
  @Test
  void namespaceEditorsManageBloomFiltersAfterInstall(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) {
    String namespace = ns.name();
    String kubeconfig = "--kubeconfig=" + cluster.kubeconfig();
    bind(admin, namespace, "editor", "edit");
    bind(admin, namespace, "viewer", "view");
    // Other tests of this JVM apply the kustomize install, whose ClusterRoles would grant the same.
    removeBloomFilterAggregation(admin);
    try (KubernetesClient editor = as(cluster, "editor");
        KubernetesClient viewer = as(cluster, "viewer")) {
      await()
          .atMost(AGGREGATION)
          .untilAsserted(() -> assertThat(allowed(admin, "editor", namespace, "create")).isFalse());
      assertForbidden(() -> create(editor, namespace, "before"));

      helm.run(
          "install",
          RELEASE,
          HelmCli.installable(cluster).toString(),
          "--namespace",
          namespace,
          kubeconfig,
          "--set",
          "replicas=1");
      // The aggregation controller, not this test, adds the rules to the built-in role.
      await()
          .atMost(AGGREGATION)
          .untilAsserted(() -> assertThat(bloomFilterRules("edit", admin)).isNotEmpty());
      await()
          .atMost(AGGREGATION)
          .untilAsserted(() -> assertThat(allowed(admin, "editor", namespace, "create")).isTrue());

      assertThat(admin.rbac().clusterRoles().withName(RELEASE + "-edit").get()).isNotNull();

      BloomFilter created = create(editor, namespace, "by-editor");
      assertThat(created.getMetadata().getUid()).isNotNull();
      editor
          .resources(BloomFilter.class)
          .inNamespace(namespace)
          .withName("by-editor")
          .edit(
              f -> {
                f.getMetadata().setLabels(Map.of("team", "shop"));
                return f;
              });
      assertThat(allowed(admin, "editor", namespace, "update", "status")).isFalse();
      assertThat(allowed(admin, "editor", namespace, "patch", "status")).isFalse();
      assertThat(allowed(admin, "editor", namespace, "get", "status")).isTrue();
      assertThat(allowed(admin, "editor", "kube-system", "create")).isFalse();

      assertThat(viewer.resources(BloomFilter.class).inNamespace(namespace).list().getItems())
          .extracting(f -> f.getMetadata().getName())
          .containsExactly("by-editor");
      assertForbidden(() -> create(viewer, namespace, "by-viewer"));
      assertForbidden(
          () ->
              viewer
                  .resources(BloomFilter.class)
                  .inNamespace(namespace)
                  .withName("by-editor")
                  .delete());

      assertThat(
              editor
                  .resources(BloomFilter.class)
                  .inNamespace(namespace)
                  .withName("by-editor")
                  .delete())
          .isNotEmpty();
    } finally {
      helm.tryRun("uninstall", RELEASE, "--namespace", namespace, kubeconfig);
    }
  }

  /** Dry-runs a pod of the Deployment's template through the namespace's admission. */
  private static Pod admit(
      KubernetesClient admin,
      String namespace,
      Deployment deployment,
      io.fabric8.kubernetes.api.model.SecurityContext container) {
    Pod pod =
        new PodBuilder()
            .withNewMetadata()
            .withName("admitted")
            .withNamespace(namespace)
            .withLabels(deployment.getSpec().getTemplate().getMetadata().getLabels())
            .endMetadata()
            .withSpec(deployment.getSpec().getTemplate().getSpec())
            .build();
    pod.getSpec().getContainers().get(0).setSecurityContext(container);
    return admin.pods().inNamespace(namespace).resource(pod).dryRun().create();
  }

  private static void bind(
      KubernetesClient admin, String namespace, String user, String clusterRole) {
    admin
        .rbac()
        .roleBindings()
        .inNamespace(namespace)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(user)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", clusterRole)
                .addNewSubject()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("User")
                .withName(user)
                .endSubject()
                .build())
        .create();
  }

  /**
   * Deletes every ClusterRole that adds BloomFilters to edit (leftovers of other tests). Not the
   * built-in roles: {@code view} is itself labelled for aggregation into {@code edit} and holds the
   * BloomFilter rules once they were aggregated, but it is an aggregated role (its rules are
   * computed), and the API server creates it only at start-up.
   */
  private static void removeBloomFilterAggregation(KubernetesClient admin) {
    for (ClusterRole role :
        admin.rbac().clusterRoles().withLabel(AGGREGATE_TO_EDIT, "true").list().getItems()) {
      boolean builtIn =
          role.getAggregationRule() != null
              || role.getMetadata().getLabels().containsKey("kubernetes.io/bootstrapping");
      if (!builtIn
          && role.getRules().stream()
              .anyMatch(r -> r.getApiGroups().contains("bloomoperator.io"))) {
        admin.rbac().clusterRoles().resource(role).delete();
      }
    }
  }

  private static List<PolicyRule> bloomFilterRules(String builtIn, KubernetesClient admin) {
    return admin.rbac().clusterRoles().withName(builtIn).get().getRules().stream()
        .filter(r -> r.getApiGroups().contains("bloomoperator.io"))
        .toList();
  }

  private static boolean allowed(
      KubernetesClient admin, String user, String namespace, String verb) {
    return allowed(admin, user, namespace, verb, null);
  }

  /** The API server's own authorizer, asked through a SubjectAccessReview. */
  private static boolean allowed(
      KubernetesClient admin, String user, String namespace, String verb, String subresource) {
    SubjectAccessReview review =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser(user)
            .withGroups("system:authenticated")
            .withNewResourceAttributes()
            .withGroup("bloomoperator.io")
            .withResource("bloomfilters")
            .withSubresource(subresource)
            .withNamespace(namespace)
            .withVerb(verb)
            .endResourceAttributes()
            .endSpec()
            .build();
    return admin.authorization().v1().subjectAccessReview().create(review).getStatus().getAllowed();
  }

  private static BloomFilter create(KubernetesClient client, String namespace, String name) {
    BloomFilter filter =
        Serialization.unmarshal(
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: %s}
            spec:
              falsePositiveRate: 0.01
              source:
                inline: [a]
            """
                .formatted(name),
            BloomFilter.class);
    return client.resources(BloomFilter.class).inNamespace(namespace).resource(filter).create();
  }

  /** A client acting as a plain user, as the API server sees one authenticated by any means. */
  private static KubernetesClient as(KubeCluster cluster, String user) {
    Config config = cluster.clientConfig();
    config.setImpersonateUsername(user);
    config.setImpersonateGroups("system:authenticated");
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
