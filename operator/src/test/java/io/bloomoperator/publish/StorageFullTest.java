package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

/** Which API server answers mean "etcd is full", and which do not. */
class StorageFullTest {

  private static KubernetesClientException answer(int code, String message) {
    return new KubernetesClientException(
        "Failure executing: POST at: https://127.0.0.1/api/v1/namespaces/x/configmaps. Message: "
            + message,
        code,
        new StatusBuilder().withCode(code).withMessage(message).build());
  }

  @Test
  void etcdNoSpaceAsKubeApiserverForwardsItIsRecognised() {
    assertThat(StorageFull.causedBy(answer(500, "etcdserver: mvcc: database space exceeded")))
        .isTrue();
  }

  @Test
  void recognisedWhenWrappedOrWithoutStatus() {
    KubernetesClientException bare =
        new KubernetesClientException("etcdserver: mvcc: database space exceeded");
    assertThat(StorageFull.causedBy(bare)).isTrue();
    assertThat(StorageFull.causedBy(new IllegalStateException("publishing failed", bare))).isTrue();
  }

  @Test
  void otherRefusalsAreNotStorageFull() {
    // A Kubernetes ResourceQuota is a different limit (PublishFailed), as are size and RBAC errors.
    assertThat(
            StorageFull.causedBy(
                answer(
                    403,
                    "configmaps \"c\" is forbidden: exceeded quota: q, requested: count/configmaps=1")))
        .isFalse();
    assertThat(StorageFull.causedBy(answer(422, "ConfigMap \"c\" is invalid: []: Too long")))
        .isFalse();
    assertThat(StorageFull.causedBy(answer(500, "etcdserver: request timed out"))).isFalse();
    assertThat(StorageFull.causedBy(new KubernetesClientException((String) null))).isFalse();
    assertThat(StorageFull.causedBy(null)).isFalse();
  }

  @Test
  void aCauseLoopEnds() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    assertThat(StorageFull.causedBy(b)).isFalse();
  }
}
