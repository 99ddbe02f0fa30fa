package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@RealKubernetes
class LocalSnapshotDirectoryTest {

  private static final String FILTER = "product-ids";

  @TempDir Path dir;

  @Test
  void servesLocalSnapshotWhileApiServerIsUnreachable(KubernetesClient client, TestNamespace ns)
      throws IOException {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 20_000);
    List<String> absent = TestKeys.strings("absent", 20_000);
    BloomFilterBits v1 = TestKeys.stringFilter(40_000, keys);
    publisher.publish(v1, keys.size(), 1, 9_999, SnapshotPublisher.Tamper.NONE);
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .localSnapshotDirectory(dir)
            .start()) {
      assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
    } // close() waits for the local write that follows the swap
    LocalSnapshotCache files = LocalSnapshots.cache(dir, ns.name(), FILTER);
    assertThat(files.manifestFile()).exists();
    assertThat(files.payloadFile(1)).exists();
    assertThat(leftoverTempFiles()).isEmpty();

    try (KubernetesClient unreachable = unreachableClient()) {
      // Ready as soon as start() returns: nothing waits for the API server.
      InformerRecorder informers = new InformerRecorder();
      try (LiveBloomFilter<String> offline =
          BloomFilterWatcher.builder(unreachable, ns.name(), FILTER, LiveKeyType.STRING)
              .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
              .localSnapshotDirectory(dir)
              .onInformerCreated(informers)
              .start()) {
        assertThat(offline.isReady()).isTrue();
        assertThat(offline.currentVersion()).isEqualTo(1);
        assertThat(offline.loads()).isEqualTo(1);
        for (List<String> set : List.of(keys, absent)) {
          for (String key : set) {
            assertThat(offline.mightContain(key)).as(key).isEqualTo(v1.mightContainString(key));
          }
        }
        // The watch keeps failing (and restarting) in the background; lookups are unaffected.
        await().atMost(Duration.ofSeconds(10)).until(() -> informers.starts() >= 2);
        assertThat(offline.currentVersion()).isEqualTo(1);
      }

      // Another namespace's watcher must not take this file even if it is renamed to its name.
      LocalSnapshotCache other = LocalSnapshots.cache(dir, "elsewhere", FILTER);
      Files.copy(files.manifestFile(), other.manifestFile());
      Files.copy(files.payloadFile(1), other.payloadFile(1));
      assertNotServed(unreachable, "elsewhere");

      // A single flipped payload bit: ignored, never served.
      byte[] payload = Files.readAllBytes(files.payloadFile(1));
      payload[payload.length / 2] ^= 0x01;
      Files.write(files.payloadFile(1), payload);
      assertNotServed(unreachable, ns.name());

      // A manifest file that is not JSON: ignored as well.
      Files.writeString(files.manifestFile(), "{ not json", StandardCharsets.UTF_8);
      assertNotServed(unreachable, ns.name());
    }
  }

  @Test
  void newerVersionReplacesLocalSnapshotAndOldPayloadIsRemoved(
      KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys1), keys1.size(), 1);
    LocalSnapshotCache files = LocalSnapshots.cache(dir, ns.name(), FILTER);
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .localSnapshotDirectory(dir)
            .start()) {
      assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
      await().atMost(Duration.ofSeconds(5)).until(() -> Files.exists(files.payloadFile(1)));
      publisher.publish(TestKeys.stringFilter(10_000, keys2), keys2.size(), 2);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> Files.exists(files.payloadFile(2)) && !Files.exists(files.payloadFile(1)));
    }
    // A restart with the API server available starts from v2 and stays there (same version
    // announced).
    try (LiveBloomFilter<String> restarted =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .localSnapshotDirectory(dir)
            .start()) {
      assertThat(restarted.currentVersion()).isEqualTo(2);
      await()
          .during(Duration.ofMillis(700))
          .atMost(Duration.ofSeconds(3))
          .until(() -> restarted.loads() == 1);
    }
  }

  @Test
  void splitBlockSnapshotIsStoredAndServedFromTheDirectory(
      KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 20_000);
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(20_000, 0.01));
    keys.forEach(builder::putString);
    BloomFilterBits split = builder.build();
    publisher.publish(split, keys.size(), 1);
    LocalSnapshotCache files = LocalSnapshots.cache(dir, ns.name(), FILTER);
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .localSnapshotDirectory(dir)
            .start()) {
      assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
      assertThat(live.currentManifest().orElseThrow().format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
    }
    assertThat(files.payloadFile(1)).exists();
    try (KubernetesClient unreachable = unreachableClient();
        LiveBloomFilter<String> offline =
            BloomFilterWatcher.builder(unreachable, ns.name(), FILTER, LiveKeyType.STRING)
                .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
                .localSnapshotDirectory(dir)
                .start()) {
      assertThat(offline.isReady()).isTrue();
      assertThat(offline.currentManifest().orElseThrow().format())
          .isEqualTo(FilterFormat.SPLIT_BLOCK);
      assertThat(keys).allMatch(offline::mightContain);
      for (String absent : TestKeys.strings("absent", 5_000)) {
        assertThat(offline.mightContain(absent)).isEqualTo(split.mightContainString(absent));
      }
    }
  }

  private void assertNotServed(KubernetesClient unreachable, String namespace) {
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(unreachable, namespace, FILTER, LiveKeyType.STRING)
            .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
            .localSnapshotDirectory(dir)
            .start()) {
      assertThat(live.isReady()).isFalse();
      assertThat(live.mightContain("k-1")).isFalse();
    }
  }

  private List<Path> leftoverTempFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(".tmp")).toList();
    }
  }

  /** A client for an API server that is not there: connections are refused at once. */
  private static KubernetesClient unreachableClient() {
    Config config =
        new ConfigBuilder(Config.empty())
            .withMasterUrl("https://127.0.0.1:1")
            .withConnectionTimeout(500)
            .withRequestTimeout(500)
            .withRequestRetryBackoffLimit(0)
            .withWatchReconnectLimit(0)
            .build();
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
