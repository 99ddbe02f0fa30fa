package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a memory-mapped reader's payload files refuse, and when: a file of another size or with a
 * header of another geometry is never mapped for serving, a manifest whose geometry contradicts the
 * payload header writes nothing, a copy reports a file that changed size, a delta is never applied
 * to a file of the wrong size, and disk errors surface as {@link LocalDiskException}.
 */
class SnapshotFileRefusalsTest {

  private final InMemoryChunks chunks = new InMemoryChunks();

  @TempDir Path dir;

  @Test
  void aFileOfAnotherSizeIsNeverMapped() throws Exception {
    for (FilterFormat format : FilterFormat.values()) {
      Manifest manifest = chunks.publishFull(bits(format, 1), 1_000, 1);
      Path good = writeBase(manifest, format + "-good");
      byte[] payload = Files.readAllBytes(good);
      long size = payload.length;
      for (long other : new long[] {size - 1, size + 1, size + 8}) {
        Path file = dir.resolve(format + "-" + other);
        byte[] resized = new byte[(int) other];
        System.arraycopy(payload, 0, resized, 0, (int) Math.min(size, other));
        Files.write(file, resized);
        try (FileChannel channel = open(file)) {
          String message = "payload file is " + other + " bytes, the manifest says " + size;
          assertThatThrownBy(() -> SnapshotFiles.mapVerified(manifest, channel, manifest.sha256()))
              .isInstanceOf(SnapshotVerificationException.class)
              .hasMessage(message);
          assertThatThrownBy(() -> SnapshotFiles.mapWritten(manifest, channel))
              .isInstanceOf(SnapshotVerificationException.class)
              .hasMessage(message);
        }
      }
    }
  }

  @Test
  void aFileWhoseHeaderDescribesAnotherGeometryIsNeverMapped() throws Exception {
    Manifest manifest = chunks.publishFull(bits(FilterFormat.GUAVA, 1), 1_000, 1);
    Path good = writeBase(manifest, "good");
    // Header: strategy, k, then the word count; each byte is checked, with or without a digest.
    for (int at = 0; at < SnapshotEncoder.HEADER_BYTES; at++) {
      byte[] payload = Files.readAllBytes(good);
      payload[at] ^= 0x01;
      Path file = Files.write(dir.resolve("header-" + at), payload);
      try (FileChannel channel = open(file)) {
        assertThatThrownBy(() -> SnapshotFiles.mapWritten(manifest, channel))
            .as("byte %d", at)
            .isInstanceOf(SnapshotVerificationException.class)
            .hasMessage("payload file header does not match the manifest's geometry");
        assertThatThrownBy(() -> SnapshotFiles.mapVerified(manifest, channel, manifest.sha256()))
            .as("byte %d", at)
            .isInstanceOf(SnapshotVerificationException.class)
            .hasMessage("payload file header does not match the manifest's geometry");
      }
    }
    try (FileChannel channel = open(good)) {
      assertThat(SnapshotFiles.mapWritten(manifest, channel).numHashFunctions()).isEqualTo(3);
      // The digest is compared without regard to case, as the manifest's validation admits both.
      assertThat(
              SnapshotFiles.mapVerified(
                      manifest, channel, manifest.sha256().toUpperCase(Locale.ROOT))
                  .numLongs())
          .isEqualTo(manifest.numLongs());
    }
  }

  @Test
  void aManifestWhoseGeometryContradictsThePayloadHeaderWritesNothing() throws Exception {
    Manifest honest = chunks.publishFull(bits(FilterFormat.GUAVA, 1), 1_000, 1);
    // Same chunks, same digests: only the header can tell that k is not the payload's.
    Manifest otherK = ManifestCopy.of(honest).numHashFunctions(4).build();
    Path file = dir.resolve("other-k");
    try (FileChannel out = open(file)) {
      assertThatThrownBy(() -> SnapshotFiles.writeBase(otherK, chunks.source, out))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessage(
              "chunk 0 ('"
                  + honest.chunks().get(0).name()
                  + "'): the payload header does not match the manifest's geometry");
      assertThat(out.size()).isZero();
    }
  }

  @Test
  void aChainedPayloadIsMappedOnlyAfterItsDigestIsChecked() throws Exception {
    Manifest v1 = chunks.publishFull(bits(FilterFormat.GUAVA, 1), 1_000, 1);
    Manifest v2 = chunks.publishDelta(v1, bits(FilterFormat.GUAVA, 2), 1_000, 2);
    Path file = dir.resolve("chained");
    try (FileChannel out = open(file)) {
      SnapshotFiles.writeBase(v2, chunks.source, out);
      SnapshotFiles.applyDeltas(v2, v2.deltas(), out, chunks.source);
      assertThatThrownBy(() -> SnapshotFiles.mapWritten(v2, out))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("mapVerified");
      assertThat(SnapshotFiles.mapVerified(v2, out, v2.sha256()).numBits()).isEqualTo(v2.numBits());
    }
  }

  @Test
  void deltasAreAppliedOnlyToAFileOfThePayloadsSize() throws Exception {
    for (FilterFormat format : FilterFormat.values()) {
      Manifest v1 = chunks.publishFull(bits(format, 1), 1_000, 1);
      Manifest v2 = chunks.publishDelta(v1, bits(format, 2), 1_000, 2);
      Path base = writeBase(v1, format + "-base");
      byte[] payload = Files.readAllBytes(base);

      Path shorter = Files.write(dir.resolve(format + "-short"), new byte[payload.length - 8]);
      try (FileChannel file = open(shorter)) {
        assertThatThrownBy(() -> SnapshotFiles.applyDeltas(v2, v2.deltas(), file, chunks.source))
            .isInstanceOf(LocalDiskException.class)
            .hasMessage(
                "payload file is " + (payload.length - 8) + " bytes, expected " + payload.length);
      }
      assertThat(Files.size(shorter)).isEqualTo(payload.length - 8);

      // No delta to apply: the file is not even looked at.
      try (FileChannel file = open(shorter)) {
        SnapshotFiles.applyDeltas(v2, List.of(), file, chunks.source);
      }
      assertThat(Files.readAllBytes(shorter)).isEqualTo(new byte[payload.length - 8]);
      try (FileChannel file = open(base)) {
        SnapshotFiles.applyDeltas(v2, List.of(), file, chunks.source);
      }
      assertThat(Files.readAllBytes(base)).isEqualTo(payload);
    }
  }

  @Test
  void aCopySpanningManyBuffersIsByteForByteAndReportsAChangedFile() throws Exception {
    // Two and a half copy buffers.
    byte[] content = new byte[(5 << 20) / 2 + 13];
    new Random(5).nextBytes(content);
    String sha256 = hex(content);
    Path from = Files.write(dir.resolve("from"), content);

    Path copy = dir.resolve("copy");
    try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
        FileChannel out = open(copy)) {
      assertThat(SnapshotFiles.copyIfIntact(in, content.length, sha256, out)).isTrue();
    }
    assertThat(Files.readAllBytes(copy)).isEqualTo(content);

    // The file on disk is no longer the size that was verified: not intact, whatever its bytes.
    for (long size : new long[] {content.length - 1L, content.length + 1L}) {
      try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
          FileChannel out = open(dir.resolve("copy-" + size))) {
        assertThat(SnapshotFiles.copyIfIntact(in, size, sha256, out)).as("size %d", size).isFalse();
      }
    }
    try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ);
        FileChannel out = open(dir.resolve("copy-other-digest"))) {
      assertThat(SnapshotFiles.copyIfIntact(in, content.length, hex(new byte[0]), out)).isFalse();
    }
  }

  @Test
  void diskErrorsAreLocalDiskExceptions() throws Exception {
    Path from = Files.write(dir.resolve("from"), new byte[64]);
    FileChannel closed = open(dir.resolve("closed"));
    closed.close();
    try (FileChannel in = FileChannel.open(from, StandardOpenOption.READ)) {
      assertThatThrownBy(() -> SnapshotFiles.copyIfIntact(in, 64, hex(new byte[64]), closed))
          .isInstanceOf(LocalDiskException.class)
          .hasMessageStartingWith("could not write the payload file");
    }
    try (FileChannel out = open(dir.resolve("out"))) {
      assertThatThrownBy(() -> SnapshotFiles.copyIfIntact(closed, 64, hex(new byte[64]), out))
          .isInstanceOf(LocalDiskException.class)
          .hasMessageStartingWith("could not read the served payload file");
    }
    Manifest v1 = chunks.publishFull(bits(FilterFormat.GUAVA, 1), 1_000, 1);
    Manifest v2 = chunks.publishDelta(v1, bits(FilterFormat.GUAVA, 2), 1_000, 2);
    assertThatThrownBy(() -> SnapshotFiles.applyDeltas(v2, v2.deltas(), closed, chunks.source))
        .isInstanceOf(LocalDiskException.class)
        .hasMessageStartingWith("could not map the payload file for writing");
    assertThatThrownBy(() -> SnapshotFiles.mapVerified(v1, closed, v1.sha256()))
        .isInstanceOf(LocalDiskException.class)
        .hasMessageStartingWith("could not read or map the payload file");
  }

  @Test
  void anInvalidManifestIsRefusedBeforeAChunkIsFetchedOrTheFileIsMapped() throws Exception {
    Manifest honest = chunks.publishFull(bits(FilterFormat.GUAVA, 1), 1_000, 1);
    Path good = writeBase(honest, "good");
    // Everything else matches the payload: only the manifest's own validation can refuse it.
    Manifest invalid = ManifestCopy.of(honest).keyCount(-1).build();
    int[] fetched = {0};
    SnapshotDecoder.ChunkSource counting =
        (index, ref) -> {
          fetched[0]++;
          return chunks.source.load(index, ref);
        };
    try (FileChannel out = open(dir.resolve("invalid"))) {
      assertThatThrownBy(() -> SnapshotFiles.writeBase(invalid, counting, out))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("keyCount must be >= 0, got -1");
      assertThat(fetched[0]).isZero();
      assertThat(out.size()).isZero();
    }
    try (FileChannel channel = open(good)) {
      assertThatThrownBy(() -> SnapshotFiles.mapVerified(invalid, channel, honest.sha256()))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("keyCount must be >= 0, got -1");
      assertThatThrownBy(() -> SnapshotFiles.mapWritten(invalid, channel))
          .isInstanceOf(SnapshotVerificationException.class)
          .hasMessageContaining("keyCount must be >= 0, got -1");
    }
  }

  /**
   * 1,000 long keys from {@code seed}: split-block sized for them at 1 %, Guava 8 Ki bits, k = 3.
   */
  private static BloomFilterBits bits(FilterFormat format, long seed) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.SPLIT_BLOCK
            ? BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(1_000, 0.01))
            : BloomFilterBits.builder(KeyType.LONG, 8 * 1024, 3);
    Random random = new Random(seed);
    for (int i = 0; i < 1_000; i++) {
      builder.putLong(random.nextLong());
    }
    return builder.build();
  }

  private Path writeBase(Manifest manifest, String name) throws Exception {
    Path file = dir.resolve(name);
    try (FileChannel out = open(file)) {
      SnapshotFiles.writeBase(manifest, chunks.source, out);
    }
    return file;
  }

  private static String hex(byte[] data) throws Exception {
    return java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }

  private static FileChannel open(Path file) throws Exception {
    return FileChannel.open(
        file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
  }
}
