package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code spec.format} end to end on a real API server: switching a filter from Guava to SplitBlock
 * and back publishes a whole new snapshot in the new layout each time (never a delta across
 * layouts), deltas work within the split-block layout, and a running reader follows every switch
 * without a restart, with no false negative.
 */
@RealKubernetes(crdDirs = "crds")
class SplitBlockFormatOperatorTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")));

  private static final Duration READY = Duration.ofSeconds(30);

  private static final String FILTER_YAML =
      """
      apiVersion: bloomoperator.io/v1alpha1
      kind: BloomFilter
      metadata: {name: ids}
      spec:
        falsePositiveRate: 0.01
        expectedInsertions: 30000
        source:
          configMap: {name: ids, key: ids}
        refreshInterval: 10m
        snapshot: {chunkSizeBytes: 4096}
      """;

  @Test
  void formatSwitchesPublishNewBasesAndARunningReaderFollows(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 20_000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    apply(client, ns.name(), FILTER_YAML);
    var filter = awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    assertThat(filter.getSpec().getFormat()).as("the default").isEqualTo(FilterFormat.GUAVA);
    assertThat(filter.getStatus().getFormat()).isEqualTo("Guava");
    Manifest v1 = manifest(client, ns.name(), "ids");
    assertThat(v1.format()).isEqualTo(Manifest.FORMAT);

    try (LiveBloomFilter<String> reader =
        BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING).start()) {
      assertThat(reader.awaitReady(READY)).isTrue();
      assertThat(keys).allMatch(reader::mightContain);

      // Guava -> SplitBlock: a whole new base in the split-block layout.
      setFormat(client, ns, "SplitBlock");
      filter =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> f.getStatus().getVersion() == 2 && ready(f, "True", "Published"));
      assertThat(filter.getStatus().getFormat()).isEqualTo("SplitBlock");
      assertThat(filter.getStatus().getNumHashFunctions()).isEqualTo(8);
      assertThat(filter.getStatus().getExpectedFpp()).isLessThanOrEqualTo(0.01);
      Manifest v2 = manifest(client, ns.name(), "ids");
      assertThat(v2.format()).isEqualTo(Manifest.FORMAT_SPLIT_BLOCK);
      assertThat(v2.chained()).as("never a delta across layouts").isFalse();
      // The payload is Parquet's bitset for these keys (SplitBlockBits is pinned to
      // parquet-column).
      assertThat(payload(client, ns.name(), v2)).isEqualTo(splitBlockBitset(v2, keys));

      await().atMost(READY).until(() -> reader.currentVersion() == 2);
      assertThat(reader.currentManifest().orElseThrow().format())
          .isEqualTo(FilterFormat.SPLIT_BLOCK);
      assertNoFalseNegatives(reader, keys);
      assertThat(falsePositiveRate(reader)).isLessThan(0.02);

      // Within the layout, a small change is a delta on the split-block base.
      keys.removeAll(keys("k", 0, 100));
      keys.addAll(keys("new", 0, 100));
      SnapshotFixtures.changeKeys(client, ns.name(), "ids", List.copyOf(keys));
      awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 3);
      Manifest v3 = manifest(client, ns.name(), "ids");
      assertThat(v3.format()).isEqualTo(Manifest.FORMAT_SPLIT_BLOCK_CHAIN);
      assertThat(v3.baseVersion()).isEqualTo(2);
      assertThat(payload(client, ns.name(), v3)).isEqualTo(splitBlockBitset(v3, keys));
      await().atMost(READY).until(() -> reader.currentVersion() == 3);
      assertNoFalseNegatives(reader, keys);

      // SplitBlock -> Guava: again a whole new base, which Guava itself reads.
      setFormat(client, ns, "Guava");
      filter =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> f.getStatus().getVersion() == 4 && ready(f, "True", "Published"));
      assertThat(filter.getStatus().getFormat()).isEqualTo("Guava");
      Manifest v4 = manifest(client, ns.name(), "ids");
      assertThat(v4.format()).isEqualTo(Manifest.FORMAT);
      BloomFilter<CharSequence> guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(payload(client, ns.name(), v4)),
              Funnels.stringFunnel(StandardCharsets.UTF_8));
      assertThat(keys).allMatch(guava::mightContain);
      await().atMost(READY).until(() -> reader.currentVersion() == 4);
      assertThat(reader.currentManifest().orElseThrow().format()).isEqualTo(FilterFormat.GUAVA);
      assertNoFalseNegatives(reader, keys);
      assertThat(reader.failures()).as("no load failed on the way").isZero();
    }
  }

  /** Every key answers true, one at a time and in batches. */
  private static void assertNoFalseNegatives(LiveBloomFilter<String> reader, Set<String> keys) {
    assertThat(keys).allMatch(reader::mightContain);
    String[] all = keys.toArray(String[]::new);
    boolean[] results = new boolean[all.length];
    assertThat(reader.mightContainAll(all, 0, all.length, results)).isEqualTo(all.length);
  }

  private static double falsePositiveRate(LiveBloomFilter<String> reader) {
    String[] absent = keys("absent", 0, 50_000).toArray(String[]::new);
    boolean[] results = new boolean[absent.length];
    return reader.mightContainAll(absent, 0, absent.length, results) / (double) absent.length;
  }

  private static byte[] splitBlockBitset(Manifest manifest, Set<String> keys) {
    SplitBlockBits.Builder builder =
        SplitBlockBits.builder(KeyType.STRING, manifest.numBits() / 256);
    keys.forEach(builder::putString);
    return builder.build().toByteArray();
  }

  private static void setFormat(KubernetesClient client, TestNamespace ns, String format) {
    SnapshotFixtures.mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("format", format)));
  }

  private static List<String> keys(String prefix, int from, int to) {
    return new ArrayList<>(IntStream.range(from, to).mapToObj(i -> prefix + "-" + i).toList());
  }
}
