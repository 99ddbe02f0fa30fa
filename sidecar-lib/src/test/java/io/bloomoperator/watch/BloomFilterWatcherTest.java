package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

@RealKubernetes
class BloomFilterWatcherTest {

  private static final String FILTER = "product-ids";
  private static final Duration READY = Duration.ofSeconds(10);

  @Test
  void loadsFirstSnapshotThenSwapsWithoutFalseNegatives(KubernetesClient client, TestNamespace ns)
      throws InterruptedException {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> common = TestKeys.strings("common", 20_000);
    List<String> onlyV1 = TestKeys.strings("v1", 5_000);
    List<String> onlyV2 = TestKeys.strings("v2", 5_000);
    List<String> absent = TestKeys.strings("absent", 5_000);
    BloomFilterBits v1 = TestKeys.stringFilter(60_000, common, onlyV1);
    BloomFilterBits v2 = TestKeys.stringFilter(60_000, common, onlyV2);
    // Small chunks: several per snapshot, with words split across chunk boundaries.
    publisher.publish(v1, 25_000, 1, 7_001, SnapshotPublisher.Tamper.NONE);

    RecordingListener listener = new RecordingListener();
    InformerRecorder informers = new InformerRecorder();
    // A fast resync, so that polls also run while the manifest is re-announced below.
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .listener(listener)
            .resync(Duration.ofMillis(100))
            .onInformerCreated(informers)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(live.isReady()).isTrue();
      assertThat(live.currentVersion()).isEqualTo(1);
      assertAnswersLike(live, v1, common, onlyV1, onlyV2, absent);
      assertThat(onlyV1).allMatch(live::mightContain);

      // Readers hammer keys present in both versions while v2 is swapped in.
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong falseNegatives = new AtomicLong();
      Set<Long> versionsSeen = ConcurrentHashMap.newKeySet();
      List<Thread> readers = new ArrayList<>();
      for (int r = 0; r < 2; r++) {
        Thread reader =
            new Thread(
                () -> {
                  while (!stop.get()) {
                    for (String key : common) {
                      if (!live.mightContain(key)) {
                        falseNegatives.incrementAndGet();
                      }
                    }
                    versionsSeen.add(live.currentVersion());
                  }
                });
        reader.start();
        readers.add(reader);
      }
      await().atMost(READY).until(() -> versionsSeen.contains(1L));
      publisher.publish(v2, 25_000, 2, 7_001, SnapshotPublisher.Tamper.NONE);
      await().atMost(READY).until(() -> live.currentVersion() == 2);
      await().atMost(READY).until(() -> versionsSeen.contains(2L));
      stop.set(true);
      for (Thread reader : readers) {
        reader.join();
      }

      assertThat(falseNegatives.get()).isZero();
      assertAnswersLike(live, v2, common, onlyV1, onlyV2, absent);
      assertThat(onlyV2).allMatch(live::mightContain);
      assertThat(live.loads()).isEqualTo(2);
      assertThat(live.failures()).isZero();
      assertThat(live.lookups()).isGreaterThan(2L * common.size());
      assertThat(listener.updates)
          .extracting(RecordingListener.Update::oldVersion, RecordingListener.Update::newVersion)
          .containsExactly(tuple(LiveBloomFilter.NO_VERSION, 1L), tuple(1L, 2L));

      // The janitor edits annotations of the manifest: same version, no reload.
      int startsBefore = informers.starts();
      publisher.annotateManifest("bloomoperator.io/touched", "yes");
      // The event and the polls of these 500 ms (about five) all see it; none may reload.
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(2))
          .until(() -> live.loads() == 2);
      assertThat(informers.starts()).isEqualTo(startsBefore);
    }
  }

  @Test
  void tamperedChunkIsRejectedAndCurrentFilterKept(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 10_000);
    List<String> keys2 = TestKeys.strings("two", 10_000);
    List<String> keys3 = TestKeys.strings("three", 10_000);
    BloomFilterBits v1 = TestKeys.stringFilter(30_000, keys1);
    publisher.publish(v1, keys1.size(), 1, 10_000, SnapshotPublisher.Tamper.NONE);

    RecordingListener listener = new RecordingListener();
    InformerRecorder informers = new InformerRecorder();
    // A fast resync, so that polls also run while the manifest is re-announced below.
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .listener(listener)
            .resync(Duration.ofMillis(100))
            .onInformerCreated(informers)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();

      // v2: one byte of chunk 1 flipped after the manifest took its digest.
      publisher.publish(
          TestKeys.stringFilter(30_000, keys2),
          keys2.size(),
          2,
          10_000,
          (index, bytes) -> {
            if (index == 1) {
              bytes[17] ^= 0x40;
            }
            return bytes;
          });
      await().atMost(READY).until(() -> !listener.failures.isEmpty());
      RecordingListener.Failure failure = listener.failures.get(0);
      assertThat(failure.version()).isEqualTo(2);
      assertThat(failure.exception())
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("chunk 1")
          .hasMessageContaining("sha256 mismatch");
      assertThat(live.failures()).isGreaterThanOrEqualTo(1);
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys1).allMatch(live::mightContain);
      assertAnswersLike(live, v1, keys1, keys2);

      // It keeps being retried (and keeps failing) until something newer arrives.
      await().atMost(READY).until(() -> live.failures() >= 2);
      assertThat(live.currentVersion()).isEqualTo(1);

      BloomFilterBits v3 = TestKeys.stringFilter(30_000, keys3);
      publisher.publish(v3, keys3.size(), 3, 10_000, SnapshotPublisher.Tamper.NONE);
      await().atMost(READY).until(() -> live.currentVersion() == 3);
      assertThat(keys3).allMatch(live::mightContain);
      assertAnswersLike(live, v3, keys1, keys2, keys3);
      long failuresAfterV3 = live.failures();
      assertThat(listener.updates)
          .extracting(RecordingListener.Update::newVersion)
          .containsExactly(1L, 3L);
      // The v2 retry was cancelled by v3 (backoff 1 s, 2 s...: a retry would have shown by now).
      await()
          .during(Duration.ofMillis(2_500))
          .atMost(Duration.ofSeconds(4))
          .until(() -> live.failures() == failuresAfterV3);
    }
  }

  @Test
  void missingChunkIsRetriedUntilItAppears(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 10_000);
    BloomFilterBits bits = TestKeys.stringFilter(20_000, keys);
    // Chunks first, then chunk 2 deleted again: the manifest points at a chunk that does not exist
    // (yet).
    SnapshotPublisher.Published published =
        publisher.createChunks(bits, keys.size(), 1, 5_000, SnapshotPublisher.Tamper.NONE);
    String chunk2 = SnapshotNames.chunkName(FILTER, 1, 2);
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(chunk2)
        .withTimeout(10, TimeUnit.SECONDS)
        .delete();
    byte[] chunk2Bytes = Arrays.copyOfRange(published.payload(), 2 * 5_000, 3 * 5_000);
    publisher.writeManifest(published.manifest());

    RecordingListener listener = new RecordingListener();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
            .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
            .listener(listener)
            .start()) {
      await().atMost(READY).until(() -> listener.failures.size() >= 2);
      assertThat(listener.failures.get(0).exception())
          .hasMessageContaining("chunk 2")
          .hasMessageContaining("missing");
      assertThat(live.isReady()).isFalse();
      assertThat(live.mightContain(keys.get(0))).isFalse();

      publisher.createChunk(1, 2, chunk2Bytes);
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys).allMatch(live::mightContain);
    }
  }

  @Test
  void beforeFirstSnapshotFailOpenAndFailClosed(KubernetesClient client, TestNamespace ns) {
    try (LiveBloomFilter<String> open =
            BloomFilterWatcher.watch(client, ns.name(), FILTER, LiveKeyType.STRING);
        LiveBloomFilter<Long> closed =
            BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.LONG)
                .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
                .start()) {
      assertThat(open.awaitReady(Duration.ofMillis(700))).isFalse();
      assertThat(closed.awaitReady(Duration.ofMillis(10))).isFalse();
      assertThat(open.isReady()).isFalse();
      assertThat(closed.isReady()).isFalse();
      assertThat(open.currentVersion()).isEqualTo(LiveBloomFilter.NO_VERSION);
      assertThat(open.currentManifest()).isEmpty();
      assertThat(open.mightContain("anything")).isTrue();
      assertThat(open.mightContain("")).isTrue();
      assertThat(closed.mightContain(42L)).isFalse();
      assertThat(open.lookups()).isEqualTo(2);
      assertThat(open.loads()).isZero();
      assertThat(open.failures()).isZero(); // no manifest is not a failure
    }
  }

  @Test
  void manifestDeletedAndRecreatedWithNewVersionIsPickedUp(
      KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys1), keys1.size(), 1);

    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .resync(Duration.ofMillis(100))
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      publisher.deleteManifest();
      await().atMost(READY).until(() -> publisher.manifestConfigMap() == null);
      // Nor do the polls of these 500 ms (about five), which find no manifest.
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(2))
          .until(() -> live.currentVersion() == 1);
      assertThat(keys1).allMatch(live::mightContain);

      BloomFilterBits v2 = TestKeys.stringFilter(10_000, keys2);
      publisher.publish(v2, keys2.size(), 2);
      await().atMost(READY).until(() -> live.currentVersion() == 2);
      assertThat(keys2).allMatch(live::mightContain);
      assertAnswersLike(live, v2, keys1, keys2);
    }
  }

  @Test
  void recreatedFilterStartingOverAtVersionOneIsLoaded(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> oldKeys = TestKeys.strings("old", 5_000);
    List<String> newKeys = TestKeys.strings("new", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, oldKeys), oldKeys.size(), 5);
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.watch(client, ns.name(), FILTER, LiveKeyType.STRING)) {
      assertThat(live.awaitReady(READY)).isTrue();
      publisher.deleteManifest();
      BloomFilterBits fresh = TestKeys.stringFilter(10_000, newKeys);
      publisher.publish(fresh, newKeys.size(), 1);
      await().atMost(READY).until(() -> live.currentVersion() == 1);
      assertAnswersLike(live, fresh, oldKeys, newKeys);
    }
  }

  @Test
  void stoppedInformerIsRestartedAndCatchesUp(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys1), keys1.size(), 1);

    InformerRecorder informer = new InformerRecorder();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .onInformerCreated(informer)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(informer.starts()).isEqualTo(1);

      // As when fabric8 gives up on a non-410 error: stopped() completes exceptionally. The
      // informer is
      // stopped when this returns and a restart is scheduled (1 s); v2 is published while
      // disconnected.
      informer.failLatest(new IllegalStateException("simulated watch failure"));
      BloomFilterBits v2 = TestKeys.stringFilter(10_000, keys2);
      publisher.publish(v2, keys2.size(), 2);
      assertThat(keys1).allMatch(live::mightContain); // still serving v1 meanwhile

      await().atMost(READY).until(() -> live.currentVersion() == 2);
      assertThat(informer.starts()).isEqualTo(2);
      assertAnswersLike(live, v2, keys1, keys2);

      // And the restarted informer is a working watch, not just a one-off list.
      List<String> keys3 = TestKeys.strings("three", 5_000);
      publisher.publish(TestKeys.stringFilter(10_000, keys3), keys3.size(), 3);
      await().atMost(READY).until(() -> live.currentVersion() == 3);
      assertThat(informer.starts()).isEqualTo(2);
    }
  }

  @Test
  void resyncPollFindsUpdateMissedWhileDisconnected(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys1), keys1.size(), 1);

    // The informer restart waits 30 s, so only the 1 s resync poll can find v2 in time.
    InformerRecorder informers = new InformerRecorder();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .retryBackoff(Duration.ofSeconds(30), Duration.ofSeconds(30))
            .jitter(() -> 1.0)
            .resync(Duration.ofSeconds(1))
            .onInformerCreated(informers)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      informers.failLatest(new IllegalStateException("simulated watch failure"));
      publisher.publish(TestKeys.stringFilter(10_000, keys2), keys2.size(), 2);
      await().atMost(READY).until(() -> live.currentVersion() == 2);
      assertThat(informers.starts()).isEqualTo(1);
      assertThat(keys2).allMatch(live::mightContain);
    }
  }

  @Test
  void snapshotOfOtherKeyTypeIsRefused(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys = TestKeys.strings("k", 5_000);
    publisher.publish(TestKeys.stringFilter(10_000, keys), keys.size(), 1);

    RecordingListener listener = new RecordingListener();
    try (LiveBloomFilter<Long> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.LONG)
            .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
            .listener(listener)
            .start()) {
      await().atMost(READY).until(() -> !listener.failures.isEmpty());
      assertThat(listener.failures.get(0).version()).isEqualTo(1);
      assertThat(listener.failures.get(0).exception())
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("holds String keys")
          .hasMessageContaining("Long");
      assertThat(live.failures()).isGreaterThanOrEqualTo(1);
      assertThat(live.isReady()).isFalse();
      assertThat(live.loads()).isZero();
      assertThat(live.mightContain(1L)).isFalse();
      assertThat(listener.updates).isEmpty();
    }
  }

  @SafeVarargs
  private static void assertAnswersLike(
      LiveBloomFilter<String> live, BloomFilterBits expected, List<String>... keySets) {
    for (List<String> keys : keySets) {
      for (String key : keys) {
        if (live.mightContain(key) != expected.mightContainString(key)) {
          throw new AssertionError(
              "live filter v"
                  + live.currentVersion()
                  + " answers "
                  + live.mightContain(key)
                  + " for '"
                  + key
                  + "', the published filter "
                  + expected.mightContainString(key));
        }
      }
    }
  }
}
