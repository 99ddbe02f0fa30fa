package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The API server goes away (every connection dropped, new ones refused: what a client sees when it
 * restarts) while a new version is published; lookups keep answering from the loaded filter
 * throughout, and the new version is loaded once the server is back — through the watch, not the
 * periodic resync, which is switched off here.
 */
@RealKubernetes
class ApiOutageTest {

  private static final String FILTER = "product-ids";

  @Test
  void versionPublishedDuringAnOutageIsLoadedAfterIt(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    SnapshotPublisher publisher = new SnapshotPublisher(admin, ns.name(), FILTER);
    List<String> v1Keys = TestKeys.strings("v1", 5_000);
    List<String> v2Keys = TestKeys.strings("v2", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, v1Keys), v1Keys.size(), 1);

    Config direct = cluster.clientConfig();
    URI server = URI.create(direct.getMasterUrl());
    try (TcpProxy proxy = new TcpProxy(server.getHost(), server.getPort())) {
      Config viaProxy = cluster.clientConfig();
      viaProxy.setMasterUrl("https://" + server.getHost() + ":" + proxy.port());
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(viaProxy).build();
          LiveBloomFilter<String> live =
              BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                  .resync(Duration.ZERO)
                  .start()) {
        assertThat(live.awaitReady(Duration.ofSeconds(20))).isTrue();
        assertThat(live.currentVersion()).isEqualTo(1);

        assertThat(proxy.accepted()).as("the watcher talks through the proxy").isPositive();
        proxy.cut();
        publisher.publish(
            TestKeys.stringFilter(10_000, v1Keys, v2Keys), v1Keys.size() + v2Keys.size(), 2);
        // Down for a while: the watch fails, reconnects fail; lookups still answer from v1.
        for (int i = 0; i < 20; i++) {
          assertThat(live.mightContain(v1Keys.get(i * 100))).isTrue();
          Thread.sleep(150);
        }
        assertThat(live.currentVersion()).isEqualTo(1);

        int beforeRestore = proxy.accepted();
        proxy.restore();
        await().atMost(Duration.ofSeconds(90)).until(() -> live.currentVersion() == 2);
        assertThat(proxy.accepted())
            .as("reconnected after the outage")
            .isGreaterThan(beforeRestore);
        assertThat(v2Keys).allMatch(live::mightContain);
        assertThat(v1Keys).allMatch(live::mightContain);
      }
    }
  }
}
