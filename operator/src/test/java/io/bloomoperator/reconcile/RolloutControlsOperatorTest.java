package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.security.KeyPair;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The rollout controls on a real API server, with a running reader that trusts the operator's
 * signatures (so it refuses any manifest not published after the one it serves): pause holds
 * builds, a pin serves a retained version again within seconds without a rebuild and across an
 * operator restart, the key-count guard holds a half-empty build until it is approved, and a
 * retained manifest edited in the cluster is never published again.
 */
@RealKubernetes(crdDirs = "crds")
class RolloutControlsOperatorTest {

  private static final String SECRET = "bloom-signing";
  private static final Duration SOON = Duration.ofSeconds(30);
  private static final KeyPair KEY = Ed25519Keys.generate();
  private static final String OPERATOR_NS =
      "bloom-rollout-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      SigningOperator.signingWith(new SigningKeySecret(OPERATOR_NS, SECRET, Duration.ZERO), KEY);

  @Test
  void pausedBuildsAreRecordedAndHeldUntilUnpaused(KubernetesClient client, TestNamespace ns)
      throws Exception {
    List<String> first = keys("a", 100);
    List<String> second = keys("b", 120);
    create(client, ns.name(), first, "");
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.PUBLISHED));
    List<String> chunks = SnapshotFixtures.chunkNames(client, ns.name(), "ids");

    try (LiveBloomFilter<String> reader = reader(client, ns.name())) {
      assertThat(reader.awaitReady(SOON)).isTrue();
      mergePatch(
          client,
          ns.name(),
          "ids",
          Map.of("spec", Map.of("rollout", Map.of("paused", true), "source", inline(second))));

      BloomFilter paused =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> ready(f, "True", Reasons.ROLLOUT_PAUSED) && f.getStatus().getHeld() != null);
      assertThat(paused.getStatus().getVersion()).isEqualTo(1L);
      assertThat(paused.getStatus().getHeld().getReason()).isEqualTo(Reasons.ROLLOUT_PAUSED);
      assertThat(paused.getStatus().getHeld().getKeys()).isEqualTo(120L);
      assertThat(paused.getStatus().getHeld().getSha256())
          .isNotEqualTo(paused.getStatus().getSha256());
      assertThat(paused.getStatus().getHeld().getBuiltAt()).isNotNull();
      assertThat(SnapshotFixtures.chunkNames(client, ns.name(), "ids"))
          .as("a held build writes no chunk")
          .containsExactlyInAnyOrderElementsOf(chunks);
      assertThat(reader.currentVersion()).isEqualTo(1L);
      assertThat(first).allMatch(reader::mightContain);

      // Held across a restart: the new replica reads the same status and holds again.
      OPERATOR.stop();
      OPERATOR.start();
      Thread.sleep(3000);
      BloomFilter stillPaused =
          awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.ROLLOUT_PAUSED));
      assertThat(stillPaused.getStatus().getVersion()).isEqualTo(1L);
      assertThat(reader.currentVersion()).isEqualTo(1L);

      Map<String, Object> unpause = new HashMap<>();
      unpause.put("paused", null);
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("rollout", unpause)));
      BloomFilter published =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() == 2L);
      assertThat(published.getStatus().getHeld()).as("nothing held any more").isNull();
      assertThat(published.getStatus().getKeys()).isEqualTo(120L);
      await().atMost(SOON).until(() -> reader.currentVersion() == 2L);
      assertThat(second).allMatch(reader::mightContain);
    }
  }

  @Test
  void aPinServesARetainedVersionAgainWithoutARebuildAndSurvivesARestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> good = keys("good", 200);
    List<String> bad = keys("bad", 200);
    create(client, ns.name(), good, "  snapshot: {keepVersions: 2}\n");
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.PUBLISHED));

    try (LiveBloomFilter<String> reader = reader(client, ns.name())) {
      assertThat(reader.awaitReady(SOON)).isTrue();
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", inline(bad))));
      BloomFilter second =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() == 2L);
      assertThat(second.getStatus().getRetainedVersions())
          .singleElement()
          .satisfies(r -> assertThat(r.getVersion()).isEqualTo(1L));
      await().atMost(SOON).until(() -> reader.currentVersion() == 2L);
      String lastBuild = second.getStatus().getLastBuildTime();

      long pinnedAt = System.nanoTime();
      mergePatch(
          client, ns.name(), "ids", Map.of("spec", Map.of("rollout", Map.of("pinVersion", 1))));
      await().atMost(Duration.ofSeconds(10)).until(() -> reader.currentVersion() == 3L);
      Duration tookReaders = Duration.ofNanos(System.nanoTime() - pinnedAt);
      assertThat(good).allMatch(reader::mightContain);
      assertThat(bad.stream().filter(reader::mightContain).count())
          .as("the bad version's keys are gone again (false positives only)")
          .isLessThan(20);
      BloomFilter pinned =
          awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.ROLLOUT_PINNED));
      assertThat(pinned.getStatus().getVersion()).isEqualTo(3L);
      assertThat(pinned.getStatus().getPinnedVersion()).isEqualTo(1L);
      assertThat(pinned.getStatus().getKeys()).isEqualTo(200L);
      assertThat(pinned.getStatus().getLastBuildTime()).as("no rebuild").isEqualTo(lastBuild);
      Manifest manifest = SnapshotFixtures.manifest(client, ns.name(), "ids");
      assertThat(manifest.baseVersion()).as("the retained chunks are reused").isEqualTo(1L);
      assertThat(manifest.deltas()).last().satisfies(d -> assertThat(d.changedBits()).isZero());
      System.out.printf("rollback: reader served version 1's keys after %s%n", tookReaders);

      OPERATOR.stop();
      OPERATOR.start();
      Thread.sleep(3000);
      awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.ROLLOUT_PINNED));
      assertThat(SnapshotFixtures.manifest(client, ns.name(), "ids").version())
          .as("a restarted operator keeps the pin without publishing again")
          .isEqualTo(3L);
      assertThat(reader.currentVersion()).isEqualTo(3L);

      // While pinned, a source change is built and held.
      List<String> next = keys("next", 150);
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", inline(next))));
      BloomFilter held =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f ->
                  ready(f, "True", Reasons.ROLLOUT_PINNED)
                      && f.getStatus().getHeld() != null
                      && f.getStatus().getHeld().getKeys() == 150L);
      assertThat(held.getStatus().getVersion()).isEqualTo(3L);
      assertThat(reader.currentVersion()).isEqualTo(3L);

      Map<String, Object> release = new HashMap<>();
      release.put("pinVersion", null);
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("rollout", release)));
      awaitStatus(
          client,
          ns.name(),
          "ids",
          f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() == 4L);
      await().atMost(SOON).until(() -> reader.currentVersion() == 4L);
      assertThat(next).allMatch(reader::mightContain);
    }
  }

  @Test
  void aRetainedManifestEditedInTheClusterIsNeverPublishedAgain(
      KubernetesClient client, TestNamespace ns) throws Exception {
    create(client, ns.name(), keys("good", 50), "  snapshot: {keepVersions: 2}\n");
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.PUBLISHED));
    mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", inline(keys("x", 50)))));
    awaitStatus(
        client,
        ns.name(),
        "ids",
        f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() == 2L);

    // Whoever may edit ConfigMaps rewrites the retained version 1 to claim other figures (here:
    // another key count; the same edit could name other chunks or digests).
    ConfigMap manifestMap =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("ids"))
            .get();
    Manifest retained = RetainedVersions.of(manifestMap).version(1).orElseThrow();
    String forged =
        manifestMap
            .getData()
            .get(RetainedVersions.DATA_KEY)
            .replace("\"keyCount\":" + retained.keyCount(), "\"keyCount\":" + 7777);
    assertThat(forged).isNotEqualTo(manifestMap.getData().get(RetainedVersions.DATA_KEY));
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("ids"))
        .edit(
            cm -> {
              cm.getData().put(RetainedVersions.DATA_KEY, forged);
              return cm;
            });

    mergePatch(
        client, ns.name(), "ids", Map.of("spec", Map.of("rollout", Map.of("pinVersion", 1))));
    BloomFilter refused =
        awaitStatus(client, ns.name(), "ids", f -> ready(f, "False", Reasons.VERSION_NOT_RETAINED));
    assertThat(refused.getStatus().getVersion()).isEqualTo(2L);
    Thread.sleep(2000);
    assertThat(SnapshotFixtures.manifest(client, ns.name(), "ids").version())
        .as("nothing was published from the edited record")
        .isEqualTo(2L);
  }

  @Test
  void aBuildWhoseKeyCountDroppedIsHeldUntilApproved(KubernetesClient client, TestNamespace ns)
      throws Exception {
    List<String> full = keys("id", 100);
    List<String> partial = full.subList(0, 40); // the source lost 60 % of its rows
    create(client, ns.name(), full, "  rollout: {maxKeyCountDropPercent: 50}\n");
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.PUBLISHED));

    try (LiveBloomFilter<String> reader = reader(client, ns.name())) {
      assertThat(reader.awaitReady(SOON)).isTrue();
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", inline(partial))));
      BloomFilter held =
          awaitStatus(client, ns.name(), "ids", f -> ready(f, "False", Reasons.KEY_COUNT_DROPPED));
      assertThat(held.getStatus().getVersion()).isEqualTo(1L);
      assertThat(held.getStatus().getHeld().getKeys()).isEqualTo(40L);
      assertThat(held.getStatus().getHeld().getPublishedKeys()).isEqualTo(100L);
      assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
          .anySatisfy(e -> assertThat(e.getReason()).isEqualTo(Reasons.KEY_COUNT_DROPPED));
      Thread.sleep(2000);
      assertThat(reader.currentVersion()).as("no reader saw the half-empty build").isEqualTo(1L);
      assertThat(full).allMatch(reader::mightContain);

      // The approval names the held content (what `kubectl bloom approve` sets).
      client
          .resources(BloomFilter.class)
          .inNamespace(ns.name())
          .withName("ids")
          .edit(
              f -> {
                f.getMetadata()
                    .setAnnotations(
                        Map.of(
                            RolloutGate.APPROVE_ANNOTATION,
                            held.getStatus().getHeld().getSha256()));
                return f;
              });
      BloomFilter approved =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() == 2L);
      assertThat(approved.getStatus().getKeys()).isEqualTo(40L);
      assertThat(approved.getStatus().getHeld()).isNull();
      await().atMost(SOON).until(() -> reader.currentVersion() == 2L);
    }
  }

  private static LiveBloomFilter<String> reader(KubernetesClient client, String namespace) {
    return BloomFilterWatcher.builder(client, namespace, "ids", LiveKeyType.STRING)
        .trustedKey(KEY.getPublic())
        .start();
  }

  private static void create(
      KubernetesClient client, String namespace, List<String> ids, String extraSpec) {
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [%s]
        %s"""
            .formatted(String.join(", ", ids), extraSpec));
  }

  private static Map<String, Object> inline(List<String> ids) {
    return Map.of("inline", ids);
  }

  private static List<String> keys(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }
}
