package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The canary share on a real API server: 50 readers app-0..app-49 watch one manifest ConfigMap;
 * with a canary for 10 % beside the stable manifest exactly the five whose pod name hashes into the
 * share (app-0, app-8, app-23, app-29, app-38) serve it, the other 45 the stable version; once the
 * canary becomes the manifest, all 50 serve it.
 */
@RealKubernetes
class CanaryReadersTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final List<String> SHARE = List.of("app-0", "app-8", "app-23", "app-29", "app-38");

  @Test
  void tenPercentOfFiftyReadersServeTheCanaryUntilItIsPromoted(
      KubernetesClient admin, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(admin, ns.name(), "ids");
    List<String> stableKeys = TestKeys.strings("stable", 100);
    publisher.publish(TestKeys.stringFilter(1_000, stableKeys), stableKeys.size(), 1);
    List<LiveBloomFilter<String>> readers = new ArrayList<>();
    try {
      for (int i = 0; i < 50; i++) {
        readers.add(
            BloomFilterWatcher.builder(admin, ns.name(), "ids", LiveKeyType.STRING)
                .podIdentity("app-" + i, UUID.randomUUID().toString())
                .readerReports(false)
                .start());
      }
      await().atMost(WAIT).until(() -> served(readers).getOrDefault(1L, List.of()).size() == 50);

      List<String> canaryKeys = TestKeys.strings("canary", 100);
      SnapshotPublisher.Published canary =
          publisher.createChunks(
              TestKeys.stringFilter(1_000, canaryKeys),
              canaryKeys.size(),
              2,
              SnapshotPublisher.OPERATOR_CHUNK_SIZE,
              SnapshotPublisher.Tamper.NONE);
      ConfigMap stable = publisher.manifestConfigMap();
      admin
          .configMaps()
          .inNamespace(ns.name())
          .resource(SnapshotConfigMaps.withCanary(stable, canary.manifest().toJson(), null, 10))
          .update();

      await().atMost(WAIT).until(() -> served(readers).getOrDefault(2L, List.of()).size() == 5);
      assertThat(served(readers).get(2L)).containsExactlyInAnyOrderElementsOf(SHARE);
      assertThat(served(readers).get(1L)).hasSize(45);
      for (LiveBloomFilter<String> reader : readers) {
        boolean inShare = reader.currentVersion() == 2;
        assertThat(reader.mightContain(canaryKeys.get(0))).isEqualTo(inShare);
        assertThat(reader.mightContain(stableKeys.get(0))).isEqualTo(!inShare);
      }

      publisher.writeManifest(canary.manifest()); // promotion: the canary is the manifest
      await().atMost(WAIT).until(() -> served(readers).getOrDefault(2L, List.of()).size() == 50);
    } finally {
      readers.forEach(LiveBloomFilter::close);
    }
  }

  /** Pod names by the version they serve. */
  private static Map<Long, List<String>> served(List<LiveBloomFilter<String>> readers) {
    Map<Long, List<String>> byVersion = new TreeMap<>();
    for (int i = 0; i < readers.size(); i++) {
      byVersion
          .computeIfAbsent(readers.get(i).currentVersion(), v -> new ArrayList<>())
          .add("app-" + i);
    }
    return byVersion;
  }
}
