package io.bloomoperator.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * When a stream delta may go out ({@link RunState#streamSlot}): {@code publishEvery} after the
 * published version was written, never further than {@code publishEvery} from now.
 */
class StreamSlotTest {

  private static final Instant T = Instant.parse("2026-12-03T09:00:00Z");
  private static final Duration EVERY = Duration.ofSeconds(2);

  private static RunState publishedAt(Instant createdAt) throws Exception {
    BloomFilterBits bits =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(1_000, 0.01)).build();
    SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 1_000_000, (i, d, l, s) -> {});
    Manifest manifest = Manifest.of("f", 3, bits, 0, encoded, createdAt);
    return new RunState(
        new PublishedSnapshot(new ConfigMap(), manifest), Optional.empty(), null, null);
  }

  @Test
  void aReconcileWithinTheIntervalWaitsForTheSlotOfTheLastPublish() throws Exception {
    RunState state = publishedAt(T);
    assertThat(state.streamSlot(T.plusMillis(500), EVERY)).isEqualTo(T.plus(EVERY));
    assertThat(state.streamSlot(T.plusSeconds(5), EVERY)).isEqualTo(T.plus(EVERY));
  }

  @Test
  void aVersionStampedAheadOfThisClockDelaysTheStreamByOneIntervalAtMost() throws Exception {
    // Another replica's clock, or a createdAt up to OwnManifests.MAX_CLOCK_SKEW ahead.
    RunState state = publishedAt(T.plusSeconds(90));
    assertThat(state.streamSlot(T, EVERY)).isEqualTo(T.plus(EVERY));
  }

  @Test
  void nothingPublishedMeansNoWait() {
    RunState state = new RunState(null, Optional.empty(), null, null);
    assertThat(state.streamSlot(T, EVERY)).isEqualTo(T);
  }
}
