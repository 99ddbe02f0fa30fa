package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The payloads of streamed filters kept in files between publishes. */
class HeldBitsTest {

  @TempDir Path dir;

  private static BloomFilterBits bits(int keys) {
    BloomFilterBits.Builder b =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(10_000, 0.01));
    for (int i = 0; i < keys; i++) {
      b.putString("k" + i);
    }
    return b.build();
  }

  private static Manifest manifest(long version, BloomFilterBits bits) {
    SnapshotEncoder.Result encoded;
    try {
      encoded = SnapshotEncoder.encode(bits, 1_000_000, (i, d, l, s) -> {});
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return Manifest.of("f", version, bits, 0, encoded, Instant.parse("2026-12-02T00:00:00Z"));
  }

  @Test
  void theHeldPayloadIsReadBackOnlyForItsOwnVersionAndContent() {
    HeldBits held = new HeldBits(dir, 1 << 20, 1 << 20);
    BloomFilterBits v1 = bits(100);
    Manifest m1 = manifest(1, v1);
    assertThat(held.hold("uid-1", "ns", m1, v1)).isTrue();
    assertThat(held.of("uid-1", m1)).isEqualTo(v1);
    assertThat(held.heldBytes()).isEqualTo(SnapshotEncoder.payloadSize(v1));

    assertThat(held.of("uid-1", manifest(2, v1))).isNull(); // another version
    assertThat(held.of("uid-1", manifest(1, bits(101)))).isNull(); // another payload
    assertThat(held.of("uid-2", m1)).isNull();

    held.forget("uid-1");
    assertThat(held.of("uid-1", m1)).isNull();
    assertThat(held.heldBytes()).isZero();
    assertThat(dir.toFile().list()).isEmpty();
  }

  @Test
  void aFileChangedOnDiskIsNotBelievedAndIsDropped() throws Exception {
    HeldBits held = new HeldBits(dir, 1 << 20, 1 << 20);
    BloomFilterBits v1 = bits(100);
    Manifest m1 = manifest(1, v1);
    held.hold("uid-1", "ns", m1, v1);
    Path file;
    try (var files = Files.list(dir)) {
      file = files.findFirst().orElseThrow();
    }
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      ch.read(one, 100);
      // Every bit of one byte flipped: set bits cleared (keys lost) and others set.
      ch.write(ByteBuffer.wrap(new byte[] {(byte) ~one.get(0)}), 100);
    }
    assertThat(held.of("uid-1", m1)).isNull();
    assertThat(held.heldBytes()).isZero();
  }

  @Test
  void payloadsBeyondTheNamespaceOrOperatorBoundAreNotHeld() {
    BloomFilterBits one = bits(10);
    long size = SnapshotEncoder.payloadSize(one);
    HeldBits held = new HeldBits(dir, 3 * size, 2 * size);
    assertThat(held.hold("a1", "a", manifest(1, one), one)).isTrue();
    assertThat(held.hold("a2", "a", manifest(1, one), one)).isTrue();
    assertThat(held.hold("a3", "a", manifest(1, one), one)).as("namespace bound").isFalse();
    assertThat(held.hold("b1", "b", manifest(1, one), one)).isTrue();
    assertThat(held.hold("c1", "c", manifest(1, one), one)).as("operator bound").isFalse();
    // Replacing a filter's own payload does not count it twice.
    assertThat(held.hold("a1", "a", manifest(2, one), one)).isTrue();
    assertThat(held.heldBytes()).isEqualTo(3 * size);
  }

  @Test
  void filesOfAnEarlierProcessAreDeletedAtStart() {
    HeldBits first = new HeldBits(dir, 1 << 20, 1 << 20);
    BloomFilterBits v1 = bits(5);
    first.hold("uid-1", "ns", manifest(1, v1), v1);
    HeldBits second = new HeldBits(dir, 1 << 20, 1 << 20);
    assertThat(dir.toFile().list()).isEmpty();
    assertThat(second.of("uid-1", manifest(1, v1))).isNull();
  }
}
