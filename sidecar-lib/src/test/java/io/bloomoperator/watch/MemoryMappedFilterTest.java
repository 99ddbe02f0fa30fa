package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory-mapped mode against a real API server: whole loads and delta swaps serve from a
 * verified, owner-only file in the local snapshot directory and answer exactly as the heap mode, in
 * both layouts and for both key types; a file changed on disk is never carried into the next
 * version nor served after a restart; a full, missing or unwritable directory fails the load with
 * {@link LoadFailureReason#DISK} while the served filter keeps answering.
 */
@RealKubernetes
class MemoryMappedFilterTest {

  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path dir;

  @Test
  void wholeLoadAndDeltaSwapAnswerAsTheHeapModeInBothLayoutsAndKeyTypes(
      KubernetesClient client, TestNamespace ns) throws Exception {
    for (FilterFormat format : FilterFormat.values()) {
      for (KeyType keyType : KeyType.values()) {
        String filter = ("mm-" + format.crdName() + "-" + keyType.crdName()).toLowerCase();
        Keys keys = new Keys(keyType, new Random(filter.hashCode()));
        BloomFilterBits v1 = build(format, keyType, keys.present);
        SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), filter);
        Manifest m1 = publisher.publish(v1, keys.present.size(), 1).manifest();
        LocalSnapshotCache files = LocalSnapshots.cache(dir, ns.name(), filter);
        try (LiveBloomFilter<Object> mapped = watch(client, ns.name(), filter, keyType, true);
            LiveBloomFilter<Object> heap = watch(client, ns.name(), filter, keyType, false)) {
          assertThat(mapped.awaitReady(WAIT)).isTrue();
          assertThat(heap.awaitReady(WAIT)).isTrue();
          assertSameAnswers(mapped, heap, v1, keys);
          assertThat(files.payloadFile(1)).exists();
          assertThat(
                  PosixFilePermissions.toString(
                      Files.getPosixFilePermissions(files.payloadFile(1))))
              .isEqualTo("rw-------");
          assertThat(Files.readAllBytes(files.payloadFile(1)))
              .isEqualTo(SnapshotEncoder.toByteArray(v1));

          keys.churn(500);
          BloomFilterBits v2 = build(format, keyType, keys.present);
          publisher.publishDelta(m1, v1, v2, keys.present.size(), 2);
          await()
              .atMost(WAIT)
              .until(() -> mapped.currentVersion() == 2 && heap.currentVersion() == 2);
          assertSameAnswers(mapped, heap, v2, keys);
          // The old file goes once the new one is served; only the served file stays.
          await().atMost(WAIT).until(() -> !Files.exists(files.payloadFile(1)));
          assertThat(Files.readAllBytes(files.payloadFile(2)))
              .isEqualTo(SnapshotEncoder.toByteArray(v2));
          assertThat(mapped.failures()).isZero();
        }
        assertThat(payloadAndTempFiles(filter)).containsExactly(files.payloadFile(2));
      }
    }
  }

  @Test
  void aFileChangedOnDiskIsNotCarriedIntoTheNextVersionNorServedAfterARestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String filter = "tampered";
    Keys keys = new Keys(KeyType.STRING, new Random(5));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, KeyType.STRING, keys.present);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), filter);
    Manifest m1 = publisher.publish(v1, keys.present.size(), 1).manifest();
    LocalSnapshotCache files = LocalSnapshots.cache(dir, ns.name(), filter);
    try (LiveBloomFilter<Object> mapped = watch(client, ns.name(), filter, KeyType.STRING, true)) {
      assertThat(mapped.awaitReady(WAIT)).isTrue();
      // Someone clears set bits in the served file between two versions.
      byte[] payload = Files.readAllBytes(files.payloadFile(1));
      try (RandomAccessFile file = new RandomAccessFile(files.payloadFile(1).toFile(), "rw")) {
        for (int i = 1_000; i < 1_000 + 4_096; i++) {
          file.seek(i);
          file.write(0);
        }
      }
      assertThat(Files.readAllBytes(files.payloadFile(1))).isNotEqualTo(payload);

      keys.churn(200);
      BloomFilterBits v2 = build(FilterFormat.GUAVA, KeyType.STRING, keys.present);
      publisher.publishDelta(m1, v1, v2, keys.present.size(), 2);
      await().atMost(WAIT).until(() -> mapped.currentVersion() == 2);
      // v2 came from the base and the chain, not from the changed file plus the delta.
      assertThat(Files.readAllBytes(files.payloadFile(2)))
          .isEqualTo(SnapshotEncoder.toByteArray(v2));
      for (Object key : keys.present) {
        assertThat(mapped.mightContain(key)).as("%s", key).isTrue();
      }
    }

    // The stored v2 changed on disk while no reader runs: a restart does not serve it.
    try (RandomAccessFile file = new RandomAccessFile(files.payloadFile(2).toFile(), "rw")) {
      file.seek(100);
      int b = file.read();
      file.seek(100);
      file.write(b ^ 0x04);
    }
    try (KubernetesClient unreachable = unreachableClient();
        LiveBloomFilter<Object> restarted =
            watch(unreachable, ns.name(), filter, KeyType.STRING, true)) {
      assertThat(restarted.isReady()).isFalse();
    }
  }

  @Test
  void aFullOrUnwritableDirectoryFailsWithDiskAndKeepsServing(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String filter = "disk";
    Keys keys = new Keys(KeyType.LONG, new Random(9));
    BloomFilterBits v1 = build(FilterFormat.SPLIT_BLOCK, KeyType.LONG, keys.present);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), filter);
    publisher.publish(v1, keys.present.size(), 1);
    Path directory = dir.resolve("cache");
    AtomicLong usable = new AtomicLong(Long.MAX_VALUE);
    @SuppressWarnings("unchecked")
    LiveBloomFilter<Object> mapped =
        (LiveBloomFilter<Object>)
            (LiveBloomFilter<?>)
                BloomFilterWatcher.builder(client, ns.name(), filter, LiveKeyType.LONG)
                    .localSnapshotDirectory(directory)
                    .memoryMapped(true)
                    .usableSpace(d -> usable.get())
                    .retryBackoff(Duration.ofMillis(100), Duration.ofMillis(200))
                    .start();
    try (LiveBloomFilter<Object> live = mapped) {
      assertThat(live.awaitReady(WAIT)).isTrue();

      // The disk has less room than the next version needs: nothing is fetched or written.
      usable.set(v1.numBits() / 8 - 1);
      BloomFilterBits v2 = build(FilterFormat.SPLIT_BLOCK, KeyType.LONG, keys.churned(100));
      publisher.publish(v2, keys.present.size(), 2);
      await().atMost(WAIT).until(() -> live.failures(LoadFailureReason.DISK) >= 1);
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(live.lastFailure().orElseThrow().reason()).isEqualTo(LoadFailureReason.DISK);
      assertAnswers(live, v1, keys);
      assertThat(payloadAndTempFiles(filter, directory))
          .containsExactly(LocalSnapshots.cache(directory, ns.name(), filter).payloadFile(1));

      // The directory is gone and a file is in its place: not writable at all.
      long before = live.failures(LoadFailureReason.DISK);
      usable.set(Long.MAX_VALUE);
      try (Stream<Path> stored = Files.list(directory)) {
        for (Path file : stored.toList()) {
          Files.delete(file);
        }
      }
      Files.delete(directory);
      Files.writeString(directory, "not a directory");
      await().atMost(WAIT).until(() -> live.failures(LoadFailureReason.DISK) > before);
      assertThat(live.currentVersion()).isEqualTo(1);
      // v1 is still mapped: its deleted file lives on until the mapping is released.
      assertAnswers(live, v1, keys);

      // Room again: the retry loads v2.
      Files.delete(directory);
      await().atMost(WAIT).until(() -> live.currentVersion() == 2);
      assertAnswers(live, v2, keys);
    }
  }

  @Test
  void memoryMappedNeedsADirectory(KubernetesClient client, TestNamespace ns) {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                BloomFilterWatcher.builder(client, ns.name(), "x", LiveKeyType.STRING)
                    .memoryMapped(true)
                    .start())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("localSnapshotDirectory");
  }

  @SuppressWarnings("unchecked")
  private LiveBloomFilter<Object> watch(
      KubernetesClient client, String namespace, String filter, KeyType keyType, boolean mapped) {
    BloomFilterWatcher.Builder<?> builder =
        BloomFilterWatcher.builder(client, namespace, filter, LiveKeyType.of(keyType))
            .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED);
    if (mapped) {
      builder.localSnapshotDirectory(dir).memoryMapped(true);
    }
    return (LiveBloomFilter<Object>) (LiveBloomFilter<?>) builder.start();
  }

  private static void assertSameAnswers(
      LiveBloomFilter<Object> mapped,
      LiveBloomFilter<Object> heap,
      BloomFilterBits bits,
      Keys keys) {
    int maybe = 0;
    for (Object key : keys.probes()) {
      boolean expected = bits.mightContain(key);
      assertThat(heap.mightContain(key)).as("heap %s", key).isEqualTo(expected);
      assertThat(mapped.mightContain(key)).as("mapped %s", key).isEqualTo(expected);
      maybe += expected ? 1 : 0;
    }
    assertThat(maybe).isGreaterThanOrEqualTo(keys.present.size()).isLessThan(keys.probes().size());
  }

  private static void assertAnswers(LiveBloomFilter<Object> live, BloomFilterBits bits, Keys keys) {
    for (Object key : keys.probes()) {
      assertThat(live.mightContain(key)).as("%s", key).isEqualTo(bits.mightContain(key));
    }
  }

  private List<Path> payloadAndTempFiles(String filter) throws IOException {
    return payloadAndTempFiles(filter, dir);
  }

  private static List<Path> payloadAndTempFiles(String filter, Path directory) throws IOException {
    try (Stream<Path> files = Files.list(directory)) {
      return files
          .filter(f -> f.getFileName().toString().contains("." + filter + "."))
          .filter(f -> !f.getFileName().toString().endsWith(".manifest.json"))
          .toList();
    }
  }

  /** A filter sized for 1M keys (about 1.2 MB: two chunks) holding {@code keys}. */
  private static BloomFilterBits build(FilterFormat format, KeyType keyType, List<Object> keys) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.SPLIT_BLOCK
            ? BloomFilterBits.builder(keyType, SplitBlockSizing.forKeys(1_000_000, 0.01))
            : BloomFilterBits.builder(keyType, BloomFilterSizing.forKeys(1_000_000, 0.01));
    keys.forEach(builder::put);
    return builder.build();
  }

  /** The keys a filter holds, and as many that it never held. */
  private static final class Keys {
    final KeyType keyType;
    final Random random;
    final List<Object> present = new ArrayList<>();
    final List<Object> absent = new ArrayList<>();

    Keys(KeyType keyType, Random random) {
      this.keyType = keyType;
      this.random = random;
      for (int i = 0; i < 50_000; i++) {
        present.add(next());
        absent.add(next());
      }
    }

    Object next() {
      return keyType == KeyType.STRING ? "key-" + random.nextLong() : (Object) random.nextLong();
    }

    /** Replaces {@code n} present keys by new ones. */
    void churn(int n) {
      for (int i = 0; i < n; i++) {
        absent.add(present.remove(random.nextInt(present.size())));
        present.add(next());
      }
    }

    List<Object> churned(int n) {
      churn(n);
      return present;
    }

    List<Object> probes() {
      List<Object> all = new ArrayList<>(present);
      all.addAll(absent);
      return all;
    }
  }

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
