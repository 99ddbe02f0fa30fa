package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The watcher needs nothing beyond a namespaced Role with get, list and watch on configmaps. */
@RealKubernetes
class LeastPrivilegeTest {

  private static final String USER = "bloom-reader";

  @Test
  void worksWithGetListWatchOnConfigMapsOnly(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) {
    ConfigMapReaderRole.grant(admin, ns.name(), "bloom-reader", USER);
    SnapshotPublisher publisher = new SnapshotPublisher(admin, ns.name(), "ids");
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys1), keys1.size(), 1);

    Config config = cluster.clientConfig();
    config.setImpersonateUsername(USER);
    try (KubernetesClient reader = new KubernetesClientBuilder().withConfig(config).build()) {
      // The Role is really all the user has (otherwise this test would prove nothing).
      assertThatThrownBy(() -> reader.secrets().inNamespace(ns.name()).list())
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
      await().atMost(Duration.ofSeconds(10)).until(() -> canList(reader, ns.name()));

      RecordingListener listener = new RecordingListener();
      try (LiveBloomFilter<String> live =
          BloomFilterWatcher.builder(reader, ns.name(), "ids", LiveKeyType.STRING)
              .listener(listener)
              .start()) {
        assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
        publisher.publish(TestKeys.stringFilter(10_000, keys2), keys2.size(), 2);
        await().atMost(Duration.ofSeconds(10)).until(() -> live.currentVersion() == 2);
        assertThat(keys2).allMatch(live::mightContain);
        assertThat(listener.failures).isEmpty();
      }
    }
  }

  private static boolean canList(KubernetesClient reader, String namespace) {
    try {
      reader.configMaps().inNamespace(namespace).list();
      return true;
    } catch (KubernetesClientException e) {
      return false; // the RoleBinding may take a moment to reach the authorizer's cache
    }
  }
}
