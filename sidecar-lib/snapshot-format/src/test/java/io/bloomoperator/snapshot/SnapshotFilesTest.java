package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Payload files for memory-mapped readers, without a cluster: a file written chunk by chunk, or
 * built from a copy of the previous version plus a delta, is byte for byte the payload, and its
 * mapping answers every lookup as the heap filter does, in both layouts and for both key types,
 * also across mapping segments; tampered chunks and files are refused.
 */
class SnapshotFilesTest {

  private final InMemoryChunks chunks = new InMemoryChunks();

  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void mappedFileAnswersAsTheHeapFilterForBothKeyTypes(FilterFormat format) throws Exception {
    for (KeyType keyType : KeyType.values()) {
      Random random = new Random(7);
      List<Object> keys = keys(keyType, random, 20_000);
      BloomFilterBits heap = build(format, keyType, keys, 20_000);
      Manifest manifest = chunks.publishFull(heap, keys.size(), 1);
      Path file = dir.resolve(format + "-" + keyType + ".payload");
      try (FileChannel out = open(file)) {
        SnapshotFiles.writeBase(manifest, chunks.source, out);
        assertThat(Files.readAllBytes(file)).isEqualTo(SnapshotEncoder.toByteArray(heap));
        MappedBloomFilterBits written = SnapshotFiles.mapWritten(manifest, out);
        // 64-byte segments: a block or word lookup crosses segment boundaries all the time.
        MappedBloomFilterBits small =
            SnapshotFiles.mapVerified(manifest, out, manifest.sha256(), 64);
        List<Object> probes = new ArrayList<>(keys);
        probes.addAll(keys(keyType, new Random(99), 50_000));
        int maybe = assertAgree(heap, written, small, probes);
        // Present keys all answer true, and many absent keys answer false.
        assertThat(maybe).isGreaterThanOrEqualTo(keys.size()).isLessThan(probes.size() / 2);
        assertBatchesAgree(heap, written, probes);
        if (keyType == KeyType.STRING) {
          // Keys given as bytes, buffers and char sequences, across 64-byte segments too.
          List<String> strings = ByteKeyLookupTest.keys(new Random(5), 2_000);
          for (BloomLookup mapped : List.of(written, small)) {
            ByteKeyLookupTest.assertAgree(mapped, strings);
          }
          for (String key : strings) {
            assertThat(written.mightContainString(key)).isEqualTo(heap.mightContainString(key));
          }
        }
        // It describes itself as the heap filter, and refuses keys of the other type.
        for (MappedBloomFilterBits mapped : List.of(written, small)) {
          assertThat(mapped.keyType()).isEqualTo(keyType);
          assertThat(mapped.format()).isEqualTo(format);
          assertThat(mapped.numBits()).isEqualTo(heap.numBits());
          assertThat(mapped.numHashFunctions()).isEqualTo(heap.numHashFunctions());
          assertThat(mapped.numLongs()).isEqualTo(heap.numLongs());
          assertThatThrownBy(
                  () -> {
                    if (keyType == KeyType.STRING) {
                      mapped.mightContainLong(1);
                    } else {
                      mapped.mightContainString("1");
                    }
                  })
              .isInstanceOf(IllegalStateException.class);
        }
      }
    }
  }

  @ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(ints = {1, 2, 3, 7, 9, 10, 11, 17, 30})
  void mappedGuavaLayoutAnswersAsTheHeapForEveryGroupingOfProbes(int k) throws Exception {
    // The mapped probe loads k's words in groups (2, then up to 8): every k, half-full bits, so
    // that absent keys fail in every group and present keys pass all of them.
    Random random = new Random(k);
    List<Object> keys = keys(KeyType.LONG, random, 4_000);
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 4_000L * k * 2, k);
    keys.forEach(builder::put);
    BloomFilterBits heap = builder.build();
    Manifest manifest = chunks.publishFull(heap, keys.size(), 1);
    Path file = dir.resolve("k" + k + ".payload");
    try (FileChannel out = open(file)) {
      SnapshotFiles.writeBase(manifest, chunks.source, out);
      MappedBloomFilterBits mapped = SnapshotFiles.mapWritten(manifest, out);
      MappedBloomFilterBits small = SnapshotFiles.mapVerified(manifest, out, manifest.sha256(), 64);
      List<Object> probes = new ArrayList<>(keys);
      probes.addAll(keys(KeyType.LONG, new Random(-k), 40_000));
      int maybe = assertAgree(heap, mapped, small, probes);
      assertThat(maybe).isGreaterThanOrEqualTo(keys.size()).isLessThan(probes.size());
      assertBatchesAgree(heap, mapped, probes);
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void deltaAppliedInTheFileEqualsTheFullBuild(FilterFormat format) throws Exception {
    Random random = new Random(11);
    List<Object> keys = keys(KeyType.STRING, random, 10_000);
    BloomFilterBits v1 = build(format, KeyType.STRING, keys, 15_000);
    Manifest m1 = chunks.publishFull(v1, keys.size(), 1);
    Path file1 = dir.resolve("v1");
    try (FileChannel out = open(file1)) {
      SnapshotFiles.writeBase(m1, chunks.source, out);
    }
    List<Object> keys2 = new ArrayList<>(keys.subList(300, keys.size()));
    keys2.addAll(keys(KeyType.STRING, random, 300));
    BloomFilterBits v2 = build(format, KeyType.STRING, keys2, 15_000);
    Manifest m2 = chunks.publishDelta(m1, v2, keys2.size(), 2);

    Path file2 = dir.resolve("v2");
    try (FileChannel from = FileChannel.open(file1, StandardOpenOption.READ);
        FileChannel out = open(file2)) {
      assertThat(SnapshotFiles.copyIfIntact(from, m1.totalBytes(), m1.sha256(), out)).isTrue();
      SnapshotFiles.applyDeltas(
          m2, m2.deltasAfter(1, m1.sha256()).orElseThrow(), out, chunks.source);
      MappedBloomFilterBits mapped = SnapshotFiles.mapVerified(m2, out, m2.sha256());
      for (Object key : keys2) {
        assertThat(mapped.mightContainString((String) key)).isTrue();
      }
    }
    assertThat(Files.readAllBytes(file2)).isEqualTo(SnapshotEncoder.toByteArray(v2));
    // The base file is untouched.
    assertThat(Files.readAllBytes(file1)).isEqualTo(SnapshotEncoder.toByteArray(v1));

    // A cold load of the chain into a file: base, then every delta in place.
    Path cold = dir.resolve("cold");
    try (FileChannel out = open(cold)) {
      SnapshotFiles.writeBase(m2, chunks.source, out);
      SnapshotFiles.applyDeltas(m2, m2.deltas(), out, chunks.source);
      SnapshotFiles.mapVerified(m2, out, m2.sha256());
    }
    assertThat(Files.readAllBytes(cold)).isEqualTo(SnapshotEncoder.toByteArray(v2));
  }

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void tamperedChunksAndFilesAreRefused(FilterFormat format) throws Exception {
    List<Object> keys = keys(KeyType.LONG, new Random(3), 5_000);
    BloomFilterBits bits = build(format, KeyType.LONG, keys, 5_000);
    Manifest manifest = chunks.publishFull(bits, keys.size(), 1);
    Path file = dir.resolve("good");
    try (FileChannel out = open(file)) {
      SnapshotFiles.writeBase(manifest, chunks.source, out);
    }

    // A flipped bit in the file on disk: the copy reports it, the mapping refuses it.
    Path tampered = dir.resolve("tampered");
    byte[] payload = Files.readAllBytes(file);
    payload[payload.length / 3] ^= 0x10;
    Files.write(tampered, payload);
    try (FileChannel from = FileChannel.open(tampered, StandardOpenOption.READ);
        FileChannel out = open(dir.resolve("copy"))) {
      assertThat(SnapshotFiles.copyIfIntact(from, manifest.totalBytes(), manifest.sha256(), out))
          .isFalse();
      assertThatThrownBy(() -> SnapshotFiles.mapVerified(manifest, from, manifest.sha256()))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("sha256 mismatch");
    }

    // A tampered chunk: refused before a byte of it is written.
    String name = manifest.chunks().get(1).name();
    byte[] chunk = chunks.store.get(name).clone();
    chunks.store.get(name)[5] ^= 1;
    Path refused = dir.resolve("refused");
    try (FileChannel out = open(refused)) {
      assertThatThrownBy(() -> SnapshotFiles.writeBase(manifest, chunks.source, out))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("chunk 1");
      assertThat(out.size()).isEqualTo(manifest.chunks().get(0).bytes());
    }
    chunks.store.put(name, chunk);
  }

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void writeErrorsAreLocalDiskExceptions(FilterFormat format) throws Exception {
    List<Object> keys = keys(KeyType.LONG, new Random(3), 1_000);
    BloomFilterBits bits = build(format, KeyType.LONG, keys, 1_000);
    Manifest manifest = chunks.publishFull(bits, keys.size(), 1);
    FileChannel closed = open(dir.resolve("closed"));
    closed.close();
    assertThatThrownBy(() -> SnapshotFiles.writeBase(manifest, chunks.source, closed))
        .isInstanceOf(LocalDiskException.class);
    assertThat(LoadFailureReason.of(new LocalDiskException("full", null)))
        .isEqualTo(LoadFailureReason.DISK);
  }

  /** Asserts both mappings answer each probe as the heap does; returns the heap's "maybe"s. */
  private static int assertAgree(
      BloomFilterBits heap,
      MappedBloomFilterBits mapped,
      MappedBloomFilterBits small,
      List<Object> probes) {
    int maybe = 0;
    for (Object key : probes) {
      boolean expected = heap.mightContain(key);
      assertThat(answer(mapped, key)).as("%s", key).isEqualTo(expected);
      assertThat(answer(small, key)).as("%s", key).isEqualTo(expected);
      maybe += expected ? 1 : 0;
    }
    return maybe;
  }

  private static void assertBatchesAgree(
      BloomFilterBits heap, MappedBloomFilterBits mapped, List<Object> probes) {
    int n = probes.size();
    boolean[] expected = new boolean[n];
    boolean[] actual = new boolean[n];
    if (heap.keyType() == KeyType.STRING) {
      String[] keys = probes.toArray(new String[0]);
      heap.mightContainStrings(keys, 0, n, expected);
      mapped.mightContainStrings(keys, 0, n, actual);
    } else {
      long[] keys = probes.stream().mapToLong(k -> (Long) k).toArray();
      heap.mightContainLongs(keys, 0, n, expected);
      mapped.mightContainLongs(keys, 0, n, actual);
    }
    assertThat(actual).isEqualTo(expected);
  }

  private static boolean answer(BloomLookup bits, Object key) {
    return key instanceof String s ? bits.mightContainString(s) : bits.mightContainLong((Long) key);
  }

  private static List<Object> keys(KeyType keyType, Random random, int count) {
    List<Object> keys = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      keys.add(keyType == KeyType.STRING ? "key-" + random.nextLong() : (Object) random.nextLong());
    }
    return keys;
  }

  private static BloomFilterBits build(
      FilterFormat format, KeyType keyType, List<Object> keys, int expected) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.SPLIT_BLOCK
            ? BloomFilterBits.builder(keyType, SplitBlockSizing.forKeys(expected, 0.01))
            : BloomFilterBits.builder(keyType, BloomFilterSizing.forKeys(expected, 0.01));
    keys.forEach(builder::put);
    return builder.build();
  }

  private static FileChannel open(Path file) throws IOException {
    return FileChannel.open(
        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
  }
}
