package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class SnapshotCodecTest {

  private static final Instant NOW = Instant.parse("2025-06-01T10:15:30.123Z");

  /** A STRING filter with 2000 keys at 1%: a payload of a few KB. */
  private static BloomFilterBits sampleFilter() {
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(2000, 0.01));
    Random random = new Random(5);
    for (int i = 0; i < 2000; i++) {
      bits.putString(GuavaOracle.randomString(random));
    }
    return bits.build();
  }

  /** Encodes into copied chunks and the matching manifest. */
  private record Encoded(Manifest manifest, List<byte[]> chunks) {}

  private static Encoded encode(BloomFilterBits bits, int chunkSize) throws IOException {
    List<byte[]> chunks = new ArrayList<>();
    SnapshotEncoder.Result result =
        SnapshotEncoder.encode(
            bits,
            chunkSize,
            (index, data, length, sha) -> {
              assertThat(index).isEqualTo(chunks.size());
              assertThat(length).isBetween(1, chunkSize);
              assertThat(sha).isEqualTo(Sha256.hex(data, 0, length));
              chunks.add(Arrays.copyOf(data, length));
            });
    return new Encoded(Manifest.of("orders", 3, bits, 2000, result, NOW), chunks);
  }

  static Stream<Integer> chunkSizes() {
    long payload = SnapshotEncoder.payloadSize(sampleFilter());
    int divisor =
        IntStream.rangeClosed(9, (int) payload / 2)
            .filter(d -> payload % d == 0)
            .findFirst()
            .orElseThrow();
    return Stream.of(
        1,
        2,
        5,
        6,
        7,
        8,
        9,
        13,
        1000,
        divisor,
        (int) payload / 2,
        (int) payload - 1,
        (int) payload,
        (int) payload + 1,
        1_000_000);
  }

  @ParameterizedTest(name = "chunkSize {0}")
  @MethodSource("chunkSizes")
  void chunksConcatenateToGuavaPayloadAndDecodeBack(int chunkSize) throws Exception {
    BloomFilterBits bits = sampleFilter();
    Encoded encoded = encode(bits, chunkSize);
    byte[] whole = SnapshotEncoder.toByteArray(bits);

    ByteArrayOutputStream concatenated = new ByteArrayOutputStream();
    for (byte[] chunk : encoded.chunks()) {
      concatenated.write(chunk);
    }
    assertThat(concatenated.toByteArray()).isEqualTo(whole);
    assertThat(encoded.chunks()).hasSize(SnapshotEncoder.chunkCount(bits, chunkSize));
    assertThat(encoded.manifest().totalBytes()).isEqualTo(whole.length);
    assertThat(encoded.manifest().sha256()).isEqualTo(Sha256.hex(whole, 0, whole.length));
    for (int i = 0; i < encoded.chunks().size() - 1; i++) {
      assertThat(encoded.chunks().get(i)).hasSize(chunkSize);
    }

    BloomFilterBits decoded =
        SnapshotDecoder.decode(encoded.manifest(), encoded.chunks().iterator());
    assertThat(decoded).isEqualTo(bits);
    BloomFilterBits viaSource =
        SnapshotDecoder.decode(
            encoded.manifest(),
            (index, ref) -> {
              assertThat(ref.name()).isEqualTo("orders-bloom-v3-" + index);
              return encoded.chunks().get(index);
            });
    assertThat(viaSource).isEqualTo(bits);
  }

  @Test
  void decodedFilterAnswersLikeTheOriginal() throws Exception {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(5000, 0.01));
    for (long i = -2500; i < 2500; i++) {
      builder.putLong(i * 7919);
    }
    BloomFilterBits bits = builder.build();
    Encoded encoded = encode(bits, 1001);
    BloomFilterBits decoded =
        SnapshotDecoder.decode(encoded.manifest(), encoded.chunks().iterator());
    assertThat(decoded.keyType()).isEqualTo(KeyType.LONG);
    for (long i = -2500; i < 2500; i++) {
      assertThat(decoded.mightContainLong(i * 7919)).isTrue();
    }
    long hits =
        IntStream.range(0, 100_000).filter(i -> decoded.mightContainLong(i * 7919L + 1)).count();
    assertThat(hits).isLessThan(2000);
  }

  @Test
  void tamperedChunkByteIsRejectedNamingTheChunk() throws Exception {
    Encoded encoded = encode(sampleFilter(), 500);
    List<byte[]> chunks = encoded.chunks();
    chunks.get(2)[123] ^= 0x10;

    assertThatThrownBy(() -> SnapshotDecoder.decode(encoded.manifest(), chunks.iterator()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("chunk 2 ('orders-bloom-v3-2')")
        .hasMessageContaining("sha256 mismatch")
        .hasMessageContaining(encoded.manifest().chunks().get(2).sha256())
        .satisfies(e -> assertThat(((SnapshotVerificationException) e).chunkIndex()).isEqualTo(2));
  }

  @Test
  void tamperedChunkWithForgedChunkDigestIsCaughtByTotalDigest() throws Exception {
    Encoded encoded = encode(sampleFilter(), 500);
    List<byte[]> chunks = encoded.chunks();
    chunks.get(1)[7] ^= 0x01;
    List<Manifest.ChunkRef> refs = new ArrayList<>(encoded.manifest().chunks());
    refs.set(
        1,
        new Manifest.ChunkRef(
            refs.get(1).name(),
            refs.get(1).bytes(),
            Sha256.hex(chunks.get(1), 0, chunks.get(1).length)));
    Manifest forged = withChunks(encoded.manifest(), refs, encoded.manifest().sha256());

    assertThatThrownBy(() -> SnapshotDecoder.decode(forged, chunks.iterator()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("payload sha256 mismatch");
  }

  @Test
  void wrongChunkSizeIsRejected() throws Exception {
    Encoded encoded = encode(sampleFilter(), 500);
    List<byte[]> chunks = new ArrayList<>(encoded.chunks());
    chunks.set(4, Arrays.copyOf(chunks.get(4), chunks.get(4).length + 1));
    assertThatThrownBy(() -> SnapshotDecoder.decode(encoded.manifest(), chunks.iterator()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("chunk 4")
        .hasMessageContaining(
            "size mismatch: manifest says "
                + encoded.chunks().get(4).length
                + " bytes, got "
                + (encoded.chunks().get(4).length + 1));
  }

  @Test
  void missingAndExtraChunksAreRejected() throws Exception {
    Encoded encoded = encode(sampleFilter(), 500);
    List<byte[]> fewer = encoded.chunks().subList(0, 3);
    assertThatThrownBy(() -> SnapshotDecoder.decode(encoded.manifest(), fewer.iterator()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("chunk 3 ('orders-bloom-v3-3') is missing");
    assertThatThrownBy(() -> SnapshotDecoder.decode(encoded.manifest(), (index, ref) -> null))
        .hasMessageContaining("chunk 0 ('orders-bloom-v3-0') is missing");

    List<byte[]> more = new ArrayList<>(encoded.chunks());
    more.add(new byte[] {1});
    assertThatThrownBy(() -> SnapshotDecoder.decode(encoded.manifest(), more.iterator()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("more chunks supplied than the " + encoded.chunks().size());
  }

  @Test
  void headerKDisagreeingWithManifestIsRejected() throws Exception {
    Encoded encoded = encode(sampleFilter(), 4); // the header itself spans two chunks
    Manifest m = encoded.manifest();
    Manifest wrongK =
        new Manifest(
            m.format(),
            m.version(),
            m.filterName(),
            m.keyType(),
            m.numBits(),
            m.numHashFunctions() + 1,
            m.keyCount(),
            m.expectedFpp(),
            m.totalBytes(),
            m.sha256(),
            m.createdAt(),
            m.chunks());
    assertThatThrownBy(() -> SnapshotDecoder.decode(wrongK, encoded.chunks().iterator()))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("chunk 1")
        .hasMessageContaining(
            "header numHashFunctions is "
                + m.numHashFunctions()
                + " but the manifest says "
                + (m.numHashFunctions() + 1));
  }

  @Test
  void headerSizeOrStrategyDisagreeingWithManifestIsRejected() throws Exception {
    BloomFilterBits bits = sampleFilter();
    byte[] payload = SnapshotEncoder.toByteArray(bits);
    Encoded encoded = encode(bits, payload.length);

    byte[] wrongSize = payload.clone();
    ByteBuffer.wrap(wrongSize).putInt(2, bits.numLongs() - 1);
    assertThatThrownBy(() -> decodeSingleChunk(encoded.manifest(), wrongSize))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("header numLongs is " + (bits.numLongs() - 1))
        .hasMessageContaining("but the manifest says " + bits.numLongs());

    byte[] wrongStrategy = payload.clone();
    wrongStrategy[0] = 0;
    assertThatThrownBy(() -> decodeSingleChunk(encoded.manifest(), wrongStrategy))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("header strategy ordinal is 0");
  }

  @Test
  void invalidManifestIsRejectedBeforeAnyChunkIsLoaded() throws Exception {
    Encoded encoded = encode(sampleFilter(), 500);
    Manifest m = encoded.manifest();
    Manifest wrongBits =
        new Manifest(
            m.format(),
            m.version(),
            m.filterName(),
            m.keyType(),
            m.numBits() + 64,
            m.numHashFunctions(),
            m.keyCount(),
            m.expectedFpp(),
            m.totalBytes(),
            m.sha256(),
            m.createdAt(),
            m.chunks());
    assertThatThrownBy(
            () ->
                SnapshotDecoder.decode(
                    wrongBits,
                    (index, ref) -> {
                      throw new AssertionError("must not load chunks of an invalid manifest");
                    }))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("totalBytes is " + m.totalBytes());
  }

  @Test
  void decodePayloadParsesGuavaBytesAndRejectsTruncation() throws Exception {
    BloomFilterBits bits = sampleFilter();
    byte[] payload = SnapshotEncoder.toByteArray(bits);
    assertThat(SnapshotDecoder.decodePayload(payload, KeyType.STRING)).isEqualTo(bits);
    assertThatThrownBy(
            () ->
                SnapshotDecoder.decodePayload(
                    Arrays.copyOf(payload, payload.length - 1), KeyType.STRING))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("header says " + bits.numLongs() + " words");
  }

  @Test
  void largeFilterWithDefaultChunkSize() throws Exception {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(2_000_000, 0.01));
    Random random = new Random(9);
    for (int i = 0; i < 2_000_000; i++) {
      builder.putLong(random.nextLong());
    }
    BloomFilterBits bits = builder.build();
    Encoded encoded = encode(bits, 1_000_000);
    assertThat(encoded.chunks()).hasSize(3); // 2.4 MB
    assertThat(SnapshotDecoder.decode(encoded.manifest(), encoded.chunks().iterator()))
        .isEqualTo(bits);
  }

  @Test
  void chunkSizeMustBePositive() {
    assertThatThrownBy(() -> SnapshotEncoder.encode(sampleFilter(), 0, (i, d, l, s) -> {}))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private static BloomFilterBits decodeSingleChunk(Manifest template, byte[] payload)
      throws SnapshotVerificationException {
    String sha = HexFormat.of().formatHex(Sha256.newDigest().digest(payload));
    Manifest m =
        withChunks(
            template,
            List.of(new Manifest.ChunkRef(template.chunks().get(0).name(), payload.length, sha)),
            sha);
    return SnapshotDecoder.decode(m, List.of(payload).iterator());
  }

  private static Manifest withChunks(Manifest m, List<Manifest.ChunkRef> chunks, String sha) {
    return ManifestCopy.of(m).chunks(chunks).sha256(sha).build();
  }
}
