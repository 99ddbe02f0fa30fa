package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart grants exactly what the kustomize install grants, variant by variant: the same RBAC
 * objects, each with the same rules, bound to the same subjects in the same places; and it runs the
 * same operator Deployment. Rules are compared as sets of single permissions (group, resource,
 * resource name, verb), so a regrouped rule is equal and any extra verb, resource or scope is not.
 * With the release named bloom-operator in namespace bloom-operator (as the README installs it)
 * even the names are the kustomize ones. Both add the same rules to the built-in view/edit/admin
 * roles, and keep the same disruption budget.
 */
@RealKubernetes(crdDirs = "crds")
class HelmRbacEqualityTest {

  private static final String RELEASE = "bloom-operator";
  private static final String NAMESPACE = "bloom-operator";

  private static final String AGGREGATE_TO = "rbac.authorization.k8s.io/aggregate-to-";

  /** Two applications reading filters: namespace and ServiceAccount. */
  private static final String[] ORDERS = {"orders", "order-service"};

  private static final String[] PAYMENTS = {"payments", "payment-service"};

  /** Cluster-scoped: what a ClusterRoleBinding grants. */
  private static final String EVERY_NAMESPACE = "*";

  private final HelmCli helm = HelmCli.find();

  @Test
  void clusterWideInstallGrantsTheSame(KubernetesClient admin, KubeCluster cluster) {
    List<HasMetadata> kustomize = kustomize(cluster, admin, "deploy");
    List<HasMetadata> chart = helm.template(admin, RELEASE, NAMESPACE);

    assertSameInstall(kustomize, chart);
    assertThat(grants(chart))
        .contains(
            new Grant(operatorSubject(), EVERY_NAMESPACE, "", "secrets", "*", "get"),
            new Grant(operatorSubject(), NAMESPACE, "coordination.k8s.io", "leases", "*", "patch"));
  }

  @Test
  void namespacedInstallGrantsTheSame(KubernetesClient admin, KubeCluster cluster) {
    // deploy/namespaced/ ships watching "shop".
    List<HasMetadata> kustomize = kustomize(cluster, admin, "deploy/namespaced");
    List<HasMetadata> chart =
        helm.template(admin, RELEASE, NAMESPACE, "--set", "watchNamespaces={shop}");

    assertSameInstall(kustomize, chart);
    // The point of this variant: nothing anywhere else, least of all cluster-wide Secret reads.
    assertThat(grants(chart))
        .isNotEmpty()
        .allSatisfy(g -> assertThat(g.scope()).isIn("shop", NAMESPACE));
    assertThat(grants(chart))
        .filteredOn(g -> g.resource().equals("secrets") && g.scope().equals(NAMESPACE))
        .extracting(Grant::resourceName)
        .containsExactly("bloom-signing");
  }

  /** Each listed namespace gets the operator's Role, and only those. */
  @Test
  void namespacedInstallGrantsInEachListedNamespace(KubernetesClient admin) {
    List<HasMetadata> one =
        helm.template(admin, RELEASE, NAMESPACE, "--set", "watchNamespaces={shop}");
    List<HasMetadata> two =
        helm.template(admin, RELEASE, NAMESPACE, "--set", "watchNamespaces={shop,payments}");
    Set<Grant> inShop = grants(one);
    Set<Grant> expected = new HashSet<>(inShop);
    inShop.stream()
        .filter(g -> g.scope().equals("shop"))
        .map(g -> g.withScope("payments"))
        .forEach(expected::add);
    assertThat(grants(two)).isEqualTo(expected);
  }

  /**
   * The chart's {@code readers} grant what deploy/reader-rbac/ grants: as shipped (shop,
   * product-service), and pointed at two other namespaces and accounts as its kustomization.yaml
   * says.
   */
  @Test
  void readerRolesAreTheReaderRbacKustomization(
      KubernetesClient admin, KubeCluster cluster, @TempDir Path work) throws IOException {
    List<HasMetadata> kustomize = kustomize(cluster, admin, "deploy/reader-rbac");
    List<HasMetadata> chart =
        helm.template(
            admin,
            RELEASE,
            NAMESPACE,
            "--set-json",
            "readers=[{\"namespace\":\"shop\",\"serviceAccount\":\"product-service\"}]",
            "--show-only",
            "templates/readers.yaml");
    assertThat(rulesByRole(chart)).isNotEmpty().isEqualTo(rulesByRole(kustomize));
    assertThat(grants(chart)).isNotEmpty().isEqualTo(grants(kustomize));

    List<HasMetadata> two = new ArrayList<>();
    for (String[] reader : List.of(ORDERS, PAYMENTS)) {
      Path dir = Files.createDirectory(work.resolve(reader[0]));
      two.addAll(
          InstallManifests.render(
                  cluster, admin, InstallManifests.readerRbacOverlay(dir, reader[0], reader[1]))
              .items());
    }
    List<HasMetadata> chartTwo =
        helm.template(
            admin,
            RELEASE,
            NAMESPACE,
            "--set-json",
            String.format(
                "readers=[{\"namespace\":\"%s\",\"serviceAccount\":\"%s\"},"
                    + "{\"namespace\":\"%s\",\"serviceAccount\":\"%s\"}]",
                ORDERS[0], ORDERS[1], PAYMENTS[0], PAYMENTS[1]),
            "--show-only",
            "templates/readers.yaml");
    assertThat(grants(chartTwo)).isNotEmpty().isEqualTo(grants(two));
    assertThat(grants(two))
        .extracting(Grant::subject)
        .containsOnly(
            "ServiceAccount:orders/order-service", "ServiceAccount:payments/payment-service");
  }

  private void assertSameInstall(List<HasMetadata> kustomize, List<HasMetadata> chart) {
    // The same objects, except those Helm handles itself: the namespace (--create-namespace) and
    // the CRD (the chart's crds/, compared by HelmChartTest).
    assertThat(identities(chart))
        .isEqualTo(
            identities(
                kustomize.stream()
                    .filter(
                        o ->
                            !(o instanceof CustomResourceDefinition
                                || o.getKind().equals("Namespace")))
                    .toList()));
    assertThat(rulesByRole(chart)).isNotEmpty().isEqualTo(rulesByRole(kustomize));
    assertThat(grants(chart)).isNotEmpty().isEqualTo(grants(kustomize));
    assertSameDeployment(one(kustomize, Deployment.class), one(chart, Deployment.class));
    // /metrics names every tenant's filters: both admit the same peers to it, and only to it.
    NetworkPolicy policy = one(chart, NetworkPolicy.class);
    assertThat(policy.getSpec().getIngress())
        .isNotEmpty()
        .isEqualTo(one(kustomize, NetworkPolicy.class).getSpec().getIngress());
    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .isEqualTo(one(chart, Deployment.class).getSpec().getTemplate().getMetadata().getLabels());
    // The same disruption budget, over each install's own operator pods.
    for (List<HasMetadata> install : List.of(kustomize, chart)) {
      assertThat(one(install, PodDisruptionBudget.class).getSpec().getSelector())
          .isEqualTo(one(install, Deployment.class).getSpec().getSelector());
    }
    assertThat(one(chart, PodDisruptionBudget.class).getSpec().getMaxUnavailable())
        .isEqualTo(one(kustomize, PodDisruptionBudget.class).getSpec().getMaxUnavailable());
    assertThat(one(chart, PodDisruptionBudget.class).getSpec().getMinAvailable())
        .isEqualTo(one(kustomize, PodDisruptionBudget.class).getSpec().getMinAvailable());
    // The same ClusterRoles folded into the same built-in roles (their rules: rulesByRole above).
    assertThat(aggregation(chart)).isNotEmpty().isEqualTo(aggregation(kustomize));
  }

  /**
   * What the built-in roles gain, in both installs: view reads BloomFilters and their status; edit
   * and admin also create, change and delete BloomFilters; no one but the operator writes the
   * status.
   */
  @Test
  void builtInRolesGainBloomFilters(KubernetesClient admin, KubeCluster cluster) {
    Set<Permission> read = new HashSet<>();
    for (String resource : List.of("bloomfilters", "bloomfilters/status")) {
      for (String verb : List.of("get", "list", "watch")) {
        read.add(new Permission("bloomoperator.io", resource, "*", verb));
      }
    }
    Set<Permission> write = new HashSet<>(read);
    for (String verb : List.of("create", "update", "patch", "delete")) {
      write.add(new Permission("bloomoperator.io", "bloomfilters", "*", verb));
    }
    for (List<HasMetadata> install :
        List.of(kustomize(cluster, admin, "deploy"), helm.template(admin, RELEASE, NAMESPACE))) {
      assertThat(aggregatedInto(install, "view")).isEqualTo(read);
      assertThat(aggregatedInto(install, "edit")).isEqualTo(write);
      assertThat(aggregatedInto(install, "admin")).isEqualTo(write);
    }
    // The switch removes them.
    assertThat(
            aggregation(
                helm.template(
                    admin, RELEASE, NAMESPACE, "--set", "rbac.aggregateToDefaultRoles=false")))
        .isEmpty();
  }

  /** Each ClusterRole labelled for aggregation, and the built-in roles it is folded into. */
  private static Map<String, Set<String>> aggregation(List<HasMetadata> items) {
    Map<String, Set<String>> into = new TreeMap<>();
    for (HasMetadata item : items) {
      if (item instanceof ClusterRole) {
        Set<String> targets = new TreeSet<>();
        Map<String, String> labels =
            item.getMetadata().getLabels() == null ? Map.of() : item.getMetadata().getLabels();
        labels.forEach(
            (key, value) -> {
              if (key.startsWith(AGGREGATE_TO) && value.equals("true")) {
                targets.add(key.substring(AGGREGATE_TO.length()));
              }
            });
        if (!targets.isEmpty()) {
          into.put(item.getMetadata().getName(), targets);
        }
      }
    }
    return into;
  }

  /** The permissions the install's ClusterRoles add to one built-in role. */
  private static Set<Permission> aggregatedInto(List<HasMetadata> items, String builtIn) {
    Map<String, Set<String>> into = aggregation(items);
    Set<Permission> permissions = new HashSet<>();
    for (HasMetadata item : items) {
      if (item instanceof ClusterRole role
          && into.getOrDefault(item.getMetadata().getName(), Set.of()).contains(builtIn)) {
        permissions.addAll(permissions(role.getRules()));
      }
    }
    return permissions;
  }

  /** The operator as both run it: pod spec, replicas, pod annotations; env order aside. */
  private static void assertSameDeployment(Deployment kustomize, Deployment chart) {
    assertThat(chart.getSpec().getReplicas()).isEqualTo(kustomize.getSpec().getReplicas());
    assertThat(chart.getSpec().getTemplate().getMetadata().getAnnotations())
        .isEqualTo(kustomize.getSpec().getTemplate().getMetadata().getAnnotations());
    PodSpec expected = sortedEnv(kustomize.getSpec().getTemplate().getSpec());
    PodSpec actual = sortedEnv(chart.getSpec().getTemplate().getSpec());
    assertThat(actual.getContainers().get(0).getEnv())
        .isEqualTo(expected.getContainers().get(0).getEnv());
    assertThat(actual).isEqualTo(expected);
  }

  private static PodSpec sortedEnv(PodSpec spec) {
    spec.getContainers().forEach(c -> c.getEnv().sort(Comparator.comparing(EnvVar::getName)));
    return spec;
  }

  /** One permission, granted to a subject in a namespace (or {@value #EVERY_NAMESPACE}). */
  record Grant(
      String subject,
      String scope,
      String apiGroup,
      String resource,
      String resourceName,
      String verb) {
    Grant withScope(String other) {
      return new Grant(subject, other, apiGroup, resource, resourceName, verb);
    }
  }

  /** A permission of a role, before it is bound. */
  record Permission(String apiGroup, String resource, String resourceName, String verb) {}

  /** Every role of the install ("Kind/namespace/name") and its permissions. */
  private static Map<String, Set<Permission>> rulesByRole(List<HasMetadata> items) {
    Map<String, Set<Permission>> roles = new TreeMap<>();
    for (HasMetadata item : items) {
      if (item instanceof Role role) {
        roles.put(
            roleKey("Role", item.getMetadata().getNamespace(), item.getMetadata().getName()),
            permissions(role.getRules()));
      } else if (item instanceof ClusterRole role) {
        assertThat(role.getAggregationRule()).isNull();
        roles.put(
            roleKey("ClusterRole", "", item.getMetadata().getName()), permissions(role.getRules()));
      }
    }
    return roles;
  }

  /**
   * What every bound subject may do where. A binding to a role the install does not define (such as
   * a built-in ClusterRole) fails the test: its rights could not be compared.
   */
  private static Set<Grant> grants(List<HasMetadata> items) {
    Map<String, Set<Permission>> roles = rulesByRole(items);
    Set<Grant> grants = new HashSet<>();
    for (HasMetadata item : items) {
      RoleRef ref;
      List<Subject> subjects;
      String scope;
      if (item instanceof RoleBinding binding) {
        ref = binding.getRoleRef();
        subjects = binding.getSubjects();
        scope = item.getMetadata().getNamespace();
      } else if (item instanceof ClusterRoleBinding binding) {
        ref = binding.getRoleRef();
        subjects = binding.getSubjects();
        scope = EVERY_NAMESPACE;
      } else {
        continue;
      }
      String key =
          ref.getKind().equals("Role")
              ? roleKey("Role", item.getMetadata().getNamespace(), ref.getName())
              : roleKey("ClusterRole", "", ref.getName());
      assertThat(roles).as("role bound by %s", item.getMetadata().getName()).containsKey(key);
      for (Subject subject : subjects) {
        // A RoleBinding's ServiceAccount without a namespace is the account of the binding's
        // namespace, as the API server's authorizer reads it (deploy/reader-rbac/ leaves it out).
        String subjectNamespace =
            subject.getNamespace() == null
                    && subject.getKind().equals("ServiceAccount")
                    && item instanceof RoleBinding
                ? scope
                : subject.getNamespace();
        String who = subject.getKind() + ":" + subjectNamespace + "/" + subject.getName();
        for (Permission p : roles.get(key)) {
          grants.add(new Grant(who, scope, p.apiGroup(), p.resource(), p.resourceName(), p.verb()));
        }
      }
    }
    return grants;
  }

  private static Set<Permission> permissions(List<PolicyRule> rules) {
    Set<Permission> permissions = new HashSet<>();
    for (PolicyRule rule : rules) {
      List<String> names =
          rule.getResourceNames().isEmpty() ? List.of("*") : rule.getResourceNames();
      List<String> resources =
          rule.getNonResourceURLs().isEmpty()
              ? rule.getResources()
              : rule.getNonResourceURLs().stream().map(u -> "url:" + u).toList();
      List<String> groups = rule.getApiGroups().isEmpty() ? List.of("") : rule.getApiGroups();
      for (String group : groups) {
        for (String resource : resources) {
          for (String name : names) {
            for (String verb : rule.getVerbs()) {
              permissions.add(new Permission(group, resource, name, verb));
            }
          }
        }
      }
    }
    return permissions;
  }

  private static String roleKey(String kind, String namespace, String name) {
    return kind + "/" + (namespace == null ? "" : namespace) + "/" + name;
  }

  private static Set<String> identities(List<HasMetadata> items) {
    return items.stream()
        .map(
            o ->
                o.getKind()
                    + "/"
                    + o.getMetadata().getNamespace()
                    + "/"
                    + o.getMetadata().getName())
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static <T extends HasMetadata> T one(List<HasMetadata> items, Class<T> kind) {
    List<T> found = items.stream().filter(kind::isInstance).map(kind::cast).toList();
    assertThat(found).hasSize(1);
    return found.get(0);
  }

  private static String operatorSubject() {
    return "ServiceAccount:" + NAMESPACE + "/bloom-operator";
  }

  private static List<HasMetadata> kustomize(
      KubeCluster cluster, KubernetesClient admin, String dir) {
    Path path = RealKubernetesExtension.repoRoot().resolve(dir);
    return InstallManifests.render(cluster, admin, path).items();
  }
}
