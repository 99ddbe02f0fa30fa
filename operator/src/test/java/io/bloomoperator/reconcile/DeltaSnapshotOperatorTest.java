package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.chunkNames;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.namedChunks;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Delta chains end to end on a real API server: the operator appends deltas while the geometry
 * holds, compacts into a new base when the chain is full, starts a new base when the geometry
 * changes, and readers follow by fetching only what changed.
 */
@RealKubernetes(crdDirs = "crds")
class DeltaSnapshotOperatorTest {

  /** Chains of at most 3 deltas; publishes as fast as sources change. */
  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0", "BLOOM_DELTA_MAX_CHAIN", "3")));

  private static final Duration READY = Duration.ofSeconds(30);

  private static final String FILTER_YAML =
      """
      apiVersion: bloomoperator.io/v1alpha1
      kind: BloomFilter
      metadata: {name: ids}
      spec:
        falsePositiveRate: 0.01
        expectedInsertions: 20000
        source:
          configMap: {name: ids, key: ids}
        refreshInterval: 10m
        snapshot: {chunkSizeBytes: 4096, retainPreviousFor: 3s}
      """;

  @Test
  void chainGrowsCompactsAndReadersFetchOnlyWhatChanged(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path localDir)
      throws Exception {
    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 5000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    apply(client, ns.name(), FILTER_YAML);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    Manifest v1 = manifest(client, ns.name(), "ids");
    assertThat(v1.chained()).isFalse();
    assertThat(v1.chunks()).hasSizeGreaterThan(3);

    RequestLog requests = new RequestLog();
    try (KubernetesClient readerClient = requests.newClient(cluster);
        LiveBloomFilter<String> reader =
            BloomFilterWatcher.builder(readerClient, ns.name(), "ids", LiveKeyType.STRING).start();
        LiveBloomFilter<String> cached =
            BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                .localSnapshotDirectory(localDir)
                .start()) {
      assertThat(reader.awaitReady(READY)).isTrue();
      assertThat(cached.awaitReady(READY)).isTrue();
      cached.close(); // a pod that goes away at v1 and comes back later

      List<Manifest> published = new ArrayList<>(List.of(v1));
      for (int version = 2; version <= 5; version++) {
        // 50 keys removed, 50 added: a few hundred bits out of ~190,000.
        int from = (version - 2) * 50;
        keys.removeAll(keys("k", from, from + 50));
        keys.addAll(keys("new", from, from + 50));
        changeKeys(client, ns, List.copyOf(keys));
        int expected = version;
        var filter =
            awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == expected);
        Manifest manifest = manifest(client, ns.name(), "ids");
        published.add(manifest);

        // Byte for byte what Guava builds from the same keys, however it was published.
        BloomFilter<CharSequence> guava = SnapshotFixtures.emptyGuavaFilter(manifest);
        keys.forEach(guava::put);
        assertThat(
                BloomFilter.readFrom(
                    new ByteArrayInputStream(payload(client, ns.name(), manifest)),
                    Funnels.stringFunnel(StandardCharsets.UTF_8)))
            .isEqualTo(guava);

        // v5: the chain of 3 is full, so v4 becomes the base (readers hold it) and v5 its delta.
        int chainLength = version <= 4 ? version - 1 : 1;
        assertThat(manifest.deltas()).hasSize(chainLength);
        assertThat(filter.getStatus().getDeltas()).isEqualTo(chainLength);
        assertThat(filter.getStatus().getBaseVersion()).isEqualTo(version <= 4 ? 1L : 4L);
        assertThat(filter.getStatus().getLastPublishBytes())
            .as("a delta costs a few bytes per changed bit, not the filter")
            .isLessThan(manifest.totalBytes() / 10);

        await().atMost(READY).until(() -> reader.currentVersion() == expected);
        assertThat(keys).allMatch(reader::mightContain);
      }

      // The reader fetched v1's chunks once, then only delta chunks (v2..v5): the compaction
      // rewrote v4 as a base, which it already held.
      List<String> chunkGets =
          requests.paths().stream()
              .filter(p -> p.startsWith("GET ") && p.contains("/configmaps/ids-bloom-v"))
              .map(p -> p.substring(p.lastIndexOf('/') + 1))
              .toList();
      List<String> expectedGets = new ArrayList<>();
      published.get(0).chunks().forEach(c -> expectedGets.add(c.name()));
      for (int i = 1; i <= 4; i++) {
        List<Manifest.Delta> deltas = published.get(i).deltas();
        deltas.get(deltas.size() - 1).chunks().forEach(c -> expectedGets.add(c.name()));
      }
      assertThat(chunkGets).containsExactlyElementsOf(expectedGets);

      // v1's base and the v2..v4 deltas stay for the grace period after the compaction, then only
      // v4's new base and v5's delta remain.
      Manifest v5 = published.get(4);
      await()
          .atMost(READY)
          .untilAsserted(
              () ->
                  assertThat(chunkNames(client, ns.name(), "ids"))
                      .containsExactlyInAnyOrderElementsOf(namedChunks(v5)));

      // The pod that left at v1 comes back: its local snapshot serves v1 at once, then it loads
      // v5, whose chain v1 is no longer in (base v4 plus one delta).
      try (LiveBloomFilter<String> back =
          BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
              .localSnapshotDirectory(localDir)
              .start()) {
        assertThat(back.isReady()).isTrue();
        await().atMost(READY).until(() -> back.currentVersion() == 5L);
        assertThat(keys).allMatch(back::mightContain);
      }
    }
  }

  @Test
  void readerThatMissedVersionsCatchesUpThroughTheChain(
      KubernetesClient client, TestNamespace ns, @TempDir Path localDir) throws Exception {
    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 3000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    apply(client, ns.name(), FILTER_YAML);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    try (LiveBloomFilter<String> first =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .localSnapshotDirectory(localDir)
            .start()) {
      assertThat(first.awaitReady(READY)).isTrue();
    }
    // Two versions while the pod is away: both deltas on v1.
    for (int version = 2; version <= 3; version++) {
      keys.add("added-" + version);
      changeKeys(client, ns, List.copyOf(keys));
      int expected = version;
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == expected);
    }
    assertThat(manifest(client, ns.name(), "ids").deltas()).hasSize(2);
    try (LiveBloomFilter<String> back =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .localSnapshotDirectory(localDir)
            .start()) {
      await().atMost(READY).until(() -> back.currentVersion() == 3L);
      assertThat(keys).allMatch(back::mightContain);
    }
  }

  @Test
  void geometryChangePublishesANewBaseAndReadersSwitch(KubernetesClient client, TestNamespace ns)
      throws Exception {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("k", 0, 3000));
    apply(client, ns.name(), FILTER_YAML);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    try (LiveBloomFilter<String> reader =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING).start()) {
      assertThat(reader.awaitReady(READY)).isTrue();
      // The key count outgrows expectedInsertions: the filter is sized anew, no delta fits it.
      List<String> many = keys("k", 0, 30_000);
      changeKeys(client, ns, many);
      var grown = awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 2L);
      Manifest v2 = manifest(client, ns.name(), "ids");
      assertThat(v2.chained()).isFalse();
      assertThat(grown.getStatus().getDeltas()).isZero();
      assertThat(grown.getStatus().getLastPublishBytes()).isEqualTo(v2.totalBytes());
      await().atMost(READY).until(() -> reader.currentVersion() == 2L);
      assertThat(many).allMatch(reader::mightContain);

      // A spec change that resizes the filter, too.
      SnapshotFixtures.mergePatch(
          client, ns.name(), "ids", Map.of("spec", Map.of("falsePositiveRate", 0.001)));
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 3L);
      Manifest v3 = manifest(client, ns.name(), "ids");
      assertThat(v3.chained()).isFalse();
      assertThat(v3.numBits()).isGreaterThan(v2.numBits());
      await().atMost(READY).until(() -> reader.currentVersion() == 3L);
      assertThat(many).allMatch(reader::mightContain);
    }
  }

  @Test
  void tamperedDeltaIsRefusedAndTheNextVersionIsANewBase(KubernetesClient client, TestNamespace ns)
      throws Exception {
    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 3000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    var created = apply(client, ns.name(), FILTER_YAML);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    // In-place deltas off: this reader verifies each version's whole payload before serving it.
    // With them on (the default) an add-only delta whose chunks match the manifest is set in place
    // and its payload digest is checked within the check interval (InPlaceDeltaReaderTest, and
    // docs/snapshot-protocol.md, "Deltas applied in place").
    try (LiveBloomFilter<String> warm =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
            .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
            .inPlaceDeltas(Duration.ZERO)
            .start()) {
      assertThat(warm.awaitReady(READY)).isTrue();

      // While the operator is away, someone with ConfigMap write rights publishes v2 as a delta on
      // v1 that adds "added-2", with consistent chunk digests but one flipped bit in the delta.
      OPERATOR.stop();
      try {
        ConfigMap manifestMap =
            client
                .configMaps()
                .inNamespace(ns.name())
                .withName(SnapshotNames.manifestName("ids"))
                .get();
        Manifest v1 = SnapshotConfigMaps.readManifest(manifestMap).manifest();
        BloomFilterBits v1Bits =
            SnapshotDecoder.decode(v1, SnapshotConfigMaps.chunkSource(client, ns.name()));
        BloomFilterBits.Builder next = BloomFilterBits.builder(v1Bits);
        next.putString("added-2");
        BloomFilterBits v2Bits = next.build();
        SnapshotDelta.Result delta =
            SnapshotDelta.encode(
                v1Bits,
                v2Bits,
                4096,
                (index, data, length, sha) -> {
                  byte[] bytes = java.util.Arrays.copyOf(data, length);
                  bytes[length - 1] ^= 0x01; // the last varint: another bit position
                  ConfigMap chunk =
                      SnapshotConfigMaps.deltaChunk(ns.name(), "ids", 2, index, bytes, length);
                  chunk.getMetadata().setOwnerReferences(List.of(owner(created)));
                  client.configMaps().inNamespace(ns.name()).resource(chunk).create();
                });
        // The forger digests the bytes it stored, so every chunk check passes.
        List<Manifest.ChunkRef> refs = new ArrayList<>();
        for (var ref : delta.chunks()) {
          String name = SnapshotNames.deltaChunkName("ids", 2, ref.index());
          ConfigMap stored = client.configMaps().inNamespace(ns.name()).withName(name).get();
          byte[] bytes = SnapshotConfigMaps.chunkBytes(stored, ref.bytes(), name);
          refs.add(new Manifest.ChunkRef(name, ref.bytes(), sha256(bytes)));
        }
        Manifest consistent =
            Manifest.withDelta(
                v1,
                2,
                v2Bits,
                3001,
                SnapshotEncoder.sha256(v2Bits),
                delta,
                java.time.Instant.now());
        Manifest forged =
            new Manifest(
                consistent.format(),
                2,
                "ids",
                consistent.keyType(),
                consistent.numBits(),
                consistent.numHashFunctions(),
                consistent.keyCount(),
                consistent.expectedFpp(),
                consistent.totalBytes(),
                consistent.sha256(),
                consistent.createdAt(),
                consistent.chunks(),
                new Manifest.Chain(
                    v1.version(),
                    v1.sha256(),
                    List.of(
                        new Manifest.Delta(
                            2,
                            delta.totalBytes(),
                            delta.changedBits(),
                            consistent.sha256(),
                            refs))));
        ConfigMap replaced =
            SnapshotConfigMaps.manifest(
                ns.name(), forged, null, manifestMap.getMetadata().getAnnotations());
        replaced.getMetadata().setOwnerReferences(manifestMap.getMetadata().getOwnerReferences());
        replaced.getMetadata().setResourceVersion(manifestMap.getMetadata().getResourceVersion());
        client.configMaps().inNamespace(ns.name()).resource(replaced).update();

        // The warm reader fetches only the delta, finds the resulting digest wrong, and keeps v1.
        await().atMost(READY).until(() -> warm.failures() > 0);
        assertThat(warm.currentVersion()).isEqualTo(1L);
        assertThat(keys).allMatch(warm::mightContain);

        // A cold reader refuses it as well and serves nothing rather than a wrong filter.
        try (LiveBloomFilter<String> cold =
            BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
                .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
                .start()) {
          await().atMost(READY).until(() -> cold.failures() > 0);
          assertThat(cold.isReady()).isFalse();
        }
      } finally {
        OPERATOR.start();
      }

      // The operator finds a manifest it did not write (status.manifestDigest): it builds nothing
      // on that chain and publishes the next version at once as a new base; readers recover.
      var v3 =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> f.getStatus().getVersion() != null && f.getStatus().getVersion() >= 3L);
      assertThat(v3.getStatus().getVersion()).isEqualTo(3L);
      assertThat(v3.getStatus().getDeltas()).isZero();
      assertThat(manifest(client, ns.name(), "ids").chained()).isFalse();
      try (LiveBloomFilter<String> cold =
          BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
              .retryBackoff(Duration.ofMillis(200), Duration.ofSeconds(1))
              .start()) {
        await().atMost(READY).until(() -> cold.currentVersion() == 3L);
        await().atMost(READY).until(() -> warm.currentVersion() == 3L);
        assertThat(keys).allMatch(cold::mightContain).allMatch(warm::mightContain);
      }
    }
  }

  private static String sha256(byte[] bytes) throws Exception {
    return java.util.HexFormat.of()
        .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(bytes));
  }

  @Test
  void interruptedDeltaAndCompactionLeaveThePublishedVersionIntact(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 3000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    var created = apply(client, ns.name(), FILTER_YAML);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    for (int version = 2; version <= 4; version++) {
      keys.add("added-" + version);
      changeKeys(client, ns, List.copyOf(keys));
      int expected = version;
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == expected);
    }
    Manifest v4 = manifest(client, ns.name(), "ids");
    assertThat(v4.deltas()).hasSize(3); // the next publish compacts

    // What an operator killed mid-compaction leaves: part of the new base (v4's whole payload,
    // under the names the compaction will use) and of v5's delta, no manifest for them.
    OPERATOR.stop();
    try {
      List<ConfigMap> leftovers =
          List.of(
              SnapshotConfigMaps.chunk(ns.name(), "ids", 4, 0, new byte[] {9, 9, 9}, 3),
              SnapshotConfigMaps.chunk(ns.name(), "ids", 4, 1, new byte[] {9, 9, 9}, 3),
              SnapshotConfigMaps.deltaChunk(ns.name(), "ids", 5, 0, new byte[] {9, 9, 9}, 3));
      for (ConfigMap leftover : leftovers) {
        leftover.getMetadata().setOwnerReferences(List.of(owner(created)));
        client.configMaps().inNamespace(ns.name()).resource(leftover).create();
      }
      // Readers meanwhile: the published chain is complete and verifies.
      BloomFilter<CharSequence> guava = SnapshotFixtures.emptyGuavaFilter(v4);
      keys.forEach(guava::put);
      assertThat(
              BloomFilter.readFrom(
                  new ByteArrayInputStream(payload(client, ns.name(), v4)),
                  Funnels.stringFunnel(StandardCharsets.UTF_8)))
          .isEqualTo(guava);
      keys.add("added-5");
      changeKeys(client, ns, List.copyOf(keys));
    } finally {
      OPERATOR.start();
    }
    awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 5L);
    Manifest v5 = manifest(client, ns.name(), "ids");
    assertThat(v5.baseVersion()).as("compacted onto v4").isEqualTo(4L);
    assertThat(v5.deltas()).hasSize(1);
    assertThat(payload(client, ns.name(), v5)).hasSize((int) v5.totalBytes());

    // And mid-delta: part of v6's delta left behind.
    OPERATOR.stop();
    try {
      ConfigMap leftover =
          SnapshotConfigMaps.deltaChunk(ns.name(), "ids", 6, 0, new byte[] {1, 2, 3}, 3);
      leftover.getMetadata().setOwnerReferences(List.of(owner(created)));
      client.configMaps().inNamespace(ns.name()).resource(leftover).create();
      keys.add("added-6");
      changeKeys(client, ns, List.copyOf(keys));
    } finally {
      OPERATOR.start();
    }
    awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 6L);
    Manifest v6 = manifest(client, ns.name(), "ids");
    assertThat(v6.baseVersion()).isEqualTo(4L);
    assertThat(v6.deltas()).hasSize(2);
    BloomFilter<CharSequence> guava = SnapshotFixtures.emptyGuavaFilter(v6);
    keys.forEach(guava::put);
    assertThat(
            BloomFilter.readFrom(
                new ByteArrayInputStream(payload(client, ns.name(), v6)),
                Funnels.stringFunnel(StandardCharsets.UTF_8)))
        .isEqualTo(guava);
    await()
        .atMost(READY)
        .untilAsserted(
            () ->
                assertThat(chunkNames(client, ns.name(), "ids"))
                    .containsExactlyInAnyOrderElementsOf(namedChunks(v6)));
  }

  /**
   * New source content, and a rebuild request so the operator reads it now rather than at the next
   * refresh (it does not watch source ConfigMaps).
   */
  private static void changeKeys(KubernetesClient client, TestNamespace ns, List<String> keys) {
    SnapshotFixtures.changeKeys(client, ns.name(), "ids", keys);
  }

  private static io.fabric8.kubernetes.api.model.OwnerReference owner(
      io.bloomoperator.api.BloomFilter filter) {
    return new OwnerReferenceBuilder()
        .withApiVersion("bloomoperator.io/v1alpha1")
        .withKind("BloomFilter")
        .withName(filter.getMetadata().getName())
        .withUid(filter.getMetadata().getUid())
        .withController(true)
        .build();
  }

  private static List<String> keys(String prefix, int from, int to) {
    return IntStream.range(from, to).mapToObj(i -> prefix + "-" + i).toList();
  }
}
