package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.metrics.LiveBloomFilterMetrics;
import io.bloomoperator.watch.metrics.ReaderMetricNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Field;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Stream deltas applied in place by a reader of a real API server: an add-only delta changes the
 * served array itself into exactly the payload a full build gives (both layouts), with the version
 * bookkeeping of a swap; a delta that clears bits, a canary, a withdrawn canary and a pin are
 * swapped; a corrupt delta chunk or a bad signature sets no bit; lookups of the older version's
 * keys never answer "absent" while deltas are applied; a payload that does not match its manifest
 * after changes in place is found by the check and reloaded from scratch.
 */
@RealKubernetes
class InPlaceDeltaReaderTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  /** Long enough that no payload check runs during a test that does not look for one. */
  private static final Duration NO_CHECK = Duration.ofHours(1);

  @Test
  void anAddOnlyDeltaIsSetInTheServedArrayAndGivesTheBytesOfAFullBuild(
      KubernetesClient client, TestNamespace ns) {
    for (FilterFormat format : FilterFormat.values()) {
      String name = "add-" + format.crdName().toLowerCase();
      List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
      BloomFilterBits v1 = build(format, keys);
      SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), name);
      Manifest m1 = publisher.publish(v1, keys.size(), 1).manifest();
      RecordingListener listener = new RecordingListener();
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      try (LiveBloomFilter<String> live = reader(client, ns, name, NO_CHECK, listener)) {
        new LiveBloomFilterMetrics(live).bindTo(registry);
        assertThat(live.awaitReady(WAIT)).isTrue();
        BloomFilterBits served = live.servedSnapshot().heapBits();

        List<String> added = TestKeys.strings("stream", 1_000);
        keys.addAll(added);
        BloomFilterBits v2 = build(format, keys);
        Manifest m2 = publisher.publishDelta(m1, v1, v2, keys.size(), 2);
        await().atMost(WAIT).until(() -> live.currentVersion() == 2);

        assertThat(live.deltasAppliedInPlace()).as(format.crdName()).isEqualTo(1);
        assertThat(live.servedSnapshot().heapBits()).isSameAs(served);
        assertThat(SnapshotEncoder.sha256(served)).isEqualTo(SnapshotEncoder.sha256(v2));
        assertThat(SnapshotEncoder.sha256(served)).isEqualTo(m2.sha256());
        added.forEach(key -> assertThat(live.mightContain(key)).isTrue());
        // Bookkeeping exactly as for a swap.
        assertThat(live.loads()).isEqualTo(2);
        assertThat(live.failures()).isZero();
        assertThat(live.currentManifest().orElseThrow().sha256()).isEqualTo(m2.sha256());
        assertThat(live.observedFalsePositives().version()).isEqualTo(2);
        assertThat(listener.updates)
            .extracting(RecordingListener.Update::newVersion)
            .containsExactly(1L, 2L);
        assertThat(registry.get(ReaderMetricNames.DELTAS_IN_PLACE).functionCounter().count())
            .isEqualTo(1);
        assertThat(registry.get(ReaderMetricNames.SWAPS).functionCounter().count()).isEqualTo(2);
      }
    }
  }

  @Test
  void aDeltaThatClearsBitsIsSwappedAndTheServedArrayIsLeftAlone(
      KubernetesClient client, TestNamespace ns) {
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "clears");
    Manifest m1 = publisher.publish(v1, keys.size(), 1).manifest();
    try (LiveBloomFilter<String> live = reader(client, ns, "clears", NO_CHECK, null)) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits served = live.servedSnapshot().heapBits();

      keys.subList(0, 500).clear(); // counting deletions
      keys.addAll(TestKeys.strings("stream", 500));
      BloomFilterBits v2 = build(FilterFormat.GUAVA, keys);
      Manifest m2 = publisher.publishDelta(m1, v1, v2, keys.size(), 2);
      await().atMost(WAIT).until(() -> live.currentVersion() == 2);

      assertThat(live.deltasAppliedInPlace()).isZero();
      assertThat(live.servedSnapshot().heapBits()).isNotSameAs(served);
      assertThat(SnapshotEncoder.sha256(live.servedSnapshot().heapBits())).isEqualTo(m2.sha256());
      assertThat(SnapshotEncoder.sha256(served)).isEqualTo(m1.sha256());
    }
  }

  @Test
  void aCorruptDeltaChunkIsRefusedWithNoBitSet(KubernetesClient client, TestNamespace ns) {
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "corrupt");
    Manifest m1 = publisher.publish(v1, keys.size(), 1).manifest();
    try (LiveBloomFilter<String> live = reader(client, ns, "corrupt", NO_CHECK, null)) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits served = live.servedSnapshot().heapBits();

      keys.addAll(TestKeys.strings("stream", 2_000));
      BloomFilterBits v2 = build(FilterFormat.GUAVA, keys);
      // Small chunks, the last one changed after its digest went into the manifest: every chunk
      // before it verifies and parses.
      Manifest m2 =
          publisher.createDelta(
              m1,
              v1,
              v2,
              keys.size(),
              2,
              8_192,
              (index, bytes) -> {
                if (index == 2) {
                  bytes[bytes.length - 1] ^= 0x01;
                }
                return bytes;
              });
      assertThat(m2.deltas().get(0).chunks()).hasSize(3);
      publisher.writeManifest(m2);
      await().atMost(WAIT).until(() -> live.failures(LoadFailureReason.VERIFICATION) >= 1);

      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(live.deltasAppliedInPlace()).isZero();
      assertThat(live.servedSnapshot().heapBits()).isSameAs(served);
      assertThat(SnapshotEncoder.sha256(served)).isEqualTo(m1.sha256());
    }
  }

  @Test
  void aDeltaUnderABadSignatureIsRefusedWithNoBitSet(KubernetesClient client, TestNamespace ns) {
    KeyPair operator = Ed25519Keys.generate();
    KeyPair attacker = Ed25519Keys.generate();
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "signed");
    Manifest m1 =
        publisher
            .createChunks(
                v1,
                keys.size(),
                1,
                SnapshotPublisher.OPERATOR_CHUNK_SIZE,
                SnapshotPublisher.Tamper.NONE)
            .manifest();
    publisher.writeSignedManifest(m1, new ManifestSigner(operator.getPrivate()), ns.name());
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), "signed", LiveKeyType.STRING)
            .trustedKey(operator.getPublic())
            .inPlaceDeltas(NO_CHECK)
            .readerReports(false)
            .start()) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits served = live.servedSnapshot().heapBits();

      keys.addAll(TestKeys.strings("stream", 1_000));
      BloomFilterBits v2 = build(FilterFormat.GUAVA, keys);
      Manifest m2 =
          publisher.createDelta(
              m1,
              v1,
              v2,
              keys.size(),
              2,
              SnapshotPublisher.OPERATOR_CHUNK_SIZE,
              SnapshotPublisher.Tamper.NONE);
      publisher.writeSignedManifest(m2, new ManifestSigner(attacker.getPrivate()), ns.name());
      await().atMost(WAIT).until(() -> live.failures() >= 1);

      assertThat(live.lastFailure().orElseThrow().reason())
          .isEqualTo(LoadFailureReason.UNTRUSTED_KEY);
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(live.servedSnapshot().heapBits()).isSameAs(served);
      assertThat(SnapshotEncoder.sha256(served)).isEqualTo(m1.sha256());

      // The same delta signed by the operator is then set in place.
      publisher.writeSignedManifest(m2, new ManifestSigner(operator.getPrivate()), ns.name());
      await().atMost(WAIT).until(() -> live.currentVersion() == 2);
      assertThat(live.deltasAppliedInPlace()).isEqualTo(1);
      assertThat(SnapshotEncoder.sha256(served)).isEqualTo(m2.sha256());
    }
  }

  @Test
  void lookupsOfOlderKeysNeverAnswerAbsentWhileDeltasAreAppliedInPlace(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 50_000));
    BloomFilterBits bits = build(FilterFormat.SPLIT_BLOCK, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "busy");
    Manifest manifest = publisher.publish(bits, keys.size(), 1).manifest();
    try (LiveBloomFilter<String> live = reader(client, ns, "busy", NO_CHECK, null)) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits served = live.servedSnapshot().heapBits();
      // Each lookup thread checks every key of the newest version served when its pass started.
      AtomicReference<List<String>> settled = new AtomicReference<>(List.copyOf(keys));
      AtomicBoolean done = new AtomicBoolean();
      AtomicReference<String> absent = new AtomicReference<>();
      AtomicLong lookups = new AtomicLong();
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        Thread thread =
            new Thread(
                () -> {
                  while (!done.get() && absent.get() == null) {
                    for (String key : settled.get()) {
                      if (!live.mightContain(key)) {
                        absent.compareAndSet(null, key);
                        return;
                      }
                    }
                    lookups.incrementAndGet();
                  }
                });
        thread.start();
        threads.add(thread);
      }
      List<List<String>> keysOf = new ArrayList<>();
      for (long version = 2; version <= 11; version++) {
        BloomFilterBits previous = bits;
        keys.addAll(TestKeys.strings("v" + version, 2_000));
        keysOf.add(List.copyOf(keys));
        bits = build(FilterFormat.SPLIT_BLOCK, keys);
        manifest = publisher.publishDelta(manifest, previous, bits, keys.size(), version);
        long expected = version;
        await().atMost(WAIT).until(() -> live.currentVersion() == expected);
        settled.set(keysOf.get((int) version - 2));
      }
      Thread.sleep(200);
      done.set(true);
      for (Thread thread : threads) {
        thread.join();
      }
      assertThat(absent.get()).as("a key answered absent").isNull();
      assertThat(lookups.get()).isPositive();
      assertThat(live.deltasAppliedInPlace()).isEqualTo(10);
      assertThat(live.servedSnapshot().heapBits()).isSameAs(served);
      assertThat(SnapshotEncoder.sha256(served)).isEqualTo(manifest.sha256());
    }
  }

  @Test
  void aCanaryAndTheFirstStableVersionAfterItAreSwappedThenDeltasGoInPlaceAgain(
      KubernetesClient client, TestNamespace ns) {
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "canary");
    Manifest m1 = publisher.publish(v1, keys.size(), 1).manifest();
    // app-0 is in a 10 % share (docs/reader-protocol.md).
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), "canary", LiveKeyType.STRING)
            .podIdentity("app-0", UUID.randomUUID().toString())
            .readerReports(false)
            .inPlaceDeltas(NO_CHECK)
            .start()) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits stable = live.servedSnapshot().heapBits();

      // The canary only adds keys to the stable version, but it is swapped in.
      keys.addAll(TestKeys.strings("canary", 500));
      BloomFilterBits v2 = build(FilterFormat.GUAVA, keys);
      Manifest m2 =
          publisher.createDelta(
              m1,
              v1,
              v2,
              keys.size(),
              2,
              SnapshotPublisher.OPERATOR_CHUNK_SIZE,
              SnapshotPublisher.Tamper.NONE);
      ConfigMap withCanary =
          SnapshotConfigMaps.withCanary(publisher.manifestConfigMap(), m2.toJson(), null, 10);
      client.configMaps().inNamespace(ns.name()).resource(withCanary).update();
      await().atMost(WAIT).until(() -> live.currentVersion() == 2);
      assertThat(live.deltasAppliedInPlace()).isZero();
      BloomFilterBits canary = live.servedSnapshot().heapBits();
      assertThat(canary).isNotSameAs(stable);
      assertThat(SnapshotEncoder.sha256(stable)).isEqualTo(m1.sha256());

      // Promoted, then a stream delta: the first version after the canary is swapped too.
      publisher.writeManifest(m2);
      keys.addAll(TestKeys.strings("v3", 500));
      BloomFilterBits v3 = build(FilterFormat.GUAVA, keys);
      Manifest m3 = publisher.publishDelta(m2, v2, v3, keys.size(), 3);
      await().atMost(WAIT).until(() -> live.currentVersion() == 3);
      assertThat(live.deltasAppliedInPlace()).isZero();
      BloomFilterBits afterCanary = live.servedSnapshot().heapBits();
      assertThat(afterCanary).isNotSameAs(canary);

      // From there on the stable chain goes in place.
      keys.addAll(TestKeys.strings("v4", 500));
      BloomFilterBits v4 = build(FilterFormat.GUAVA, keys);
      Manifest m4 = publisher.publishDelta(m3, v3, v4, keys.size(), 4);
      await().atMost(WAIT).until(() -> live.currentVersion() == 4);
      assertThat(live.deltasAppliedInPlace()).isEqualTo(1);
      assertThat(live.servedSnapshot().heapBits()).isSameAs(afterCanary);
      assertThat(SnapshotEncoder.sha256(afterCanary)).isEqualTo(m4.sha256());
    }
  }

  @Test
  void aWithdrawnCanaryAndAPinAreSwapped(KubernetesClient client, TestNamespace ns) {
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "rollout");
    Manifest m1 = publisher.publish(v1, keys.size(), 1).manifest();
    // app-1 is outside a 10 % share: it stays on the stable version while the canary runs.
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), "rollout", LiveKeyType.STRING)
            .podIdentity("app-1", UUID.randomUUID().toString())
            .readerReports(false)
            .inPlaceDeltas(NO_CHECK)
            .start()) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits stable = live.servedSnapshot().heapBits();

      List<String> canaryKeys = TestKeys.strings("canary", 500);
      List<String> withCanaryKeys = new ArrayList<>(keys);
      withCanaryKeys.addAll(canaryKeys);
      Manifest m2 =
          publisher.createDelta(
              m1,
              v1,
              build(FilterFormat.GUAVA, withCanaryKeys),
              withCanaryKeys.size(),
              2,
              SnapshotPublisher.OPERATOR_CHUNK_SIZE,
              SnapshotPublisher.Tamper.NONE);
      client
          .configMaps()
          .inNamespace(ns.name())
          .resource(
              SnapshotConfigMaps.withCanary(publisher.manifestConfigMap(), m2.toJson(), null, 10))
          .update();

      // Withdrawn: the stable payload again as v3, the retained chain plus an empty delta
      // (PublishPlan.rollBack). A reader outside the share holds v1, the chain's base.
      Manifest m3 = publisher.publishDelta(m1, v1, v1, keys.size(), 3);
      assertThat(m3.deltas()).hasSize(1);
      assertThat(m3.deltas().get(0).changedBits()).isZero();
      await().atMost(WAIT).until(() -> live.currentVersion() == 3);
      assertThat(live.deltasAppliedInPlace()).isZero();
      BloomFilterBits withdrawn = live.servedSnapshot().heapBits();
      assertThat(withdrawn).isNotSameAs(stable);
      assertThat(SnapshotEncoder.sha256(withdrawn)).isEqualTo(m1.sha256());

      // A stream delta on it goes in place...
      keys.addAll(TestKeys.strings("v4", 500));
      BloomFilterBits v4 = build(FilterFormat.GUAVA, keys);
      Manifest m4 = publisher.publishDelta(m3, v1, v4, keys.size(), 4);
      await().atMost(WAIT).until(() -> live.currentVersion() == 4);
      assertThat(live.deltasAppliedInPlace()).isEqualTo(1);
      assertThat(live.servedSnapshot().heapBits()).isSameAs(withdrawn);

      // ...and pinning v3 again (the retained chain up to v3 plus an empty delta as v5) swaps:
      // the reader holds v4, which that chain does not hold.
      Manifest m5 = publisher.publishDelta(m3, v1, v1, keys.size() - 500, 5);
      await().atMost(WAIT).until(() -> live.currentVersion() == 5);
      assertThat(live.deltasAppliedInPlace()).isEqualTo(1);
      assertThat(live.servedSnapshot().heapBits()).isNotSameAs(withdrawn);
      assertThat(SnapshotEncoder.sha256(live.servedSnapshot().heapBits()))
          .isEqualTo(m5.sha256())
          .isEqualTo(m1.sha256());
      assertThat(SnapshotEncoder.sha256(withdrawn)).isEqualTo(m4.sha256());
    }
  }

  @Test
  void aPayloadThatNoLongerMatchesItsManifestIsFoundAndReloadedFromScratch(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> keys = new ArrayList<>(TestKeys.strings("base", 20_000));
    BloomFilterBits v1 = build(FilterFormat.GUAVA, keys);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "checked");
    Manifest m1 = publisher.publish(v1, keys.size(), 1).manifest();
    try (LiveBloomFilter<String> live =
        reader(client, ns, "checked", Duration.ofMillis(300), null)) {
      assertThat(live.awaitReady(WAIT)).isTrue();
      BloomFilterBits served = live.servedSnapshot().heapBits();
      // A bit of a key of v1 turned off in memory (what a flipped RAM bit or a reader bug looks
      // like): nothing checks the served array until a delta is applied to it in place.
      String victim = keys.get(0);
      long[] words = words(served);
      int word = firstSetWord(words, served, victim);
      long before = words[word];
      words[word] = before & (before - 1);
      assertThat(live.mightContain(victim)).isFalse();

      keys.addAll(TestKeys.strings("stream", 1_000));
      BloomFilterBits v2 = build(FilterFormat.GUAVA, keys);
      Manifest m2 = publisher.publishDelta(m1, v1, v2, keys.size(), 2);
      await().atMost(WAIT).until(() -> live.inPlaceDigestMismatches() == 1);
      await()
          .atMost(WAIT)
          .until(() -> live.servedSnapshot().heapBits() != served && live.currentVersion() == 2);

      assertThat(live.deltasAppliedInPlace()).isEqualTo(1);
      assertThat(live.failures(LoadFailureReason.VERIFICATION)).isEqualTo(1);
      assertThat(SnapshotEncoder.sha256(live.servedSnapshot().heapBits())).isEqualTo(m2.sha256());
      assertThat(live.mightContain(victim)).isTrue();
    }
  }

  // ---------------------------------------------------------------- fixtures

  private static LiveBloomFilter<String> reader(
      KubernetesClient client,
      TestNamespace ns,
      String name,
      Duration checkInterval,
      BloomFilterListener listener) {
    BloomFilterWatcher.Builder<String> builder =
        BloomFilterWatcher.builder(client, ns.name(), name, LiveKeyType.STRING)
            .readerReports(false)
            .inPlaceDeltas(checkInterval);
    if (listener != null) {
      builder.listener(listener);
    }
    return builder.start();
  }

  private static BloomFilterBits build(FilterFormat format, List<String> keys) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.GUAVA
            ? BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(200_000, 0.01))
            : BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(200_000, 0.01));
    keys.forEach(builder::putString);
    return builder.build();
  }

  /** The served array itself, to change a bit behind the reader's back. */
  private static long[] words(BloomFilterBits bits) throws ReflectiveOperationException {
    Field field = BloomFilterBits.class.getDeclaredField("words");
    field.setAccessible(true);
    return (long[]) field.get(bits);
  }

  /** The index of a word holding one of {@code key}'s bits, whose lowest set bit is one of them. */
  private static int firstSetWord(long[] words, BloomFilterBits bits, String key) {
    for (int i = 0; i < words.length; i++) {
      long word = words[i];
      if (word == 0) {
        continue;
      }
      words[i] = word & (word - 1);
      boolean answers = bits.mightContainString(key);
      words[i] = word;
      if (!answers) {
        return i;
      }
    }
    throw new AssertionError("no bit of " + key + " found");
  }
}
