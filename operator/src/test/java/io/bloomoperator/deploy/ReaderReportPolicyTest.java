package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicySpec;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader's Lease rights, as deploy/reader-rbac/ grants them, reach every Lease of the namespace
 * (RBAC cannot name Leases by prefix): an application using sidecar-lib could overwrite a
 * co-located leader-election Lease. deploy/reader-report-policy.yaml confines them to the reader's
 * own reports, on a real API server enforcing RBAC and admission: the attack works with the Role
 * alone and is refused with the policy, while a real report is still written and renewed and
 * another service account's Lease writes are untouched. The chart renders the same rules.
 */
@RealKubernetes(crdDirs = "crds")
class ReaderReportPolicyTest {

  private static final String READER = "product-service";
  private static final String OTHER = "leader-elector";
  private final HelmCli helm = HelmCli.find();

  @Test
  void readersMayWriteTheirReportsButNoOtherLease(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster, @TempDir Path work)
      throws IOException {
    String namespace = ns.name();
    for (String account : List.of(READER, OTHER)) {
      admin
          .serviceAccounts()
          .inNamespace(namespace)
          .resource(
              new ServiceAccountBuilder().withNewMetadata().withName(account).endMetadata().build())
          .create();
    }
    // The reader's Role and binding as shipped, pointed at this namespace; the other account has
    // the same Lease verbs from a Role of its own, as a leader-elector would.
    cluster.kubectl(
        "apply", "-k", InstallManifests.readerRbacOverlay(work, namespace, READER).toString());
    admin
        .rbac()
        .roles()
        .inNamespace(namespace)
        .resource(
            new RoleBuilder()
                .withNewMetadata()
                .withName(OTHER)
                .endMetadata()
                .addNewRule()
                .withApiGroups("coordination.k8s.io")
                .withResources("leases")
                .withVerbs("get", "create", "update")
                .endRule()
                .build())
        .create();
    admin
        .rbac()
        .roleBindings()
        .inNamespace(namespace)
        .resource(
            new RoleBindingBuilder()
                .withNewMetadata()
                .withName(OTHER)
                .endMetadata()
                .withNewRoleRef("rbac.authorization.k8s.io", "Role", OTHER)
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName(OTHER)
                .withNamespace(namespace)
                .endSubject()
                .build())
        .create();
    admin
        .leases()
        .inNamespace(namespace)
        .resource(leaderLease("payments-leader", "payments-0"))
        .create();

    try (KubernetesClient reader = InstallManifests.asServiceAccount(cluster, namespace, READER);
        KubernetesClient other = InstallManifests.asServiceAccount(cluster, namespace, OTHER)) {
      // The attack, with RBAC alone: the reader takes over the leader-election Lease.
      assertThat(takeOver(reader, namespace, "payments-leader").getSpec().getHolderIdentity())
          .isEqualTo("attacker");

      List<HasMetadata> policy = policy(admin, namespace);
      try {
        admin.resourceList(policy).createOrReplace();
        // The API server compiles a new policy asynchronously: wait until it refuses.
        await()
            .atMost(Duration.ofSeconds(30))
            .untilAsserted(
                () -> assertRefused(() -> takeOver(reader, namespace, "payments-leader")));

        // Labelling someone else's Lease as a report does not make it the reader's.
        Lease labelled = reader.leases().inNamespace(namespace).withName("payments-leader").get();
        labelled.getMetadata().setLabels(Map.of("bloomoperator.io/role", "reader-report"));
        assertRefused(() -> reader.leases().inNamespace(namespace).resource(labelled).update());
        // Nor may it create a Lease that is not a report (squatting a leader-election name).
        assertRefused(
            () ->
                reader
                    .leases()
                    .inNamespace(namespace)
                    .resource(leaderLease("orders-leader", "attacker"))
                    .create());

        // What sidecar-lib writes still goes through: a report, created and renewed.
        Instant now = Instant.now();
        ReaderReport report =
            new ReaderReport(
                namespace,
                "app-0",
                "0d1e2f3a-4b5c-6d7e-8f90-a1b2c3d4e5f6",
                "product-ids",
                3,
                ReaderReport.NONE,
                null,
                now,
                now,
                Duration.ofSeconds(30));
        Lease created =
            reader.leases().inNamespace(namespace).resource(ReaderReports.toLease(report)).create();
        Lease renewal = ReaderReports.toLease(report);
        renewal.getMetadata().setResourceVersion(created.getMetadata().getResourceVersion());
        renewal.getSpec().setRenewTime(created.getSpec().getRenewTime().plusSeconds(5));
        reader.leases().inNamespace(namespace).resource(renewal).update();
        assertThat(
                ReaderReports.parse(
                    admin
                        .leases()
                        .inNamespace(namespace)
                        .withName(created.getMetadata().getName())
                        .get()))
            .isPresent();

        // An account not bound to the reader Role keeps its Lease rights, and so does an
        // administrator, who holds the reader's marker right only through a wildcard.
        assertThat(takeOver(other, namespace, "payments-leader").getSpec().getHolderIdentity())
            .isEqualTo("attacker");
        assertThat(takeOver(admin, namespace, "payments-leader").getSpec().getHolderIdentity())
            .isEqualTo("attacker");
        admin
            .leases()
            .inNamespace(namespace)
            .resource(leaderLease("orders-leader", "orders-0"))
            .create();
      } finally {
        admin.resourceList(policy).delete();
      }
    }
  }

  /** The chart renders the same policy as the file the kustomize install documents. */
  @Test
  void chartRendersTheSamePolicy(KubernetesClient admin) throws IOException {
    List<HasMetadata> chart =
        helm.template(
            admin,
            "bloom-operator",
            "bloom-operator",
            "--set-json",
            "readers=[{\"namespace\":\"shop\",\"serviceAccount\":\"product-service\"}]",
            "--show-only",
            "templates/reader-report-policy.yaml");
    List<HasMetadata> file = load(admin, read("deploy/reader-report-policy.yaml"));
    assertThat(spec(chart).getMatchConditions()).isEqualTo(spec(file).getMatchConditions());
    assertThat(spec(chart).getValidations()).isEqualTo(spec(file).getValidations());
    assertThat(spec(chart).getMatchConstraints()).isEqualTo(spec(file).getMatchConstraints());
    assertThat(binding(chart).getSpec().getValidationActions()).containsExactly("Deny");
    assertThat(binding(chart).getSpec().getPolicyName())
        .isEqualTo(
            chart.stream()
                .filter(ValidatingAdmissionPolicy.class::isInstance)
                .findFirst()
                .orElseThrow()
                .getMetadata()
                .getName());
  }

  /** A leader-election Lease as client-go's elector writes it. */
  private static Lease leaderLease(String name, String holder) {
    return new LeaseBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity(holder)
        .withLeaseDurationSeconds(15)
        .endSpec()
        .build();
  }

  /** Get and update, the verbs the reader Role grants (no patch). */
  private static Lease takeOver(KubernetesClient client, String namespace, String name) {
    Lease lease = client.leases().inNamespace(namespace).withName(name).get();
    lease.getSpec().setHolderIdentity("attacker");
    return client.leases().inNamespace(namespace).resource(lease).update();
  }

  private static void assertRefused(Runnable write) {
    assertThatThrownBy(write::run)
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isIn(403, 422));
  }

  private static List<HasMetadata> policy(KubernetesClient admin, String namespace)
      throws IOException {
    // As shipped (no account to fill in); cluster-scoped, so a name of this test's own.
    String yaml =
        read("deploy/reader-report-policy.yaml")
            .replace("bloom-operator-reader-reports", namespace + "-reader-reports");
    return load(admin, yaml);
  }

  private static ValidatingAdmissionPolicySpec spec(List<HasMetadata> objects) {
    return objects.stream()
        .filter(ValidatingAdmissionPolicy.class::isInstance)
        .map(ValidatingAdmissionPolicy.class::cast)
        .findFirst()
        .orElseThrow()
        .getSpec();
  }

  private static ValidatingAdmissionPolicyBinding binding(List<HasMetadata> objects) {
    return objects.stream()
        .filter(ValidatingAdmissionPolicyBinding.class::isInstance)
        .map(ValidatingAdmissionPolicyBinding.class::cast)
        .findFirst()
        .orElseThrow();
  }

  private static String read(String path) throws IOException {
    return Files.readString(RealKubernetesExtension.repoRoot().resolve(path));
  }

  private static List<HasMetadata> load(KubernetesClient client, String yaml) {
    return client.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
  }
}
