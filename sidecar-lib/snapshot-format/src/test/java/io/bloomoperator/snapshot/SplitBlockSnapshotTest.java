package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.Map;
import java.util.SplittableRandom;
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter;
import org.apache.parquet.io.api.Binary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The split-block layout through the snapshot format: the payload is Parquet's bitset byte for
 * byte, it travels in chunks and deltas like the Guava layout, its manifests carry their own format
 * ids, and nothing crosses layouts.
 */
class SplitBlockSnapshotTest {

  private static final String FILTER = InMemoryChunks.FILTER;
  private static final int CHUNK = InMemoryChunks.CHUNK;

  private final InMemoryChunks chunks = new InMemoryChunks();
  private final Map<String, byte[]> store = chunks.store;
  private final SnapshotDecoder.ChunkSource source = chunks.source;

  @Test
  void payloadIsParquetsBitsetForStringKeysAndDecodesBack() throws Exception {
    // 4096 blocks: a power of two, so Parquet's own writer sizes its filter the same.
    BloomFilterBits.Builder ours = BloomFilterBits.splitBlockBuilder(KeyType.STRING, 4096);
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(4096 * 32, 4096 * 32);
    for (int i = 0; i < 50_000; i++) {
      String key = "sku-" + i + (i % 7 == 0 ? "-ü" : "");
      assertThat(ours.putString(key)).isNotNull();
      parquet.insertHash(parquet.hash(Binary.fromString(key)));
    }
    BloomFilterBits bits = ours.build();
    assertThat(bits.format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
    assertThat(bits.numHashFunctions()).isEqualTo(8);
    assertThat(bits.numBits()).isEqualTo(4096L * 256);

    byte[] payload = SnapshotEncoder.toByteArray(bits);
    assertThat(payload).isEqualTo(bitset(parquet));
    assertThat(SnapshotEncoder.payloadSize(bits)).isEqualTo(payload.length);

    Manifest manifest = chunks.publishFull(bits, 50_000, 1);
    assertThat(manifest.format()).isEqualTo(Manifest.FORMAT_SPLIT_BLOCK);
    assertThat(manifest.filterFormat()).isEqualTo(FilterFormat.SPLIT_BLOCK);
    assertThat(manifest.totalBytes()).isEqualTo(payload.length);
    assertThat(manifest.expectedFpp()).isBetween(1e-4, 0.05);
    assertThat(manifest.sha256()).isEqualTo(SnapshotEncoder.sha256(bits));
    Manifest parsed = Manifest.fromJson(manifest.toJson());
    assertThat(parsed).isEqualTo(manifest);

    BloomFilterBits decoded = SnapshotDecoder.decode(parsed, source);
    assertThat(decoded).isEqualTo(bits);
    assertThat(SnapshotDecoder.decodeWhole(parsed, new ByteArrayInputStream(payload)))
        .isEqualTo(bits);
    assertThat(SnapshotDecoder.decodePayload(payload, KeyType.STRING, FilterFormat.SPLIT_BLOCK))
        .isEqualTo(bits);
    for (int i = 0; i < 50_000; i++) {
      assertThat(decoded.mightContainString("sku-" + i + (i % 7 == 0 ? "-ü" : ""))).isTrue();
    }
    // Absent keys: the same answer as Parquet's reader of the same bytes.
    BlockSplitBloomFilter parquetReader = new BlockSplitBloomFilter(payload);
    for (int i = 0; i < 20_000; i++) {
      String absent = "absent-" + i;
      assertThat(decoded.mightContainString(absent))
          .isEqualTo(parquetReader.findHash(parquetReader.hash(Binary.fromString(absent))));
    }
  }

  @Test
  void payloadIsParquetsBitsetForLongKeysWithAnyBlockCount() throws Exception {
    // 1000 blocks: not a power of two; Parquet's readers take it.
    BloomFilterBits.Builder ours = BloomFilterBits.splitBlockBuilder(KeyType.LONG, 1000);
    SplittableRandom random = new SplittableRandom(3);
    long[] keys = new long[20_000];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = random.nextLong();
      ours.putLong(keys[i]);
    }
    BloomFilterBits bits = ours.build();
    byte[] payload = SnapshotEncoder.toByteArray(bits);
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(payload);
    for (long key : keys) {
      assertThat(parquet.findHash(parquet.hash(key))).isTrue();
    }
    assertThat(bitset(parquet)).isEqualTo(payload);
    Manifest manifest = chunks.publishFull(bits, keys.length, 4);
    assertThat(SnapshotDecoder.decode(Manifest.fromJson(manifest.toJson()), source))
        .isEqualTo(bits);
  }

  @Test
  void deltaChainInTheSplitBlockLayout() throws Exception {
    SplitBlockSizing sizing = SplitBlockSizing.forKeys(30_000, 0.01);
    BloomFilterBits v1 = longs(sizing, 0, 20_000);
    Manifest manifest = chunks.publishFull(v1, 20_000, 1);
    BloomFilterBits held = v1;
    Manifest heldManifest = manifest;
    for (long version = 2; version <= 4; version++) {
      BloomFilterBits full = longs(sizing, version * 300, 20_000 + version * 300);
      manifest = chunks.publishDelta(manifest, full, 20_000, version);
      assertThat(manifest.format()).isEqualTo(Manifest.FORMAT_SPLIT_BLOCK_CHAIN);
      assertThat(manifest.totalBytes()).isEqualTo(sizing.numBytes());
      Manifest parsed = Manifest.fromJson(manifest.toJson());
      assertThat(SnapshotDecoder.decode(parsed, source)).isEqualTo(full);
      BloomFilterBits warm =
          SnapshotDecoder.update(
              parsed, held, heldManifest.version(), heldManifest.sha256(), source);
      assertThat(warm).isEqualTo(full);
      assertThat(SnapshotEncoder.toByteArray(warm)).isEqualTo(SnapshotEncoder.toByteArray(full));
      held = warm;
      heldManifest = parsed;
    }
    assertThat(manifest.deltas()).hasSize(3);
    assertThat(manifest.deltas().get(2).bytes()).isLessThan(manifest.totalBytes() / 5);
    assertThat(SnapshotDecoder.decodeVersion(manifest, 2, source))
        .isEqualTo(longs(sizing, 600, 20_600));
  }

  @Test
  void nothingCrossesLayouts() throws Exception {
    // The same number of bits and k in both layouts: only the layout differs.
    BloomFilterBits.Builder guavaBuilder = BloomFilterBits.builder(KeyType.LONG, 64 * 256, 8);
    BloomFilterBits.Builder splitBuilder = BloomFilterBits.splitBlockBuilder(KeyType.LONG, 64);
    for (long i = 0; i < 1000; i++) {
      guavaBuilder.putLong(i);
      splitBuilder.putLong(i);
    }
    BloomFilterBits guava = guavaBuilder.build();
    BloomFilterBits split = splitBuilder.build();
    assertThat(split.numBits()).isEqualTo(guava.numBits());
    assertThat(split).isNotEqualTo(guava);

    Manifest guavaManifest = chunks.publishFull(guava, 1000, 1);
    assertThat(guavaManifest.format()).isEqualTo(Manifest.FORMAT);
    assertThat(guavaManifest.describes(split)).isFalse();
    assertThatThrownBy(() -> SnapshotDelta.encode(guava, split, CHUNK, (i, d, l, s) -> {}))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                Manifest.withDelta(
                    guavaManifest,
                    2,
                    split,
                    1000,
                    SnapshotEncoder.sha256(split),
                    new SnapshotDelta.Result(14, 0, java.util.List.of()),
                    Instant.now()))
        .isInstanceOf(IllegalArgumentException.class);

    // A reader holding the Guava version loads the split-block one whole, not as a delta.
    Manifest splitManifest = chunks.publishFull(split, 1000, 2);
    BloomFilterBits loaded =
        SnapshotDecoder.update(splitManifest, guava, 1, guavaManifest.sha256(), source);
    assertThat(loaded).isEqualTo(split);
    assertThat(loaded.format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
  }

  @Test
  void manifestsOfTheSplitBlockLayoutAreValidatedForIt() throws Exception {
    BloomFilterBits bits = longs(SplitBlockSizing.forKeys(1000, 0.01), 0, 1000);
    Manifest manifest = chunks.publishFull(bits, 1000, 1);
    String json = manifest.toJson();
    assertThatThrownBy(
            () ->
                Manifest.fromJson(
                    json.replace("\"numHashFunctions\" : 8", "\"numHashFunctions\" : 7")))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("split-block");
    // A Guava-layout id on split-block bytes: the size no longer adds up (no 6-byte header).
    assertThatThrownBy(
            () -> Manifest.fromJson(json.replace(Manifest.FORMAT_SPLIT_BLOCK, Manifest.FORMAT)))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("totalBytes");
  }

  @ParameterizedTest
  @ValueSource(strings = {"parquet-splitblock-v2", "xor-filter-v1", "guava-bloomfilter-v2"})
  void unknownFormatIdsAreRefused(String format) throws Exception {
    BloomFilterBits bits = longs(SplitBlockSizing.forKeys(1000, 0.01), 0, 1000);
    String json = chunks.publishFull(bits, 1000, 1).toJson();
    assertThatThrownBy(() -> Manifest.fromJson(json.replace(Manifest.FORMAT_SPLIT_BLOCK, format)))
        .isInstanceOf(SnapshotVerificationException.class)
        .hasMessageContaining("format is '" + format + "'");
  }

  @Test
  void batchLookupsAnswerAsSingleOnesInBothLayouts() {
    BloomFilterBits.Builder[] builders = {
      BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(2000, 0.01)),
      BloomFilterBits.builder(KeyType.STRING, 4096, 1), // k = 1: one probe only
      BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(2000, 0.01)),
    };
    BloomFilterBits.Builder[] longBuilders = {
      BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(2000, 0.01)),
      BloomFilterBits.builder(KeyType.LONG, 4096, 1),
      BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(2000, 0.01)),
    };
    String[] strings = new String[4003];
    long[] longs = new long[4003];
    for (int i = 0; i < strings.length; i++) {
      strings[i] = "k" + i;
      longs[i] = i * 31L;
    }
    for (int b = 0; b < builders.length; b++) {
      for (int i = 0; i < strings.length; i += 2) {
        builders[b].putString(strings[i]);
        longBuilders[b].putLong(longs[i]);
      }
      BloomFilterBits s = builders[b].build();
      BloomFilterBits l = longBuilders[b].build();
      boolean[] stringResults = new boolean[4001];
      boolean[] longResults = new boolean[4001];
      s.mightContainStrings(strings, 1, 4001, stringResults);
      l.mightContainLongs(longs, 1, 4001, longResults);
      for (int i = 0; i < 4001; i++) {
        assertThat(stringResults[i])
            .as("%s key %d", s, i)
            .isEqualTo(s.mightContainString(strings[i + 1]));
        assertThat(longResults[i])
            .as("%s key %d", l, i)
            .isEqualTo(l.mightContainLong(longs[i + 1]));
      }
      assertThatThrownBy(() -> s.mightContainLongs(longs, 0, 4, new boolean[4]))
          .isInstanceOf(IllegalStateException.class);
      assertThatThrownBy(() -> l.mightContainLongs(longs, 4000, 4, new boolean[4]))
          .isInstanceOf(IndexOutOfBoundsException.class);
    }
  }

  private static BloomFilterBits longs(SplitBlockSizing sizing, long from, long to) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, sizing);
    for (long i = from; i < to; i++) {
      builder.putLong(i);
    }
    return builder.build();
  }

  private static byte[] bitset(BlockSplitBloomFilter parquet) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    parquet.writeTo(out);
    return out.toByteArray();
  }
}
