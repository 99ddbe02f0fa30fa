package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/reader-rbac/ pointed at two applications as its kustomization.yaml tells users to (the
 * file copied, namespace and ServiceAccount changed, nothing else edited), rendered by {@code
 * kubectl kustomize} and applied with {@code kubectl apply -k} on the real API server; then the API
 * server's own authorizer (SubjectAccessReviews) decides: each account reads the ConfigMaps and
 * writes reader reports of its own namespace, and nothing of the other's. The Role's rights are
 * exactly what a reader uses, and every Lease write it grants is one the reader-report policy
 * confines. The base applied unchanged is refused instead of binding nothing silently.
 */
@RealKubernetes
class ReaderRbacTest {

  private static final String ORDERS_ACCOUNT = "order-service";
  private static final String PAYMENTS_ACCOUNT = "payment-service";

  @Test
  void eachAccountReadsItsOwnNamespaceOnly(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws IOException {
    String orders = ns.name();
    String payments = OperatorNamespacedInstallTest.createNamespace(admin, ns.name() + "-pay");
    try {
      for (String[] app :
          List.of(
              new String[] {orders, ORDERS_ACCOUNT}, new String[] {payments, PAYMENTS_ACCOUNT})) {
        Path dir =
            InstallManifests.readerRbacOverlay(
                Files.createDirectory(work.resolve(app[1])), app[0], app[1]);
        // What users get: a Role and a RoleBinding in their namespace, bound to their account.
        List<HasMetadata> rendered = InstallManifests.render(cluster, admin, dir).items();
        assertThat(rendered)
            .extracting(o -> o.getKind() + " " + o.getMetadata().getNamespace())
            .containsExactlyInAnyOrder("Role " + app[0], "RoleBinding " + app[0]);
        RoleBinding binding = one(rendered, RoleBinding.class);
        assertThat(binding.getSubjects())
            .singleElement()
            .satisfies(s -> assertThat(s.getKind()).isEqualTo("ServiceAccount"))
            .satisfies(s -> assertThat(s.getName()).isEqualTo(app[1]));
        assertThat(readerRights(one(rendered, Role.class).getRules()))
            .isEqualTo(
                Set.of(
                    "/configmaps get",
                    "/configmaps list",
                    "/configmaps watch",
                    "coordination.k8s.io/leases get",
                    "coordination.k8s.io/leases create",
                    "coordination.k8s.io/leases update",
                    // The marker deploy/reader-report-policy.yaml asks for (no such resource).
                    "bloomoperator.io/readerreports create"));
        cluster.kubectl("apply", "-k", dir.toString());
      }

      for (String[] own :
          List.of(
              new String[] {orders, ORDERS_ACCOUNT, payments},
              new String[] {payments, PAYMENTS_ACCOUNT, orders})) {
        String namespace = own[0];
        String account = own[1];
        String other = own[2];
        for (String verb : List.of("get", "list", "watch")) {
          assertThat(allowed(admin, namespace, account, "", "configmaps", verb, namespace))
              .as("%s %s configmaps in its namespace", account, verb)
              .isTrue();
          assertThat(allowed(admin, namespace, account, "", "configmaps", verb, other))
              .as("%s %s configmaps in %s", account, verb, other)
              .isFalse();
        }
        for (String verb : List.of("get", "create", "update")) {
          assertThat(
                  allowed(
                      admin, namespace, account, "coordination.k8s.io", "leases", verb, namespace))
              .as("%s %s its reader reports", account, verb)
              .isTrue();
          assertThat(
                  allowed(admin, namespace, account, "coordination.k8s.io", "leases", verb, other))
              .as("%s %s leases in %s", account, verb, other)
              .isFalse();
        }
        // Nothing more in its own namespace either.
        for (String verb : List.of("create", "update", "patch", "delete")) {
          assertThat(allowed(admin, namespace, account, "", "configmaps", verb, namespace))
              .as("%s %s configmaps", account, verb)
              .isFalse();
        }
        for (String verb : List.of("list", "watch", "patch", "delete")) {
          assertThat(
                  allowed(
                      admin, namespace, account, "coordination.k8s.io", "leases", verb, namespace))
              .as("%s %s leases", account, verb)
              .isFalse();
        }
        assertThat(allowed(admin, namespace, account, "", "secrets", "get", namespace)).isFalse();
      }

      // The base as shipped names no account: applying it unchanged is refused.
      assertThatThrownBy(
              () ->
                  cluster.kubectl(
                      "apply",
                      "-k",
                      RealKubernetesExtension.repoRoot()
                          .resolve("deploy/reader-rbac/base")
                          .toString(),
                      "--namespace",
                      orders,
                      "--dry-run=server"))
          .hasMessageContaining("SET-TO-THE-APPLICATION-SERVICE-ACCOUNT")
          .hasMessageContaining("Invalid value");
    } finally {
      admin.namespaces().withName(payments).delete();
    }
  }

  /**
   * Every Lease write the Role grants is an operation deploy/reader-report-policy.yaml confines to
   * reader reports: a verb beyond them (delete, say) would reach other applications' Leases with
   * nothing to stop it.
   */
  @Test
  void everyLeaseWriteTheRoleGrantsIsConfinedByTheReportPolicy(
      KubernetesClient admin, KubeCluster cluster) throws IOException {
    Role role =
        one(
            InstallManifests.render(
                    cluster,
                    admin,
                    RealKubernetesExtension.repoRoot().resolve("deploy/reader-rbac"))
                .items(),
            Role.class);
    Set<String> writes = new TreeSet<>();
    for (PolicyRule rule : role.getRules()) {
      if (rule.getResources().contains("leases")) {
        rule.getVerbs().stream().filter(v -> !v.equals("get")).forEach(writes::add);
      }
    }
    ValidatingAdmissionPolicy policy;
    try (InputStream in =
        Files.newInputStream(
            RealKubernetesExtension.repoRoot().resolve("deploy/reader-report-policy.yaml"))) {
      policy = one(admin.load(in).items(), ValidatingAdmissionPolicy.class);
    }
    Set<String> confined = new TreeSet<>();
    policy.getSpec().getMatchConstraints().getResourceRules().stream()
        .filter(r -> r.getResources().contains("leases"))
        .forEach(r -> r.getOperations().forEach(op -> confined.add(op.toLowerCase(Locale.ROOT))));
    assertThat(writes).isNotEmpty().isEqualTo(confined);
  }

  /** "group/resource verb" for every permission of the rules. */
  private static Set<String> readerRights(List<PolicyRule> rules) {
    Set<String> rights = new TreeSet<>();
    for (PolicyRule rule : rules) {
      assertThat(rule.getResourceNames()).isEmpty();
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          for (String verb : rule.getVerbs()) {
            rights.add(group + "/" + resource + " " + verb);
          }
        }
      }
    }
    return rights;
  }

  /**
   * The API server's authorizer, asked for the ServiceAccount with the groups its token carries.
   */
  private static boolean allowed(
      KubernetesClient admin,
      String accountNamespace,
      String account,
      String group,
      String resource,
      String verb,
      String namespace) {
    SubjectAccessReview review =
        new SubjectAccessReviewBuilder()
            .withNewSpec()
            .withUser("system:serviceaccount:" + accountNamespace + ":" + account)
            .withGroups(
                "system:serviceaccounts",
                "system:serviceaccounts:" + accountNamespace,
                "system:authenticated")
            .withNewResourceAttributes()
            .withGroup(group)
            .withResource(resource)
            .withNamespace(namespace)
            .withVerb(verb)
            .endResourceAttributes()
            .endSpec()
            .build();
    return admin.authorization().v1().subjectAccessReview().create(review).getStatus().getAllowed();
  }

  private static <T extends HasMetadata> T one(List<HasMetadata> items, Class<T> kind) {
    List<T> found = items.stream().filter(kind::isInstance).map(kind::cast).toList();
    assertThat(found).hasSize(1);
    return found.get(0);
  }
}
