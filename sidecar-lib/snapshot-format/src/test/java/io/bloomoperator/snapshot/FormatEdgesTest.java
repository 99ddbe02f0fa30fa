package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Edges of the format an implementation must get exactly right: the digest of any size of payload,
 * the bytes a signature covers, which keys sign, and the smallest limits.
 */
class FormatEdgesTest {

  @Test
  void theStreamedDigestIsTheDigestOfThePayloadAtEverySize() throws Exception {
    // 64 KiB digest buffer: sizes around one and two buffers' worth of words.
    for (int words : new int[] {1, 2, 8190, 8191, 8192, 8193, 16383, 16384, 20_000}) {
      BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 64L * words, 3);
      for (long key = 0; key < words; key++) {
        builder.putLong(key * 7919);
      }
      BloomFilterBits bits = builder.build();
      byte[] payload = SnapshotEncoder.toByteArray(bits);
      String expected =
          HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(payload));
      assertThat(SnapshotEncoder.sha256(bits)).as("%d words", words).isEqualTo(expected);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      SnapshotEncoder.Result written = SnapshotEncoder.writeTo(bits, out);
      assertThat(out.toByteArray()).isEqualTo(payload);
      assertThat(written.totalBytes()).isEqualTo(payload.length);
      assertThat(written.sha256()).isEqualTo(expected);
    }
  }

  @Test
  void everySplitOfTheChunksDecodesToTheSameBits() throws Exception {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 64L * 300, 5);
    for (long key = 0; key < 2_000; key++) {
      builder.putLong(key);
    }
    BloomFilterBits bits = builder.build();
    for (int chunkSize : new int[] {1, 3, 7, 8, 13, 997}) {
      List<byte[]> chunks = new java.util.ArrayList<>();
      SnapshotEncoder.Result encoded =
          SnapshotEncoder.encode(
              bits, chunkSize, (i, d, l, s) -> chunks.add(java.util.Arrays.copyOf(d, l)));
      Manifest manifest = Manifest.of("ids", 1, bits, 2_000, encoded, java.time.Instant.now());
      assertThat(SnapshotDecoder.decode(manifest, chunks.iterator()))
          .as("chunks of %d bytes", chunkSize)
          .isEqualTo(bits);
    }
  }

  @Test
  void aWholePayloadIsReadToItsAnnouncedSizeAndNoFurther() throws Exception {
    BloomFilterBits bits = BloomFilterBits.builder(KeyType.STRING, 64, 1).build();
    byte[] payload = SnapshotEncoder.toByteArray(bits);
    assertThat(payload).hasSize(SnapshotEncoder.HEADER_BYTES + Long.BYTES);
    assertThat(SnapshotDecoder.decodePayload(payload, KeyType.STRING)).isEqualTo(bits);
    SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 100, (i, d, l, s) -> {});
    Manifest manifest = Manifest.of("ids", 1, bits, 0, encoded, java.time.Instant.now());
    assertThat(SnapshotDecoder.decodeWhole(manifest, new java.io.ByteArrayInputStream(payload)))
        .isEqualTo(bits);
    byte[] longer = java.util.Arrays.copyOf(payload, payload.length + 1);
    assertThatThrownBy(
            () -> SnapshotDecoder.decodeWhole(manifest, new java.io.ByteArrayInputStream(longer)))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("longer than");
  }

  @Test
  void aSignatureCoversContextNamespaceAndTheExactText() {
    assertThat(
            new String(ManifestSignature.signedBytes("shop", "{\"a\":1}"), StandardCharsets.UTF_8))
        .isEqualTo("bloomoperator.io/manifest-signature/v1\nshop\n{\"a\":1}");
    assertThatThrownBy(() -> ManifestSignature.signedBytes("", "{}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ManifestSignature.signedBytes("a\nb", "{}"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ManifestSignature.signedBytes(null, "{}"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void onlyEd25519KeysSignOrAreTrusted() throws Exception {
    KeyPair ed = Ed25519Keys.generate();
    KeyPair rsa = KeyPairGenerator.getInstance("RSA").generateKeyPair();
    KeyPair ed448 = KeyPairGenerator.getInstance("Ed448").generateKeyPair();
    KeyPair x25519 = KeyPairGenerator.getInstance("X25519").generateKeyPair();
    for (KeyPair wrong : List.of(rsa, ed448, x25519)) {
      String what = wrong.getPublic().getAlgorithm();
      assertThatThrownBy(() -> Ed25519Keys.keyId(wrong.getPublic()))
          .as(what)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> Ed25519Keys.toPem(wrong.getPublic()))
          .as(what)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> Ed25519Keys.publicKeyOf(wrong.getPrivate()))
          .as(what)
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> new ManifestSigner(wrong.getPrivate()))
          .as(what)
          .isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(Ed25519Keys.publicKeyOf(ed.getPrivate())).isEqualTo(ed.getPublic());
    assertThat(Ed25519Keys.readPublicKey(Ed25519Keys.toPem(ed.getPublic())))
        .isEqualTo(ed.getPublic());
    assertThat(TrustedKeys.of(List.of(ed.getPublic())).keyIds())
        .containsExactly(Ed25519Keys.keyId(ed.getPublic()));
    assertThat(new ManifestSigner(ed.getPrivate()).keyId())
        .isEqualTo(Ed25519Keys.keyId(ed.getPublic()));
  }

  @Test
  void theSmallestLimitsAndFiltersAreOne() {
    assertThatCode(() -> new SnapshotLimits(1, 1)).doesNotThrowAnyException();
    assertThatThrownBy(() -> new SnapshotLimits(0, 1)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new SnapshotLimits(1, 0)).isInstanceOf(IllegalArgumentException.class);
    assertThat(BloomFilterBits.builder(KeyType.STRING, 1, 1).build().numLongs()).isEqualTo(1);
    assertThatThrownBy(() -> BloomFilterBits.builder(KeyType.STRING, 0, 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () -> BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.MAX_BITS + 1, 1))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
