package io.bloomoperator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.SecretAccess;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The administrator's limits, as read from the environment. */
class OperatorLimitsTest {

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
    OperatorSettings s =
        OperatorSettings.fromEnvironment(
            Map.of(
                "BLOOM_MAX_SNAPSHOT_BYTES",
                "1000",
                "BLOOM_MAX_STORE_SNAPSHOT_BYTES",
                "1000",
                "BLOOM_MAX_NAMESPACE_BYTES",
                "5000",
                "BLOOM_MIN_PUBLISH_INTERVAL",
                "0s",
                "BLOOM_MIN_REFRESH_INTERVAL",
                "1m30s",
                "BLOOM_MAX_CONCURRENT_BUILDS",
                "4",
                "BLOOM_SECRET_ACCESS",
                "namespace"));
    assertThat(s)
        .isEqualTo(
            new OperatorSettings(
                1000,
                1000,
                0,
                5000,
                Duration.ZERO,
                Duration.ofSeconds(90),
                4,
                SecretAccess.Mode.NAMESPACE,
                HttpSourceSettings.defaults(),
                null,
                DeltaPolicy.defaults(),
                JdbcSourceSettings.defaults(),
                BuildLimits.defaults(),
                WriteBudget.Limits.defaults()));
  }

  /**
   * Issue 19: 100M keys at 1 % in an object store with the installs' defaults (1 GiB limit, heap 75
   * % of it, 2 builds), while the ConfigMap bound stays 64 MiB.
   */
  @Test
  void storeBackedSnapshotsAreBoundByTheHeapNotByEtcd() {
    long heap = 768L << 20;
    long bound = OperatorSettings.defaultMaxStoreSnapshotBytes(heap, 2, 64L << 20);
    long bitsFor100M = (long) Math.ceil(-100_000_000L * Math.log(0.01) / Math.pow(Math.log(2), 2));
    assertThat(bound).isEqualTo(128L << 20).isGreaterThan(bitsFor100M / 8);
    // Every slot's three arrays fit in the heap; more slots, a smaller bound.
    assertThat(OperatorSettings.defaultMaxStoreSnapshotBytes(heap, 4, 64L << 20) * 3 * 4)
        .isLessThanOrEqualTo(heap);
    // Never below the ConfigMap bound: a store does not make a filter smaller than etcd takes.
    assertThat(OperatorSettings.defaultMaxStoreSnapshotBytes(256L << 20, 2, 64L << 20))
        .isEqualTo(64L << 20);

    OperatorSettings defaults = OperatorSettings.defaults();
    assertThat(defaults.maxSnapshotBytes(false)).isEqualTo(64L << 20);
    assertThat(defaults.maxSnapshotBytes(true))
        .isEqualTo(
            OperatorSettings.defaultMaxStoreSnapshotBytes(
                Runtime.getRuntime().maxMemory(), 2, 64L << 20));
    assertThat(
            OperatorSettings.fromEnvironment(Map.of("BLOOM_MAX_STORE_SNAPSHOT_BYTES", "12345"))
                .maxSnapshotBytes(true))
        .isEqualTo(12345);
  }

  @Test
  void writeLimitsComeFromTheEnvironment() {
    OperatorSettings s =
        OperatorSettings.fromEnvironment(
            Map.of(
                "BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR", "3000000",
                "BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR", "2000000",
                "BLOOM_MAX_CHUNKS_PER_VERSION", "16"));
    assertThat(s.writes()).isEqualTo(new WriteBudget.Limits(3_000_000, 2_000_000, 16));
    assertThatThrownBy(
            () ->
                OperatorSettings.fromEnvironment(
                    Map.of("BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR", "0")))
        .hasMessageContaining("BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR");
  }

  @Test
  void badSettingsNameTheVariable() {
    assertThatThrownBy(
            () -> OperatorSettings.fromEnvironment(Map.of("BLOOM_MAX_CONCURRENT_BUILDS", "0")))
        .hasMessageContaining("BLOOM_MAX_CONCURRENT_BUILDS");
    assertThatThrownBy(
            () -> OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "soon")))
        .hasMessageContaining("BLOOM_MIN_PUBLISH_INTERVAL");
    assertThatThrownBy(
            () -> OperatorSettings.fromEnvironment(Map.of("BLOOM_SECRET_ACCESS", "trust-me")))
        .hasMessageContaining("BLOOM_SECRET_ACCESS");
  }
}
