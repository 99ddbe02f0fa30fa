package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.ManifestCopy;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.security.KeyPair;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Readers with a trusted key load only manifests signed by it for their namespace and filter, and
 * never go back to an older version; anyone else with ConfigMap write rights cannot make them load
 * anything, even a snapshot whose digests are all correct.
 */
@RealKubernetes
class SignedManifestTest {

  private static final String FILTER = "product-ids";
  private static final Duration READY = Duration.ofSeconds(10);
  private static final KeyPair OPERATOR_KEY = Ed25519Keys.generate();
  private static final ManifestSigner OPERATOR = new ManifestSigner(OPERATOR_KEY.getPrivate());

  @Test
  void forgedManifestsWithCorrectDigestsAreRefused(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    SnapshotPublisher.Published v1 =
        publisher.createChunks(
            TestKeys.stringFilter(10_000, keys1),
            keys1.size(),
            1,
            1_000_000,
            SnapshotPublisher.Tamper.NONE);
    publisher.writeSignedManifest(v1.manifest(), OPERATOR, ns.name());

    RequestLog requests = new RequestLog();
    RecordingListener listener = new RecordingListener();
    try (KubernetesClient reader = requests.newClient(cluster);
        LiveBloomFilter<String> live =
            BloomFilterWatcher.builder(reader, ns.name(), FILTER, LiveKeyType.STRING)
                .trustedKey(OPERATOR_KEY.getPublic())
                .listener(listener)
                .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(live.currentVersion()).isEqualTo(1);

      // An all-zero filter (answers "absent" for every key) with correct chunk and payload digests.
      BloomFilterBits empty = TestKeys.stringFilter(10_000);
      SnapshotPublisher.Published forged =
          publisher.createChunks(empty, 0, 2, 1_000_000, SnapshotPublisher.Tamper.NONE);
      String chunk = "/configmaps/" + SnapshotNames.chunkName(FILTER, 2, 0);

      publisher.writeManifest(forged.manifest()); // unsigned
      assertRefused(listener, 1, LoadFailureReason.UNSIGNED);

      KeyPair attacker = Ed25519Keys.generate();
      publisher.writeSignedManifest(
          forged.manifest(), new ManifestSigner(attacker.getPrivate()), ns.name());
      assertRefused(listener, 2, LoadFailureReason.UNTRUSTED_KEY);

      // The operator's genuine signature of v1 next to the forged manifest.
      String v1Signature = OPERATOR.sign(ns.name(), v1.manifest().toJson()).toData();
      publisher.writeManifestData(forged.manifest().toJson(), v1Signature);
      assertRefused(listener, 3, LoadFailureReason.BAD_SIGNATURE);

      assertThat(requests.anyPathEndsWith(chunk)).as("no forged chunk fetched").isFalse();
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys1).allMatch(live::mightContain);

      // The operator's next version is loaded as usual.
      List<String> keys3 = TestKeys.strings("three", 5_000);
      SnapshotPublisher.Published v3 =
          publisher.createChunks(
              TestKeys.stringFilter(10_000, keys3),
              keys3.size(),
              3,
              1_000_000,
              SnapshotPublisher.Tamper.NONE);
      publisher.writeSignedManifest(v3.manifest(), OPERATOR, ns.name());
      await().atMost(READY).until(() -> live.currentVersion() == 3);
      assertThat(keys3).allMatch(live::mightContain);
    }
  }

  @Test
  void manifestSignedForAnotherNamespaceOrFilterIsRefused(
      KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    publisher.writeSignedManifest(
        publisher
            .createChunks(
                TestKeys.stringFilter(10_000, keys1),
                keys1.size(),
                1,
                1_000_000,
                SnapshotPublisher.Tamper.NONE)
            .manifest(),
        OPERATOR,
        ns.name());

    RecordingListener listener = new RecordingListener();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .trustedKey(OPERATOR_KEY.getPublic())
            .listener(listener)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();

      // A genuine manifest of this filter, as published in namespace "staging", copied here.
      List<String> staging = TestKeys.strings("staging", 5_000);
      SnapshotPublisher.Published v2 =
          publisher.createChunks(
              TestKeys.stringFilter(10_000, staging),
              staging.size(),
              2,
              1_000_000,
              SnapshotPublisher.Tamper.NONE);
      publisher.writeSignedManifest(v2.manifest(), OPERATOR, "staging");
      assertRefused(listener, 1, LoadFailureReason.BAD_SIGNATURE);

      // A genuine manifest of another filter of this namespace, copied into this filter's manifest.
      SnapshotPublisher other = new SnapshotPublisher(client, ns.name(), "all-ids");
      SnapshotPublisher.Published otherV5 =
          other.createChunks(
              TestKeys.stringFilter(10_000, staging),
              staging.size(),
              5,
              1_000_000,
              SnapshotPublisher.Tamper.NONE);
      publisher.writeSignedManifest(otherV5.manifest(), OPERATOR, ns.name());
      assertRefused(listener, 2, LoadFailureReason.WRONG_FILTER);

      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys1).allMatch(live::mightContain);
    }
  }

  @Test
  void olderSignedVersionIsRefusedAsRollback(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    SnapshotPublisher.Published v1 =
        publisher.createChunks(
            TestKeys.stringFilter(10_000, keys1),
            keys1.size(),
            1,
            1_000_000,
            SnapshotPublisher.Tamper.NONE);
    publisher.writeSignedManifest(v1.manifest(), OPERATOR, ns.name());
    String v1Data = SnapshotConfigMaps.signatureData(publisher.manifestConfigMap());

    RecordingListener listener = new RecordingListener();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .trustedKey(OPERATOR_KEY.getPublic())
            .listener(listener)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      BloomFilterBits v2 = TestKeys.stringFilter(10_000, keys2);
      publisher.writeSignedManifest(
          publisher
              .createChunks(v2, keys2.size(), 2, 1_000_000, SnapshotPublisher.Tamper.NONE)
              .manifest(),
          OPERATOR,
          ns.name());
      await().atMost(READY).until(() -> live.currentVersion() == 2);

      // Replay of the genuine v1 (its chunks still exist, as during the retention period).
      publisher.writeManifestData(v1.manifest().toJson(), v1Data);
      assertRefused(listener, 1, LoadFailureReason.ROLLBACK);
      assertThat(live.currentVersion()).isEqualTo(2);
      assertThat(keys2).allMatch(live::mightContain);
    }
  }

  @Test
  void reCreatedFilterLoadsItsFirstVersionButAReplayOfTheOldFilterIsRefused(
      KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> oldKeys = TestKeys.strings("old", 5_000);
    List<String> newKeys = TestKeys.strings("new", 5_000);
    Manifest oldV5 =
        ManifestCopy.of(
                publisher
                    .createChunks(
                        TestKeys.stringFilter(10_000, oldKeys),
                        oldKeys.size(),
                        5,
                        1_000_000,
                        SnapshotPublisher.Tamper.NONE)
                    .manifest())
            .createdAt(Instant.now().minusSeconds(60))
            .build();
    publisher.writeSignedManifest(oldV5, OPERATOR, ns.name());
    String oldV5Data = SnapshotConfigMaps.signatureData(publisher.manifestConfigMap());

    RecordingListener listener = new RecordingListener();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .trustedKey(OPERATOR_KEY.getPublic())
            .listener(listener)
            .start()) {
      assertThat(live.awaitReady(READY)).isTrue();
      assertThat(live.currentVersion()).isEqualTo(5);

      // The BloomFilter is deleted and re-created: its versions count from 1 again, created later.
      Manifest newV1 =
          publisher
              .createChunks(
                  TestKeys.stringFilter(10_000, newKeys),
                  newKeys.size(),
                  1,
                  1_000_000,
                  SnapshotPublisher.Tamper.NONE)
              .manifest();
      publisher.writeSignedManifest(newV1, OPERATOR, ns.name());
      await().atMost(READY).until(() -> live.currentVersion() == 1);
      assertThat(newKeys).allMatch(live::mightContain);
      assertThat(listener.failures).isEmpty();

      // Replaying the old filter's v5 (a higher version, genuinely signed) is still a rollback.
      publisher.writeManifestData(oldV5.toJson(), oldV5Data);
      assertRefused(listener, 1, LoadFailureReason.ROLLBACK);
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(newKeys).allMatch(live::mightContain);
    }
  }

  @Test
  void keyRotationWithBothKeysTrusted(KubernetesClient client, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    KeyPair next = Ed25519Keys.generate();
    List<String> keys1 = TestKeys.strings("one", 5_000);
    List<String> keys2 = TestKeys.strings("two", 5_000);
    publisher.writeSignedManifest(
        publisher
            .createChunks(
                TestKeys.stringFilter(10_000, keys1),
                keys1.size(),
                1,
                1_000_000,
                SnapshotPublisher.Tamper.NONE)
            .manifest(),
        OPERATOR,
        ns.name());

    RecordingListener oldOnly = new RecordingListener();
    try (LiveBloomFilter<String> both =
            BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                .trustedKey(OPERATOR_KEY.getPublic())
                .trustedKey(next.getPublic())
                .start();
        LiveBloomFilter<String> stale =
            BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
                .trustedKey(OPERATOR_KEY.getPublic())
                .listener(oldOnly)
                .start()) {
      assertThat(both.awaitReady(READY)).isTrue();
      assertThat(stale.awaitReady(READY)).isTrue();
      publisher.writeSignedManifest(
          publisher
              .createChunks(
                  TestKeys.stringFilter(10_000, keys2),
                  keys2.size(),
                  2,
                  1_000_000,
                  SnapshotPublisher.Tamper.NONE)
              .manifest(),
          new ManifestSigner(next.getPrivate()),
          ns.name());
      await().atMost(READY).until(() -> both.currentVersion() == 2);
      assertThat(keys2).allMatch(both::mightContain);
      assertRefused(oldOnly, 1, LoadFailureReason.UNTRUSTED_KEY);
      assertThat(stale.currentVersion()).isEqualTo(1);
    }
  }

  @Test
  void restartedReaderWithAMaximumAgeRefusesAReplayedOldVersion(
      KubernetesClient client, TestNamespace ns) {
    // Audit item 6: whoever may write ConfigMaps restores a genuinely signed old version (its
    // manifest, signature and chunks). A running reader refuses it as a rollback; one that starts
    // now has nothing to compare with and, without a maximum age, serves the old filter.
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> revoked = TestKeys.strings("revoked", 5_000);
    Manifest oldV1 =
        ManifestCopy.of(
                publisher
                    .createChunks(
                        TestKeys.stringFilter(10_000, revoked),
                        revoked.size(),
                        1,
                        1_000_000,
                        SnapshotPublisher.Tamper.NONE)
                    .manifest())
            .createdAt(Instant.now().minus(Duration.ofHours(3)))
            .build();
    publisher.writeSignedManifest(oldV1, OPERATOR, ns.name());

    try (LiveBloomFilter<String> unbounded =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .trustedKey(OPERATOR_KEY.getPublic())
            .start()) {
      assertThat(unbounded.awaitReady(READY)).isTrue();
      assertThat(unbounded.currentVersion()).as("the attack, without a maximum age").isEqualTo(1);
    }

    RecordingListener listener = new RecordingListener();
    try (LiveBloomFilter<String> bounded =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .trustedKey(OPERATOR_KEY.getPublic())
            .maxManifestAge(Duration.ofHours(1))
            .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_CLOSED)
            .listener(listener)
            .start()) {
      assertRefused(listener, 1, LoadFailureReason.TOO_OLD);
      assertThat(bounded.currentVersion()).isEqualTo(LiveBloomFilter.NO_VERSION);
      assertThat(bounded.mightContain(revoked.get(0))).isFalse();

      // The operator's current version (created now) is loaded as usual.
      List<String> keys2 = TestKeys.strings("two", 5_000);
      publisher.writeSignedManifest(
          publisher
              .createChunks(
                  TestKeys.stringFilter(10_000, keys2),
                  keys2.size(),
                  2,
                  1_000_000,
                  SnapshotPublisher.Tamper.NONE)
              .manifest(),
          OPERATOR,
          ns.name());
      await().atMost(READY).until(() -> bounded.currentVersion() == 2);
      assertThat(keys2).allMatch(bounded::mightContain);
    }
  }

  @Test
  void maximumAgeNeedsATrustedKey(KubernetesClient client, TestNamespace ns) {
    var builder =
        BloomFilterWatcher.builder(client, ns.name(), FILTER, LiveKeyType.STRING)
            .maxManifestAge(Duration.ofHours(1));
    assertThatThrownBy(builder::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("trustedKey");
  }

  /** Waits for the {@code n}-th failure and checks it is a refusal for {@code reason}. */
  private static void assertRefused(RecordingListener listener, int n, LoadFailureReason reason) {
    await().atMost(READY).until(() -> listener.failures.size() >= n);
    Exception failure = listener.failures.get(n - 1).exception();
    assertThat(failure).isInstanceOf(SnapshotRefusedException.class);
    assertThat(((SnapshotRefusedException) failure).reason())
        .as(failure.getMessage())
        .isEqualTo(reason);
  }
}
