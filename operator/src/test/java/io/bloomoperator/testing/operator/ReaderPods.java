package io.bloomoperator.testing.operator;

import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.testing.ReaderPod;
import io.fabric8.kubernetes.api.model.Pod;
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
    return ReaderPod.create(client, namespace, name);
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
