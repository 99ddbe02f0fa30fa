package io.bloomoperator.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.SigningKeySecret;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.settings.OperatorSettings.Builds;
import io.bloomoperator.settings.OperatorSettings.Publishing;
import io.bloomoperator.settings.OperatorSettings.Snapshots;
import io.bloomoperator.settings.OperatorSettings.Sources;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.JdbcSourceSettings;
import io.bloomoperator.source.SecretAccess;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The administrator's limits, as read from the environment, and changed by the builder. */
class OperatorSettingsTest {

  @Test
  void defaultsAreTheDocumentedOnes() {
    OperatorSettings defaults = OperatorSettings.defaults();
    assertThat(defaults.snapshots().maxBytes()).isEqualTo(64L << 20);
    assertThat(defaults.snapshots().maxNamespaceBytes()).isEqualTo(256L << 20);
    assertThat(defaults.publishing().minInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(defaults.publishing().signingKey()).isNull();
    assertThat(defaults.sources().minRefreshInterval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(defaults.sources().maxMalformedKeys()).isZero();
    assertThat(defaults.builds().maxConcurrent()).isEqualTo(2);
    assertThat(defaults.sources().secretAccess()).isEqualTo(SecretAccess.Mode.ANNOTATION);
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
                "namespace",
                "BLOOM_MAX_MALFORMED_KEYS",
                "7"));
    assertThat(s)
        .isEqualTo(
            new OperatorSettings(
                new Snapshots(1000, 1000, 5000),
                new Publishing(
                    Duration.ZERO, null, DeltaPolicy.defaults(), WriteBudget.Limits.defaults()),
                new Sources(
                    7,
                    Duration.ofSeconds(90),
                    SecretAccess.Mode.NAMESPACE,
                    HttpSourceSettings.defaults(),
                    JdbcSourceSettings.defaults()),
                new Builds(4, BuildLimits.defaults())));
  }

  /**
   * Issue 19: 100M keys at 1 % in an object store with the installs' defaults (1 GiB limit, heap 75
   * % of it, 2 builds), while the ConfigMap bound stays 64 MiB.
   */
  @Test
  void storeBackedSnapshotsAreBoundByTheHeapNotByEtcd() {
    long heap = 768L << 20;
    long bound = Snapshots.defaultMaxStoreBytes(heap, 2, 64L << 20);
    long bitsFor100M = (long) Math.ceil(-100_000_000L * Math.log(0.01) / Math.pow(Math.log(2), 2));
    assertThat(bound).isEqualTo(128L << 20).isGreaterThan(bitsFor100M / 8);
    // Every slot's three arrays fit in the heap; more slots, a smaller bound.
    assertThat(Snapshots.defaultMaxStoreBytes(heap, 4, 64L << 20) * 3 * 4)
        .isLessThanOrEqualTo(heap);
    // Never below the ConfigMap bound: a store does not make a filter smaller than etcd takes.
    assertThat(Snapshots.defaultMaxStoreBytes(256L << 20, 2, 64L << 20)).isEqualTo(64L << 20);

    OperatorSettings defaults = OperatorSettings.defaults();
    assertThat(defaults.snapshots().maxBytes()).isEqualTo(64L << 20);
    assertThat(defaults.snapshots().maxStoreBytes())
        .isEqualTo(Snapshots.defaultMaxStoreBytes(Runtime.getRuntime().maxMemory(), 2, 64L << 20));
    assertThat(
            OperatorSettings.fromEnvironment(Map.of("BLOOM_MAX_STORE_SNAPSHOT_BYTES", "12345"))
                .snapshots()
                .maxStoreBytes())
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
    assertThat(s.publishing().writes()).isEqualTo(new WriteBudget.Limits(3_000_000, 2_000_000, 16));
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
            () -> OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_REFRESH_INTERVAL", "-1s")))
        .hasMessageContaining("BLOOM_MIN_REFRESH_INTERVAL");
    assertThatThrownBy(
            () -> OperatorSettings.fromEnvironment(Map.of("BLOOM_SECRET_ACCESS", "trust-me")))
        .hasMessageContaining("BLOOM_SECRET_ACCESS");
    assertThatThrownBy(
            () -> OperatorSettings.fromEnvironment(Map.of("BLOOM_MAX_MALFORMED_KEYS", "-1")))
        .hasMessageContaining("BLOOM_MAX_MALFORMED_KEYS");
  }

  @Test
  void theBuilderChangesOnlyWhatItIsTold() {
    OperatorSettings defaults = OperatorSettings.defaults();
    assertThat(defaults.toBuilder().build()).isEqualTo(defaults);
    assertThat(OperatorSettings.builder().build()).isEqualTo(defaults);

    SigningKeySecret key = new SigningKeySecret("bloom-system", "signing-key");
    HttpSourceSettings http =
        new HttpSourceSettings(
            HttpSourceSettings.defaults().egress(), 10, 100, Duration.ofSeconds(1));
    OperatorSettings changed =
        defaults.toBuilder()
            .maxSnapshotBytes(1 << 20)
            .maxStoreSnapshotBytes(2 << 20)
            .maxNamespaceBytes(3 << 20)
            .minPublishInterval(Duration.ZERO)
            .signingKey(key)
            .deltas(new DeltaPolicy(3, 10, 50))
            .writes(new WriteBudget.Limits(5, 6, 7))
            .maxMalformedKeys(9)
            .minRefreshInterval(Duration.ofMinutes(1))
            .secretAccess(SecretAccess.Mode.NAMESPACE)
            .http(http)
            .jdbc(JdbcSourceSettings.defaults())
            .maxConcurrentBuilds(3)
            .buildLimits(new BuildLimits(1, Duration.ofSeconds(5), Duration.ofMinutes(2)))
            .build();
    assertThat(changed)
        .isEqualTo(
            new OperatorSettings(
                new Snapshots(1 << 20, 2 << 20, 3 << 20),
                new Publishing(
                    Duration.ZERO,
                    key,
                    new DeltaPolicy(3, 10, 50),
                    new WriteBudget.Limits(5, 6, 7)),
                new Sources(
                    9,
                    Duration.ofMinutes(1),
                    SecretAccess.Mode.NAMESPACE,
                    http,
                    JdbcSourceSettings.defaults()),
                new Builds(3, new BuildLimits(1, Duration.ofSeconds(5), Duration.ofMinutes(2)))));
    assertThat(defaults.toBuilder().signingKey(key).build())
        .isEqualTo(
            new OperatorSettings(
                defaults.snapshots(),
                new Publishing(
                    defaults.publishing().minInterval(),
                    key,
                    defaults.publishing().deltas(),
                    defaults.publishing().writes()),
                defaults.sources(),
                defaults.builds()));
  }

  @Test
  void eachGroupRefusesItsOwnBadValues() {
    assertThatThrownBy(() -> OperatorSettings.builder().maxSnapshotBytes(0).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("snapshot");
    assertThatThrownBy(() -> OperatorSettings.builder().maxNamespaceBytes(-1).build())
        .hasMessageContaining("namespace");
    assertThatThrownBy(
            () -> OperatorSettings.builder().minPublishInterval(Duration.ofSeconds(-1)).build())
        .hasMessageContaining("publish interval");
    assertThatThrownBy(() -> OperatorSettings.builder().writes(null).build())
        .hasMessageContaining("write limits");
    assertThatThrownBy(() -> OperatorSettings.builder().maxMalformedKeys(-1).build())
        .hasMessageContaining("source limits");
    assertThatThrownBy(() -> OperatorSettings.builder().http(null).build())
        .hasMessageContaining("http");
    assertThatThrownBy(() -> OperatorSettings.builder().maxConcurrentBuilds(0).build())
        .hasMessageContaining("concurrent builds");
    assertThatThrownBy(() -> OperatorSettings.builder().buildLimits(null).build())
        .hasMessageContaining("build limits");
    assertThatThrownBy(() -> new OperatorSettings(null, null, null, null))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
