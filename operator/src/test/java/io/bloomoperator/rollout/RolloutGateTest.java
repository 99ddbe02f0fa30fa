package io.bloomoperator.rollout;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.RolloutSpec;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which builds the rollout controls hold, from the spec, the annotations and the figures. */
class RolloutGateTest {

  private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");
  private static final String SHA = "ab".repeat(32);

  @ParameterizedTest(name = "{0} -> {1} keys, max drop {2} %: held {3}")
  @CsvSource({
    "100, 40, 50, true",
    "100, 50, 50, false", // exactly the limit is allowed
    "100, 49, 50, true",
    "100, 150, 1, false", // growth is never a drop
    "3, 1, 60, true",
    "3, 2, 60, false",
    "0, 0, 1, false", // nothing published to compare with
    "4000000000, 1, 100, false",
  })
  void theDropIsComparedInWholePercent(long before, long after, int max, boolean held) {
    assertThat(RolloutGate.dropTooLarge(max, manifest(before), after)).isEqualTo(held);
  }

  @Test
  void pinBeforePauseBeforeTheGuardAndAnApprovalReleasesOnlyItsContent() {
    assertThat(
            RolloutGate.holdReason(filter(rollout(null, 1L, 50), Map.of()), manifest(100), 10, SHA))
        .contains(Reasons.ROLLOUT_PINNED);
    assertThat(
            RolloutGate.holdReason(
                filter(rollout(true, null, 50), Map.of()), manifest(100), 10, SHA))
        .contains(Reasons.ROLLOUT_PAUSED);
    assertThat(
            RolloutGate.holdReason(
                filter(rollout(false, null, 50), Map.of()), manifest(100), 10, SHA))
        .contains(Reasons.KEY_COUNT_DROPPED);
    assertThat(
            RolloutGate.holdReason(
                filter(rollout(null, null, 50), Map.of(RolloutGate.APPROVE_ANNOTATION, SHA)),
                manifest(100),
                10,
                SHA))
        .isEmpty();
    assertThat(
            RolloutGate.holdReason(
                filter(
                    rollout(null, null, 50),
                    Map.of(RolloutGate.APPROVE_ANNOTATION, "cd".repeat(32))),
                manifest(100),
                10,
                SHA))
        .as("an approval of other content")
        .contains(Reasons.KEY_COUNT_DROPPED);
    assertThat(RolloutGate.holdReason(filter(null, Map.of()), manifest(100), 10, SHA)).isEmpty();
  }

  @Test
  void aHeldBuildStandsUntilTheSourceTheSpecOrARequestMoves() {
    BloomFilter filter = filter(rollout(true, null, null), Map.of());
    HeldBuild held = new HeldBuild();
    held.setSourceToken("rv-7");
    held.setSpecGeneration(1L);
    held.setBuiltAt(NOW.toString());
    filter.getStatus().setHeld(held);
    Duration refresh = Duration.ofMinutes(1);
    assertThat(RolloutGate.heldIsCurrent(filter, "rv-7", refresh, NOW, false)).isTrue();
    assertThat(RolloutGate.heldIsCurrent(filter, "rv-8", refresh, NOW, false)).isFalse();
    assertThat(RolloutGate.heldIsCurrent(filter, "rv-7", refresh, NOW, true)).isFalse();
    assertThat(RolloutGate.heldIsCurrent(filter, null, refresh, NOW.plusSeconds(30), false))
        .isTrue();
    assertThat(RolloutGate.heldIsCurrent(filter, null, refresh, NOW.plusSeconds(60), false))
        .isFalse();
    filter.getMetadata().setGeneration(2L);
    assertThat(RolloutGate.heldIsCurrent(filter, "rv-7", refresh, NOW, false)).isFalse();
    filter.getMetadata().setGeneration(1L);
    filter.getMetadata().setAnnotations(Map.of(RolloutGate.APPROVE_ANNOTATION, SHA));
    assertThat(RolloutGate.heldIsCurrent(filter, "rv-7", refresh, NOW, false))
        .as("a new approval builds again")
        .isFalse();
    filter.getStatus().setApproved(SHA);
    assertThat(RolloutGate.heldIsCurrent(filter, "rv-7", refresh, NOW, false)).isTrue();
  }

  private static RolloutSpec rollout(Boolean paused, Long pin, Integer maxDrop) {
    RolloutSpec rollout = new RolloutSpec();
    rollout.setPaused(paused);
    rollout.setPinVersion(pin);
    rollout.setMaxKeyCountDropPercent(maxDrop);
    return rollout;
  }

  private static BloomFilter filter(RolloutSpec rollout, Map<String, String> annotations) {
    BloomFilter filter = new BloomFilter();
    filter.setMetadata(
        new ObjectMetaBuilder()
            .withName("ids")
            .withNamespace("shop")
            .withGeneration(1L)
            .withAnnotations(annotations)
            .build());
    BloomFilterSpec spec = new BloomFilterSpec();
    spec.setRollout(rollout);
    filter.setSpec(spec);
    filter.setStatus(new BloomFilterStatus());
    return filter;
  }

  private static Manifest manifest(long keys) {
    return new Manifest(
        Manifest.FORMAT,
        1,
        "ids",
        KeyType.STRING,
        64,
        3,
        keys,
        0.01,
        16,
        SHA,
        NOW.toString(),
        List.of(new Manifest.ChunkRef("ids-bloom-v1-0", 16, SHA)));
  }
}
