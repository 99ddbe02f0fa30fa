package io.bloomoperator.testing.operator;

import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;

/**
 * Pods and reader reports for tests of status.readers on an API server without a kubelet: a Pod
 * object stays Pending but is live, with the name and UID a reader reports under.
 */
public final class ReaderPods {

  private ReaderPods() {}

  /** Creates Pod {@code name} (and the namespace's default ServiceAccount it needs). */
  public static Pod pod(KubernetesClient client, String namespace, String name) {
    // The ServiceAccount admission plugin wants the namespace's default account, which no
    // controller manager creates here.
    client
        .serviceAccounts()
        .inNamespace(namespace)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName("default").endMetadata().build())
        .createOr(existing -> existing.update());
    return client
        .pods()
        .inNamespace(namespace)
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withAutomountServiceAccountToken(false)
                .addNewContainer()
                .withName("app")
                .withImage("app")
                .endContainer()
                .endSpec()
                .build())
        .create();
  }

  /** A well-formed report of {@code podName}/{@code podUid} serving {@code version} of a filter. */
  public static Lease report(
      String namespace, String podName, String podUid, String filter, long version) {
    Instant now = Instant.now();
    Lease lease =
        ReaderReports.toLease(
            new ReaderReport(
                namespace,
                podName,
                podUid,
                filter,
                version,
                ReaderReport.NONE,
                null,
                now,
                now,
                Duration.ofHours(1)));
    lease
        .getMetadata()
        .setAnnotations(new java.util.HashMap<>(lease.getMetadata().getAnnotations()));
    return lease;
  }

  /** Creates {@code lease}. */
  public static void create(KubernetesClient client, Lease lease) {
    client
        .resources(Lease.class)
        .inNamespace(lease.getMetadata().getNamespace())
        .resource(lease)
        .create();
  }
}
