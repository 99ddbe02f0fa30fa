package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.BloomFilterSpec;
import io.bloomoperator.api.SnapshotSpec;
import io.bloomoperator.api.SourceSpec;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.SecretAccess;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The administrator's limits: parsing, and how the reconciler applies them (no cluster). */
class OperatorLimitsTest {

  private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");

  @Test
  void defaultsAreTheDocumentedOnes() {
    OperatorSettings defaults = OperatorSettings.defaults();
    assertThat(defaults.maxSnapshotBytes()).isEqualTo(64L << 20);
    assertThat(defaults.maxNamespaceBytes()).isEqualTo(256L << 20);
    assertThat(defaults.minPublishInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(defaults.minRefreshInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(defaults.maxConcurrentBuilds()).isEqualTo(2);
    assertThat(defaults.secretAccess()).isEqualTo(SecretAccess.Mode.ANNOTATION);
  }

  @Test
  void everySettingIsReadFromTheEnvironment() {
    OperatorSettings s = OperatorSettings.fromEnvironment(Map.of(
        "BLOOM_MAX_SNAPSHOT_BYTES", "1000", "BLOOM_MAX_NAMESPACE_BYTES", "5000",
        "BLOOM_MIN_PUBLISH_INTERVAL", "0s", "BLOOM_MIN_REFRESH_INTERVAL", "1m30s",
        "BLOOM_MAX_CONCURRENT_BUILDS", "4", "BLOOM_SECRET_ACCESS", "namespace"));
    assertThat(s).isEqualTo(new OperatorSettings(1000, 0, 5000, Duration.ZERO,
        Duration.ofSeconds(90), 4, SecretAccess.Mode.NAMESPACE, HttpSourceSettings.defaults(),
        null));
  }

  @Test
  void badSettingsNameTheVariable() {
    assertThatThrownBy(() -> OperatorSettings.fromEnvironment(Map.of(
        "BLOOM_MAX_CONCURRENT_BUILDS", "0"))).hasMessageContaining("BLOOM_MAX_CONCURRENT_BUILDS");
    assertThatThrownBy(() -> OperatorSettings.fromEnvironment(Map.of(
        "BLOOM_MIN_PUBLISH_INTERVAL", "soon"))).hasMessageContaining("BLOOM_MIN_PUBLISH_INTERVAL");
    assertThatThrownBy(() -> OperatorSettings.fromEnvironment(Map.of(
        "BLOOM_SECRET_ACCESS", "trust-me"))).hasMessageContaining("BLOOM_SECRET_ACCESS");
  }

  @Test
  void aPublishWaitsUntilTheMinimumIntervalHasPassed() throws Exception {
    PublishedSnapshot publishedAgo5s = published(NOW.minusSeconds(5));
    assertThat(BloomFilterReconciler.publishThrottle(publishedAgo5s, Duration.ofSeconds(10), NOW))
        .contains(Duration.ofSeconds(5));
    assertThat(BloomFilterReconciler.publishThrottle(published(NOW.minusSeconds(10)),
        Duration.ofSeconds(10), NOW)).isEmpty();
    assertThat(BloomFilterReconciler.publishThrottle(publishedAgo5s, Duration.ZERO, NOW))
        .as("switched off").isEmpty();
    assertThat(BloomFilterReconciler.publishThrottle(null, Duration.ofSeconds(10), NOW))
        .as("the first publish never waits").isEmpty();
  }

  @Test
  void specBoundsAreCheckedAgainForResourcesFromAnOlderCrd() {
    OperatorSettings limits = OperatorSettings.defaults();
    assertThatThrownBy(() -> BloomFilterReconciler.Settings.of(spec(1e-10, null, null), limits))
        .hasMessageContaining("spec.falsePositiveRate");
    assertThatThrownBy(() -> BloomFilterReconciler.Settings.of(spec(0.01, "2s", null), limits))
        .hasMessageContaining("spec.refreshInterval 2s is below the operator's minimum of 10s");
    assertThatThrownBy(() -> BloomFilterReconciler.Settings.of(spec(0.01, null, "2h"), limits))
        .hasMessageContaining("spec.snapshot.retainPreviousFor must be at most 1h");
    BloomFilterSpec tooMany = spec(0.01, null, null);
    tooMany.setExpectedInsertions(BloomFilterSpec.MAX_EXPECTED_INSERTIONS + 1);
    assertThatThrownBy(() -> BloomFilterReconciler.Settings.of(tooMany, limits))
        .hasMessageContaining("spec.expectedInsertions");
    assertThat(BloomFilterReconciler.Settings.of(spec(0.01, "10s", "1h"), limits).refresh())
        .isEqualTo(Duration.ofSeconds(10));
  }

  private static BloomFilterSpec spec(double fpp, String refresh, String retain) {
    BloomFilterSpec spec = new BloomFilterSpec();
    spec.setFalsePositiveRate(fpp);
    SourceSpec source = new SourceSpec();
    source.setInline(List.of("a"));
    spec.setSource(source);
    spec.setRefreshInterval(refresh);
    if (retain != null) {
      SnapshotSpec snapshot = new SnapshotSpec();
      snapshot.setRetainPreviousFor(retain);
      spec.setSnapshot(snapshot);
    }
    return spec;
  }

  private static PublishedSnapshot published(Instant at) throws Exception {
    BloomFilterBits bits = BloomFilterBits.builder(KeyType.STRING, 64, 1).build();
    Manifest manifest = Manifest.of("f", 1, bits, 0,
        SnapshotEncoder.encode(bits, 1024, (index, data, length, sha) -> { }), at);
    return new PublishedSnapshot(new ConfigMapBuilder().withNewMetadata().withName("f-bloom")
        .endMetadata().build(), manifest);
  }
}
