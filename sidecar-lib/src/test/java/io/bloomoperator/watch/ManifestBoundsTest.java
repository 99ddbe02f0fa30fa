package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A manifest is checked against the reader's limits and the filter's own chunk names before any
 * chunk is fetched or the filter allocated; the served filter keeps answering.
 */
@RealKubernetes
class ManifestBoundsTest {

  private static final String FILTER = "product-ids";
  private static final Duration READY = Duration.ofSeconds(10);

  @Test
  void manifestClaiming16GiBIsRefusedBeforeAnyChunkIsFetched(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 5_000);
    BloomFilterBits v1 = TestKeys.stringFilter(10_000, keys);
    publisher.publish(v1, keys.size(), 1);

    Manifest hostile = HostileManifest.claiming16GiB(FILTER, 2);
    hostile.validate();
    long totalBytes = hostile.totalBytes();
    assertThat(totalBytes).isGreaterThan(16L * 1024 * 1024 * 1024 - 16);
    publisher.createChunk(2, 0, HostileManifest.CHUNK0);

    RequestLog requests = new RequestLog();
    RecordingListener listener = new RecordingListener();
    try (KubernetesClient reader = requests.newClient(cluster);
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(reader, ns.name(), FILTER, LiveKeyType.STRING)
                .listener(listener)
                .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      long usedBefore = usedHeapAfterGc();

      publisher.writeManifestJson(hostile.toJson());
      await().atMost(READY).until(() -> !listener.failures.isEmpty());

      RecordingListener.Failure failure = listener.failures.get(0);
      assertThat(failure.version()).isEqualTo(2);
      assertThat(failure.exception())
          .isInstanceOf(SnapshotRefusedException.class)
          .hasMessageContaining(Long.toString(totalBytes))
          .hasMessageContaining("limit");
      assertThat(((SnapshotRefusedException) failure.exception()).reason())
          .isEqualTo(LoadFailureReason.TOO_LARGE);
      assertThat(requests.paths())
          .as("no chunk of v2 fetched")
          .noneMatch(path -> path.contains(SnapshotNames.chunkName(FILTER, 2, 0)));
      assertThat(usedHeapAfterGc() - usedBefore)
          .as("heap growth (bytes)")
          .isLessThan(256L * 1024 * 1024);
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys).allMatch(live::mightContain);
    }
  }

  @Test
  void manifestOfAnUnknownFormatIsRefusedAndAKnownLayoutSwitchIsServed(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys), keys.size(), 1);
    BloomFilterBits.Builder split =
        BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(10_000, 0.01));
    keys.forEach(split::putString);
    BloomFilterBits splitBits = split.build();
    // v2: valid split-block chunks under a layout id this reader does not know (a newer writer's).
    Manifest v2 =
        publisher
            .createChunks(splitBits, keys.size(), 2, 1 << 20, SnapshotPublisher.Tamper.NONE)
            .manifest();
    String unknown = v2.toJson().replace(Manifest.FORMAT_SPLIT_BLOCK, "parquet-splitblock-v2");

    RequestLog requests = new RequestLog();
    RecordingListener listener = new RecordingListener();
    try (KubernetesClient reader = requests.newClient(cluster);
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(reader, ns.name(), FILTER, LiveKeyType.STRING)
                .listener(listener)
                .start()) {
      assertThat(live.awaitReady(READY)).isTrue();

      publisher.writeManifestJson(unknown);
      await().atMost(READY).until(() -> !listener.failures.isEmpty());
      assertThat(listener.failures.get(0).exception())
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("format is 'parquet-splitblock-v2'");
      assertThat(live.failures(LoadFailureReason.VERIFICATION)).isPositive();
      assertThat(requests.paths())
          .as("no chunk of v2 fetched")
          .noneMatch(path -> path.contains(SnapshotNames.chunkName(FILTER, 2, 0)));
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(live.currentManifest().orElseThrow().format()).isEqualTo(FilterFormat.GUAVA);
      assertThat(keys).allMatch(live::mightContain);

      // The same chunks under the id this reader knows: served, no restart.
      publisher.writeManifestJson(v2.toJson());
      await().atMost(READY).until(() -> live.currentVersion() == 2);
      assertThat(live.currentManifest().orElseThrow().format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
      assertThat(keys).allMatch(live::mightContain);
    }
  }

  @Test
  void manifestNamingForeignConfigMapIsRefusedWithoutFetchingIt(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys1), keys1.size(), 1);

    // A complete, valid v2 payload, stored in a ConfigMap that is not a chunk of this filter: a
    // reader following the manifest's names would load it (or leak a foreign object's size).
    SnapshotPublisher.Published v2 =
        new SnapshotPublisher(client, ns.name(), "elsewhere")
            .createChunks(
                TestKeys.stringFilter(10_000, keys2),
                keys2.size(),
                2,
                1_000_000,
                SnapshotPublisher.Tamper.NONE);
    String foreign = "app-settings";
    ConfigMap foreignMap =
        SnapshotConfigMaps.chunk(ns.name(), "elsewhere", 2, 0, v2.payload(), v2.payload().length);
    foreignMap.getMetadata().setName(foreign);
    foreignMap.getMetadata().setLabels(null);
    client.configMaps().inNamespace(ns.name()).resource(foreignMap).create();
    Manifest real = v2.manifest();
    Manifest.ChunkRef only = real.chunks().get(0);
    Manifest pointing =
        new Manifest(
            real.format(),
            real.version(),
            FILTER,
            real.keyType(),
            real.numBits(),
            real.numHashFunctions(),
            real.keyCount(),
            real.expectedFpp(),
            real.totalBytes(),
            real.sha256(),
            real.createdAt(),
            List.of(new Manifest.ChunkRef(foreign, only.bytes(), only.sha256())));

    RequestLog requests = new RequestLog();
    RecordingListener listener = new RecordingListener();
    try (KubernetesClient reader = requests.newClient(cluster);
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(reader, ns.name(), FILTER, LiveKeyType.STRING)
                .listener(listener)
                .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      publisher.writeManifestJson(pointing.toJson());
      await().atMost(READY).until(() -> !listener.failures.isEmpty());

      assertThat(listener.failures.get(0).exception())
          .isInstanceOf(SnapshotRefusedException.class)
          .hasMessageContaining(foreign)
          .hasMessageContaining(SnapshotNames.chunkName(FILTER, 2, 0));
      assertThat(((SnapshotRefusedException) listener.failures.get(0).exception()).reason())
          .isEqualTo(LoadFailureReason.FOREIGN_CHUNK);
      assertThat(requests.anyPathEndsWith("/configmaps/" + foreign)).isFalse();
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys1).allMatch(live::mightContain);
    }
  }

  @Test
  void configuredLimitsRefuseLargerSnapshots(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 10_000);
    BloomFilterBits bits = TestKeys.stringFilter(20_000, keys);
    publisher.publish(bits, keys.size(), 1, 5_000, SnapshotPublisher.Tamper.NONE);
    long size = 6 + bits.numBits() / 8;

    RecordingListener bySize = new RecordingListener();
    RecordingListener byCount = new RecordingListener();
    try (LiveBloomFilter<String> small =
            BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                .maxSnapshotBytes(size - 1)
                .listener(bySize)
                .start();
        LiveBloomFilter<String> few =
            BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                .maxChunks(2)
                .listener(byCount)
                .start();
        LiveBloomFilter<String> exact =
            BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                .maxSnapshotBytes(size)
                .start()) {
      assertThat(exact.awaitReady(READY)).isTrue();
      await().atMost(READY).until(() -> !bySize.failures.isEmpty() && !byCount.failures.isEmpty());
      assertThat(bySize.failures.get(0).exception())
          .isInstanceOf(SnapshotRefusedException.class)
          .hasMessageContaining("limit of " + (size - 1) + " bytes");
      assertThat(byCount.failures.get(0).exception())
          .isInstanceOf(SnapshotRefusedException.class)
          .hasMessageContaining("limit of 2");
      assertThat(small.isReady()).isFalse();
      assertThat(few.isReady()).isFalse();
      assertThat(keys).allMatch(exact::mightContain);
    }
  }

  private static long usedHeapAfterGc() {
    Runtime runtime = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return runtime.totalMemory() - runtime.freeMemory();
  }
}
