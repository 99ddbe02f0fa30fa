package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.security.KeyPair;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SnapshotConfigMapsTest {

  private static final Instant AT = Instant.parse("2026-11-29T12:00:00Z");

  @Test
  void chunkRoundTripsOnlyTheFirstLengthBytes() throws IOException {
    byte[] buffer = {1, 2, 3, 4, 5, 6, 7};

    ConfigMap chunk = SnapshotConfigMaps.chunk("shop", "ids", 4, 2, buffer, 5);

    assertThat(chunk.getMetadata().getName()).isEqualTo("ids-bloom-v4-2");
    assertThat(chunk.getMetadata().getNamespace()).isEqualTo("shop");
    assertThat(chunk.getMetadata().getLabels()).isEqualTo(SnapshotNames.chunkLabels("ids", 4));
    assertThat(chunk.getImmutable()).isTrue();
    assertThat(chunk.getData()).isNullOrEmpty();
    assertThat(chunk.getBinaryData()).containsOnlyKeys("chunk");
    assertThat(SnapshotConfigMaps.chunkBytes(chunk, 5, "c")).containsExactly(1, 2, 3, 4, 5);
  }

  @Test
  void chunkLongerThanAnnouncedIsRefusedBeforeDecoding() {
    ConfigMap chunk = SnapshotConfigMaps.chunk("shop", "ids", 1, 0, new byte[3000], 3000);

    assertThatThrownBy(() -> SnapshotConfigMaps.chunkBytes(chunk, 30, "chunk ConfigMap shop/x"))
        .isInstanceOf(IOException.class)
        .hasMessage(
            "chunk ConfigMap shop/x holds 4000 base64 characters, the manifest announces"
                + " 30 bytes (40 characters)");
  }

  @Test
  void chunkWithoutBinaryDataOrWithInvalidBase64IsRefused() {
    ConfigMap empty = new ConfigMap();

    assertThatThrownBy(() -> SnapshotConfigMaps.chunkBytes(empty, 3, "c"))
        .hasMessage("c has no binaryData key 'chunk'");

    ConfigMap garbled = SnapshotConfigMaps.chunk("shop", "ids", 1, 0, new byte[3], 3);
    garbled.getBinaryData().put("chunk", "!!!!");
    assertThatThrownBy(() -> SnapshotConfigMaps.chunkBytes(garbled, 3, "c"))
        .hasMessage("c is not valid base64");
  }

  @Test
  void manifestRoundTripsWithSignatureAndBookkeeping() throws Exception {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 64 * 20, 3);
    builder.putLong(42);
    BloomFilterBits bits = builder.build();
    Manifest manifest =
        Manifest.of(
            "ids",
            3,
            bits,
            1,
            SnapshotEncoder.encode(bits, 64, (index, data, length, sha) -> {}),
            AT);
    KeyPair key = Ed25519Keys.generate();
    ManifestSigner signer = new ManifestSigner(key.getPrivate());
    Manifest previous =
        Manifest.of(
            "ids",
            2,
            bits,
            1,
            SnapshotEncoder.encode(bits, 100, (index, data, length, sha) -> {}),
            AT);
    Map<String, String> annotations = new HashMap<>();
    SnapshotConfigMaps.putBuildRecord(annotations, "tok", 7, AT);
    SnapshotConfigMaps.putSuperseded(annotations, previous.referencedVersions(), AT.plusSeconds(1));

    ConfigMap configMap = SnapshotConfigMaps.manifest("shop", manifest, signer, annotations);

    assertThat(configMap.getMetadata().getName()).isEqualTo("ids-bloom");
    assertThat(configMap.getMetadata().getLabels()).isEqualTo(SnapshotNames.manifestLabels("ids"));
    assertThat(configMap.getImmutable()).isNull();
    assertThat(configMap.getMetadata().getAnnotations())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "bloomoperator.io/source-token", "tok",
                "bloomoperator.io/spec-generation", "7",
                "bloomoperator.io/built-at", "2026-11-29T12:00:00Z",
                "bloomoperator.io/previous-versions", "2",
                "bloomoperator.io/superseded-at", "2026-11-29T12:00:01Z"));
    AnnouncedManifest stored = SnapshotConfigMaps.readManifest(configMap);
    assertThat(stored.manifest()).isEqualTo(manifest);
    assertThat(stored.json()).isEqualTo(manifest.toJson());
    assertThat(
            TrustedKeys.of(List.of(key.getPublic()))
                .verify("shop", stored.json(), stored.signature()))
        .isEqualTo(signer.keyId());

    SnapshotConfigMaps.removeSuperseded(annotations);
    assertThat(annotations)
        .containsOnlyKeys(
            "bloomoperator.io/source-token",
            "bloomoperator.io/spec-generation",
            "bloomoperator.io/built-at");
    SnapshotConfigMaps.putBuildRecord(annotations, null, 8, AT);
    assertThat(annotations).doesNotContainKey("bloomoperator.io/source-token");
  }

  @Test
  void unsignedManifestHasNoSignatureKeyAndAConfigMapWithoutJsonIsNoManifest() {
    ConfigMap configMap = SnapshotConfigMaps.manifest("shop", "ids", "{}", null, null);

    assertThat(configMap.getData()).containsOnlyKeys("manifest.json");
    assertThat(configMap.getMetadata().getAnnotations()).isNullOrEmpty();
    assertThat(SnapshotConfigMaps.signatureData(configMap)).isNull();

    ConfigMap other = new ConfigMap();
    other.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName("x")
            .withNamespace("shop")
            .build());
    assertThat(SnapshotConfigMaps.manifestJson(other)).isNull();
    assertThatThrownBy(() -> SnapshotConfigMaps.readManifest(other))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessage("ConfigMap shop/x has no data key 'manifest.json'");
  }
}
