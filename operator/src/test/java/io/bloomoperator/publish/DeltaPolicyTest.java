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
