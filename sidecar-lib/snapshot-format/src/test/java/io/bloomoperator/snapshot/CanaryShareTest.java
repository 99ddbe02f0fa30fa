package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The canary share rule every reader and the operator share, and its place in the ConfigMap. */
class CanaryShareTest {

  @Test
  void bucketIsTheDocumentedDigestOfThePodName() {
    // Fixtures from docs/reader-protocol.md, computed outside Java (SHA-256, first 4 bytes, % 100),
    // so a reader in another language can check itself against them.
    assertThat(CanaryShare.bucket("app-0")).isEqualTo(5);
    assertThat(CanaryShare.bucket("app-1")).isEqualTo(65);
    assertThat(CanaryShare.bucket("reader-7")).isEqualTo(43);
  }

  @Test
  void tenPercentOfFiftyReadersAreTheSameFiveEveryTime() {
    List<String> chosen = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      if (CanaryShare.contains("app-" + i, 10)) {
        chosen.add("app-" + i);
      }
    }
    assertThat(chosen).containsExactly("app-0", "app-8", "app-23", "app-29", "app-38");
  }

  @Test
  void shareIsProportionalAndGrowsMonotonically() {
    long inTen =
        IntStream.range(0, 10_000).filter(i -> CanaryShare.contains("pod-" + i, 10)).count();
    assertThat(inTen).isBetween(900L, 1100L);
    for (int i = 0; i < 1000; i++) {
      String pod = "pod-" + i;
      for (int percent = 1; percent < 100; percent++) {
        if (CanaryShare.contains(pod, percent)) {
          assertThat(CanaryShare.contains(pod, percent + 1)).isTrue();
        }
      }
      assertThat(CanaryShare.contains(pod, 100)).isTrue();
    }
  }

  @Test
  void aReaderWithoutPodNameOrAShareOutOfRangeStaysStable() {
    assertThat(CanaryShare.contains(null, 100)).isFalse();
    assertThat(CanaryShare.contains("", 100)).isFalse();
    assertThat(CanaryShare.contains("app-0", 0)).isFalse();
    assertThat(CanaryShare.contains("app-0", 101)).isFalse();
    assertThat(CanaryShare.contains("app-0", -5)).isFalse();
    assertThatThrownBy(() -> CanaryShare.bucket(null)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void canaryRidesBesideTheStableManifestAndLeavesItAlone() throws Exception {
    Manifest stable = manifest(3);
    Manifest canary = manifest(4);
    ConfigMap plain = SnapshotConfigMaps.manifest("shop", stable, null, null);
    assertThat(SnapshotConfigMaps.readCanary(plain)).isNull();

    ConfigMap both = SnapshotConfigMaps.withCanary(plain, canary.toJson(), "sig", 10);

    assertThat(SnapshotConfigMaps.readManifest(both).manifest()).isEqualTo(stable);
    AnnouncedCanary announced = SnapshotConfigMaps.readCanary(both);
    assertThat(announced.percent()).isEqualTo(10);
    assertThat(announced.announced().manifest()).isEqualTo(canary);
    assertThat(announced.announced().json()).isEqualTo(canary.toJson());
    assertThat(announced.announced().signature()).isEqualTo("sig");
    assertThat(announced.includes("app-8")).isTrue();
    assertThat(announced.includes("app-1")).isFalse();

    ConfigMap cleared = SnapshotConfigMaps.withCanary(both, null, null, 0);
    assertThat(cleared.getData()).isEqualTo(plain.getData());
    assertThatThrownBy(() -> SnapshotConfigMaps.withCanary(plain, canary.toJson(), null, 0))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aMalformedShareIsRefusedWithoutEchoingIt() throws Exception {
    ConfigMap both =
        SnapshotConfigMaps.withCanary(
            SnapshotConfigMaps.manifest("shop", manifest(3), null, null),
            manifest(4).toJson(),
            null,
            10);
    for (String bad : List.of("", "0", "101", "1e2", "-1", " 10", "0010", "<script>")) {
      both.getData().put(SnapshotNames.CANARY_PERCENT_DATA_KEY, bad);
      assertThatThrownBy(() -> SnapshotConfigMaps.readCanary(both))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageNotContaining("<script>");
    }
    both.getData().remove(SnapshotNames.CANARY_PERCENT_DATA_KEY);
    assertThatThrownBy(() -> SnapshotConfigMaps.readCanary(both))
        .isInstanceOf(SnapshotVerificationException.class);
  }

  @Test
  void sharesAtBothEndsAreWrittenAndReadAndOneBeyondIsRefused() throws Exception {
    ConfigMap plain = SnapshotConfigMaps.manifest("shop", manifest(3), null, null);
    String canary = manifest(4).toJson();
    for (int percent : new int[] {1, 9, 10, 99, 100}) {
      ConfigMap both = SnapshotConfigMaps.withCanary(plain, canary, null, percent);
      assertThat(SnapshotConfigMaps.readCanary(both).percent()).isEqualTo(percent);
    }
    for (int percent : new int[] {0, 101}) {
      assertThatThrownBy(() -> SnapshotConfigMaps.withCanary(plain, canary, null, percent))
          .isInstanceOf(IllegalArgumentException.class);
    }
    // The characters just outside '0'..'9', and a fourth digit.
    ConfigMap both = SnapshotConfigMaps.withCanary(plain, canary, null, 10);
    for (String bad : List.of("/", ":", "1/", "1:", "100 ", "1000")) {
      both.getData().put(SnapshotNames.CANARY_PERCENT_DATA_KEY, bad);
      assertThatThrownBy(() -> SnapshotConfigMaps.readCanary(both))
          .as(bad)
          .isInstanceOf(SnapshotVerificationException.class);
    }
  }

  private static Manifest manifest(long version) throws IOException {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 64 * 20, 3);
    builder.putLong(version);
    BloomFilterBits bits = builder.build();
    return Manifest.of(
        "ids",
        version,
        bits,
        1,
        SnapshotEncoder.encode(bits, 64, (index, data, length, sha) -> {}),
        Instant.parse("2026-12-01T12:00:00Z"));
  }
}
