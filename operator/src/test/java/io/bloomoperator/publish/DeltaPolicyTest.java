package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** The delta limits an administrator sets, and the decisions they lead to. */
class DeltaPolicyTest {

  private static final String SHA = "0".repeat(64);

  @Test
  void unsetOrBlankVariablesGiveTheDocumentedDefaults() {
    assertThat(DeltaPolicy.fromEnvironment(Map.of())).isEqualTo(new DeltaPolicy(32, 25, 50));
    assertThat(DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_CHAIN", " ")))
        .isEqualTo(DeltaPolicy.defaults());
  }

  @Test
  void zeroChainLengthSwitchesDeltasOff() {
    DeltaPolicy off = DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_CHAIN", "0"));
    assertThat(off.enabled()).isFalse();
    assertThat(off.maxDeltaBytes(1_000_000)).isEqualTo(-1);
  }

  @Test
  void badValuesNameTheVariableAndAreNeverClamped() {
    assertThatThrownBy(() -> DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_CHAIN", "-1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("BLOOM_DELTA_MAX_CHAIN");
    assertThatThrownBy(
            () -> DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_PERCENT", "twenty")))
        .hasMessageContaining("BLOOM_DELTA_MAX_PERCENT");
    assertThatThrownBy(() -> DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_PERCENT", "101")))
        .hasMessageContaining("BLOOM_DELTA_MAX_PERCENT must be at most 100");
    assertThatThrownBy(
            () -> DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_CHAIN_MAX_PERCENT", "1001")))
        .hasMessageContaining("BLOOM_DELTA_CHAIN_MAX_PERCENT must be at most 1000");
    // A value past int's range must not wrap into a small or negative limit.
    assertThatThrownBy(
            () -> DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_CHAIN", "4294967328")))
        .hasMessageContaining("BLOOM_DELTA_MAX_CHAIN must be at most 1000");
  }

  @Test
  void percentagesOfHugePayloadsDoNotOverflow() {
    DeltaPolicy policy = new DeltaPolicy(32, 25, 50);
    long huge = Long.MAX_VALUE - 3;
    assertThat(policy.maxDeltaBytes(huge)).isPositive().isLessThanOrEqualTo(huge / 4 + 1);
    assertThat(policy.maxDeltaBytes(1000)).isEqualTo(250);
    assertThat(policy.maxDeltaBytes(3)).isZero();
  }

  @Test
  void theChainIsCompactedWhenItIsTooLongOrTooBig() {
    DeltaPolicy policy = new DeltaPolicy(3, 25, 50);
    // Whole payload 1000 bytes: the chain may hold up to 500 bytes of deltas and 3 deltas.
    assertThat(policy.chainHasRoom(chain(100, 100), 100, 1000)).isTrue();
    assertThat(policy.chainHasRoom(chain(100, 100), 300, 1000)).as("500 bytes in all").isTrue();
    assertThat(policy.chainHasRoom(chain(100, 100), 301, 1000)).as("501 bytes").isFalse();
    assertThat(policy.chainHasRoom(chain(10, 10, 10), 10, 1000)).as("a 4th delta").isFalse();
    assertThat(policy.chainHasRoom(chain(), 10, 1000)).as("a whole snapshot").isTrue();
  }

  @Test
  void streamChainsGrowAsTheSquareRootOfThePayloadBetweenTheBuildAndStreamBounds() {
    DeltaPolicy policy = DeltaPolicy.defaults();
    // 1M keys at 1 % (Guava, ~1.2 MB): 450 * 72 * 73 / 2 <= 1.2 MB < 450 * 73 * 74 / 2.
    assertThat(policy.forStream(1_198_132).maxDeltas()).isEqualTo(72);
    // 10M keys (~12 MB) and 100M keys (~120 MB, capped).
    assertThat(policy.forStream(11_981_323).maxDeltas()).isEqualTo(230);
    assertThat(policy.forStream(119_813_206).maxDeltas()).isEqualTo(512);
    // A small filter compacts like a build's chain, never sooner.
    assertThat(policy.forStream(10_000).maxDeltas()).isEqualTo(32);
    // Everything else is the builds' policy.
    DeltaPolicy stream = policy.forStream(119_813_206);
    assertThat(stream.maxDeltaPercent()).isEqualTo(policy.maxDeltaPercent());
    assertThat(stream.maxChainPercent()).isEqualTo(policy.maxChainPercent());
    assertThat(stream.maxDeltaBytes(1000)).isEqualTo(policy.maxDeltaBytes(1000));
  }

  @Test
  void theStreamLengthIsExactAtItsBoundary() {
    for (long length : new long[] {1, 2, 12, 72, 511, 512, 999}) {
      long cost = DeltaPolicy.DELTA_ENTRY_BYTES * length * (length + 1) / 2;
      assertThat(DeltaPolicy.streamChainLength(cost)).isEqualTo(length);
      assertThat(DeltaPolicy.streamChainLength(cost - 1)).isEqualTo(length - 1);
    }
    assertThat(DeltaPolicy.streamChainLength(0)).isZero();
    assertThat(DeltaPolicy.streamChainLength(Long.MAX_VALUE / 1024)).isPositive();
  }

  @Test
  void theStreamBoundIsAnAdministratorsSettingAndZeroMeansLikeBuilds() {
    assertThat(DeltaPolicy.fromEnvironment(Map.of()).maxStreamDeltas()).isEqualTo(512);
    DeltaPolicy like = DeltaPolicy.fromEnvironment(Map.of("BLOOM_STREAM_DELTA_MAX_CHAIN", "0"));
    assertThat(like.forStream(119_813_206)).isEqualTo(like);
    DeltaPolicy longer =
        DeltaPolicy.fromEnvironment(Map.of("BLOOM_STREAM_DELTA_MAX_CHAIN", "1000"));
    assertThat(longer.forStream(1_300_000_000L).maxDeltas()).isEqualTo(1000);
    assertThatThrownBy(
            () -> DeltaPolicy.fromEnvironment(Map.of("BLOOM_STREAM_DELTA_MAX_CHAIN", "1001")))
        .hasMessageContaining("BLOOM_STREAM_DELTA_MAX_CHAIN must be at most 1000");
    DeltaPolicy off = DeltaPolicy.fromEnvironment(Map.of("BLOOM_DELTA_MAX_CHAIN", "0"));
    assertThat(off.forStream(119_813_206).enabled()).as("deltas off stay off").isFalse();
  }

  @Test
  void aDeltaEntryCostsWhatTheRuleAssumesInTheManifestConfigMap() throws Exception {
    // What one more delta adds to the manifest as written into its ConfigMap (a JSON string
    // value: quotes and newlines escaped), with realistic version numbers and a long filter name.
    var json = new com.fasterxml.jackson.databind.ObjectMapper();
    long withOne = json.writeValueAsString(realisticChain(1).toJson()).length();
    long withTwenty = json.writeValueAsString(realisticChain(20).toJson()).length();
    double perEntry = (withTwenty - withOne) / 19.0;
    assertThat((double) DeltaPolicy.DELTA_ENTRY_BYTES)
        .as("measured %.0f bytes a delta entry", perEntry)
        .isBetween(perEntry, perEntry * 1.25);
  }

  private static Manifest realisticChain(int deltas) {
    String name = "products-by-region-filter";
    List<Manifest.Delta> chain =
        LongStream.range(0, deltas)
            .mapToObj(
                i ->
                    new Manifest.Delta(
                        1_000_001 + i,
                        123_456,
                        98_765,
                        "a".repeat(64),
                        List.of(
                            new Manifest.ChunkRef(
                                io.bloomoperator.snapshot.SnapshotNames.deltaChunkName(
                                    name, 1_000_001 + i, 0),
                                123_456,
                                "b".repeat(64)))))
            .toList();
    return new Manifest(
        Manifest.FORMAT_CHAIN,
        1_000_000 + deltas,
        name,
        KeyType.STRING,
        8000,
        7,
        100,
        0.01,
        1000,
        SHA,
        "2026-11-30T00:00:00Z",
        List.of(),
        new Manifest.Chain(1_000_000, SHA, chain));
  }

  private static Manifest chain(long... deltaBytes) {
    List<Manifest.Delta> deltas =
        LongStream.range(0, deltaBytes.length)
            .mapToObj(i -> new Manifest.Delta(2 + i, deltaBytes[(int) i], 1, SHA, List.of()))
            .toList();
    return new Manifest(
        deltas.isEmpty() ? Manifest.FORMAT : Manifest.FORMAT_CHAIN,
        1 + deltas.size(),
        "ids",
        KeyType.STRING,
        8000,
        7,
        100,
        0.01,
        1000,
        SHA,
        "2026-11-30T00:00:00Z",
        List.of(),
        deltas.isEmpty() ? null : new Manifest.Chain(1, SHA, deltas));
  }
}
