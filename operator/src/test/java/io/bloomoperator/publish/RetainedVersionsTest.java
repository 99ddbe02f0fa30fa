package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The retained versions' bookkeeping, without a cluster: order, bounds, trust, budget. */
class RetainedVersionsTest {

  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
  private static final int CHUNK = 1024;

  @Test
  void theReplacedVersionGoesInFrontAndTheListIsCutToKeep() {
    RetainedVersions none = RetainedVersions.NONE;
    RetainedVersions one = none.after(whole(1), 2);
    RetainedVersions two = one.after(whole(2), 2);
    RetainedVersions three = two.after(whole(3), 2);
    assertThat(three.manifests()).extracting(Manifest::version).containsExactly(3L, 2L);
    assertThat(three.after(whole(3), 2).manifests())
        .as("one entry per version")
        .extracting(Manifest::version)
        .containsExactly(3L, 2L);
    assertThat(three.after(whole(4), 0).manifests()).isEmpty();
  }

  @Test
  void readsBackWhatItWritesAndSkipsEntriesThatDoNotValidate() {
    RetainedVersions two = RetainedVersions.NONE.after(whole(1), 5).after(whole(2), 5);
    assertThat(RetainedVersions.of(configMap(two.toData())).manifests())
        .containsExactlyElementsOf(two.manifests());
    String broken = two.toData().replaceFirst("\"totalBytes\":\\d+", "\"totalBytes\":1");
    assertThat(RetainedVersions.of(configMap(broken)).manifests())
        .extracting(Manifest::version)
        .containsExactly(1L);
    assertThat(RetainedVersions.of(configMap("{not json")).manifests()).isEmpty();
    assertThat(RetainedVersions.of(configMap("[" + "1,".repeat(200_000) + "1]")).manifests())
        .as("over the size bound")
        .isEmpty();
  }

  @Test
  void onlyManifestsTheStatusRecordsAreTrusted() {
    RetainedVersions retained = RetainedVersions.NONE.after(whole(1), 5).after(whole(2), 5);
    BloomFilterStatus status = new BloomFilterStatus();
    status.setRetainedVersions(retained.records());
    String edited = retained.toData().replaceFirst("\"keyCount\":100", "\"keyCount\":7");
    RetainedVersions read = RetainedVersions.of(configMap(edited));
    assertThat(read.manifests()).hasSize(2);
    assertThat(read.trusted(status).manifests())
        .extracting(Manifest::version)
        .as("the edited entry (v2, in front) is not trusted, v1 is")
        .containsExactly(1L);
    assertThat(read.trusted(null).manifests()).isEmpty();
  }

  @Test
  void theBudgetCountsRetainedChunksBeyondThePublishedChainOnce() throws IOException {
    Manifest v1 = whole(1);
    Manifest v2 = delta(v1, 2);
    Manifest v3 = whole(3);
    RetainedVersions retained = RetainedVersions.NONE.after(v1, 5).after(v2, 5);
    assertThat(retained.parts()).containsExactlyInAnyOrder(Part.base(1), Part.delta(2));
    long base = v1.totalBytes();
    long deltaBytes = v2.deltas().get(0).bytes();
    assertThat(retained.storedBytesBeyond(v3))
        .isEqualTo(
            base
                + deltaBytes
                + (v1.chunks().size() + v2.deltas().get(0).chunks().size())
                    * WriteBudget.Limits.OBJECT_OVERHEAD_BYTES);
    assertThat(retained.storedBytesBeyond(v2)).as("all named by the published chain").isZero();
  }

  private static ConfigMap configMap(String data) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName("ids-bloom")
        .endMetadata()
        .withData(Map.of(RetainedVersions.DATA_KEY, data))
        .build();
  }

  private static BloomFilterBits bits(String prefix) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 128, 3);
    for (int i = 0; i < 100; i++) {
      builder.putString(prefix + i);
    }
    return builder.build();
  }

  private static Manifest whole(long version) {
    try {
      BloomFilterBits bits = bits("v" + version);
      return Manifest.of(
          "ids",
          version,
          bits,
          100,
          SnapshotEncoder.encode(bits, CHUNK, (index, data, length, sha) -> {}),
          NOW.plusSeconds(version));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static Manifest delta(Manifest base, long version) throws IOException {
    BloomFilterBits from = bits("v" + base.version());
    BloomFilterBits to = bits("d" + version);
    return Manifest.withDelta(
        base,
        version,
        to,
        100,
        SnapshotEncoder.sha256(to),
        SnapshotDelta.encode(from, to, CHUNK, (index, data, length, sha) -> {}),
        NOW.plusSeconds(version));
  }
}
