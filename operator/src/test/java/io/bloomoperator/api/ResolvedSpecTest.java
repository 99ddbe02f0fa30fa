package io.bloomoperator.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Defaults, and the CRD's bounds checked again for resources admitted by an older CRD. */
class ResolvedSpecTest {

  private static final Duration MIN_REFRESH = Duration.ofSeconds(10);

  @Test
  void defaultsAreApplied() {
    ResolvedSpec inline = ResolvedSpec.of(spec(0.01, null, null, true), MIN_REFRESH);
    assertThat(inline)
        .isEqualTo(
            new ResolvedSpec(
                KeyType.STRING,
                0.01,
                null,
                null,
                SnapshotSpec.DEFAULT_CHUNK_BYTES,
                Duration.ofMinutes(2),
                null,
                FilterFormat.GUAVA,
                SplitBlockSize.FIT));
    assertThat(ResolvedSpec.of(spec(0.01, null, null, false), MIN_REFRESH).refresh())
        .as("a source outside the resource is checked every minute")
        .isEqualTo(ResolvedSpec.DEFAULT_SOURCE_CHECK);
  }

  @Test
  void boundsAreCheckedWithTheFieldNamed() {
    assertThatThrownBy(() -> ResolvedSpec.of(spec(1e-10, null, null, true), MIN_REFRESH))
        .hasMessageContaining("spec.falsePositiveRate");
    assertThatThrownBy(() -> ResolvedSpec.of(spec(0.01, "2s", null, true), MIN_REFRESH))
        .hasMessageContaining("spec.refreshInterval 2s is below the operator's minimum of 10s");
    assertThatThrownBy(() -> ResolvedSpec.of(spec(0.01, null, "2h", true), MIN_REFRESH))
        .hasMessageContaining("spec.snapshot.retainPreviousFor must be at most 1h");
    BloomFilterSpec tooMany = spec(0.01, null, null, true);
    tooMany.setExpectedInsertions(BloomFilterSpec.MAX_EXPECTED_INSERTIONS + 1);
    assertThatThrownBy(() -> ResolvedSpec.of(tooMany, MIN_REFRESH))
        .hasMessageContaining("spec.expectedInsertions");
    assertThatThrownBy(() -> ResolvedSpec.of(new BloomFilterSpec(), MIN_REFRESH))
        .hasMessageContaining("spec.falsePositiveRate is required");
    ResolvedSpec edges = ResolvedSpec.of(spec(0.01, "10s", "1h", true), MIN_REFRESH);
    assertThat(edges.refresh()).isEqualTo(Duration.ofSeconds(10));
    assertThat(edges.retainPrevious()).isEqualTo(Duration.ofHours(1));
  }

  private static BloomFilterSpec spec(double fpp, String refresh, String retain, boolean inline) {
    BloomFilterSpec spec = new BloomFilterSpec();
    spec.setFalsePositiveRate(fpp);
    SourceSpec source = new SourceSpec();
    if (inline) {
      source.setInline(List.of("a"));
    } else {
      source.setConfigMap(new KeyRef("ids", "ids"));
    }
    spec.setSource(source);
    spec.setRefreshInterval(refresh);
    if (retain != null) {
      SnapshotSpec snapshot = new SnapshotSpec();
      snapshot.setRetainPreviousFor(retain);
      spec.setSnapshot(snapshot);
    }
    return spec;
  }
}
