package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Local adds as {@link BloomFilterWatcher} wires them: the watcher thread sweeps expired keys on
 * its own. The filter serves a local snapshot and its client points at a closed port, so no API
 * server takes part (the drop on a swap is covered with a real one in LiveBloomFilterMetricsTest).
 */
class LocalAddsWatcherTest {

  @Test
  void theWatcherExpiresAKeyNoVersionShowsAndCountsIt(@TempDir Path directory) throws IOException {
    LocalSnapshots.write(
        directory, "shop", "ids", TestKeys.stringFilter(1000, List.of("a", "b")), 2);
    try (KubernetesClient client =
            new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
                .build();
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(client, "shop", "ids", LiveKeyType.STRING)
                .localSnapshotDirectory(directory)
                .resync(Duration.ZERO)
                .readerReports(false)
                .localAdds(10, Duration.ofSeconds(2))
                .start()) {
      assertThat(live.isReady()).isTrue();
      assertThat(live.mightContain("never-published")).isFalse();

      assertThat(live.addLocal("never-published")).isTrue();
      assertThat(live.addLocal("a")).isTrue(); // shown by the served version: dropped as arrived
      assertThat(live.mightContain("never-published")).isTrue();

      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> live.localAddsExpired() == 1);
      assertThat(live.localAdds()).isZero();
      assertThat(live.localAddsArrived()).isEqualTo(1);
      assertThat(live.mightContain("never-published")).isFalse();
      assertThat(live.mightContain("a")).isTrue();
    }
  }
}
