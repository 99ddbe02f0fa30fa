package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SnapshotLimitsTest {

  private static final SnapshotLimits LIMITS = new SnapshotLimits(1L << 30, 100);

  @Test
  void acceptsTheOperatorsOwnManifest() throws Exception {
    LIMITS.check(manifest("ids", 3, 4), "ids");
  }

  @Test
  void refusesWrongFilterSizesCountsAndNames() throws Exception {
    assertRefused(manifest("ids", 3, 4), "other", LIMITS, LoadFailureReason.WRONG_FILTER);
    Manifest m = manifest("ids", 3, 4);
    assertRefused(
        m, "ids", LIMITS.withMaxTotalBytes(m.totalBytes() - 1), LoadFailureReason.TOO_LARGE);
    assertRefused(m, "ids", LIMITS.withMaxChunks(3), LoadFailureReason.TOO_LARGE);
    assertRefused(renamed(m, 2, "ids-bloom-v2-2"), "ids", LIMITS, LoadFailureReason.FOREIGN_CHUNK);
    assertRefused(
        renamed(m, 1, "kube-root-ca.crt"), "ids", LIMITS, LoadFailureReason.FOREIGN_CHUNK);
    // Two chunks just above 1 MiB each instead of the operator's layout: more than a ConfigMap
    // holds.
    long words = 262_145;
    long total = 6 + 8 * words;
    int first = SnapshotLimits.MAX_CHUNK_BYTES + 2;
    Manifest big =
        new Manifest(
            Manifest.FORMAT,
            1,
            "ids",
            KeyType.STRING,
            64 * words,
            3,
            1,
            0.5,
            total,
            "0".repeat(64),
            "2026-11-30T00:00:00Z",
            List.of(
                new Manifest.ChunkRef("ids-bloom-v1-0", first, "0".repeat(64)),
                new Manifest.ChunkRef("ids-bloom-v1-1", (int) (total - first), "0".repeat(64))));
    big.validate();
    assertRefused(big, "ids", LIMITS, LoadFailureReason.TOO_LARGE);
  }

  @Test
  void defaultIsAQuarterOfTheHeapCappedAtTheFormat() {
    assertThat(SnapshotLimits.forHeap(4L << 30).maxTotalBytes()).isEqualTo(1L << 30);
    assertThat(SnapshotLimits.forHeap(Long.MAX_VALUE).maxTotalBytes())
        .isEqualTo(SnapshotLimits.FORMAT_MAX_BYTES);
    assertThat(SnapshotLimits.forThisHeap().maxChunks())
        .isEqualTo(SnapshotLimits.DEFAULT_MAX_CHUNKS);
    assertThatThrownBy(() -> LIMITS.withMaxTotalBytes(0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** A real snapshot of {@code chunks} chunks. */
  private static Manifest manifest(String filter, long version, int chunks) throws Exception {
    BloomFilterBits bits = BloomFilterBits.builder(KeyType.STRING, 64L * 1024 * chunks, 3).build();
    int chunkSize = (int) ((SnapshotEncoder.payloadSize(bits) + chunks - 1) / chunks);
    SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, chunkSize, (i, d, l, s) -> {});
    Manifest manifest = Manifest.of(filter, version, bits, 0, encoded, Instant.now());
    assertThat(manifest.chunks()).hasSize(chunks);
    return manifest;
  }

  private static Manifest renamed(Manifest m, int index, String name) {
    List<Manifest.ChunkRef> chunks = new ArrayList<>(m.chunks());
    Manifest.ChunkRef ref = chunks.get(index);
    chunks.set(index, new Manifest.ChunkRef(name, ref.bytes(), ref.sha256()));
    return ManifestCopy.of(m).chunks(chunks).build();
  }

  private static void assertRefused(
      Manifest manifest, String filter, SnapshotLimits limits, LoadFailureReason reason) {
    assertThatThrownBy(() -> limits.check(manifest, filter))
        .isInstanceOfSatisfying(
            SnapshotRefusedException.class, e -> assertThat(e.reason()).isEqualTo(reason));
  }
}
