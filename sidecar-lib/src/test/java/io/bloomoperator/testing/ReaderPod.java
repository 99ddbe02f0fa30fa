package io.bloomoperator.testing;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * A Pod for a reader to report as, on an API server without a kubelet: the object stays Pending but
 * is live to the operator (it exists, with the name and UID the report names, not deleted, not
 * terminated), which is all the operator checks before counting a reader report.
 */
public final class ReaderPod {

  private ReaderPod() {}

  /** Creates Pod {@code name} (and the namespace's default ServiceAccount it needs). */
  public static Pod create(KubernetesClient client, String namespace, String name) {
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
}
