package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Identity of an announcement: version and payload digest, whatever else changed. */
class AnnouncedManifestTest {

  @Test
  void theSameSnapshotIsVersionAndDigest() throws Exception {
    BloomFilterBits bits = BloomFilterBits.builder(KeyType.STRING, 64 * 20, 3).build();
    SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 1_000, (i, d, l, s) -> {});
    Manifest v1 = Manifest.of("ids", 1, bits, 0, encoded, Instant.parse("2026-12-01T00:00:00Z"));
    AnnouncedManifest a = new AnnouncedManifest(v1, v1.toJson(), null);
    assertThat(a.version()).isEqualTo(1);
    // Re-stamped and signed: the same snapshot.
    Manifest restamped = v1.withCreatedAt(Instant.parse("2026-12-02T00:00:00Z"));
    assertThat(a.announcesSameAs(new AnnouncedManifest(restamped, restamped.toJson(), "sig")))
        .isTrue();
    Manifest upper = ManifestCopy.of(v1).sha256(v1.sha256().toUpperCase()).build();
    assertThat(a.announcesSameAs(new AnnouncedManifest(upper, "{}", null))).isTrue();
    Manifest v2 = ManifestCopy.of(v1).version(2).build();
    assertThat(a.announcesSameAs(new AnnouncedManifest(v2, "{}", null))).isFalse();
    Manifest recreated = ManifestCopy.of(v1).sha256("ab".repeat(32)).build();
    assertThat(a.announcesSameAs(new AnnouncedManifest(recreated, "{}", null))).isFalse();
    assertThat(a.announcesSameAs(null)).isFalse();
    assertThatThrownBy(() -> new AnnouncedManifest(v1, null, null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> new AnnouncedManifest(null, "{}", null))
        .isInstanceOf(NullPointerException.class);
  }
}
