package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.Hashing;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key fingerprint multiset of a counting shadow: SipHash-2-4 as published (Guava's as the
 * reference), occurrence counts that saturate, keys sharing a home slot kept apart, the bound of
 * distinct keys, and exact counts when a build's threads add at once.
 */
class KeyFingerprintsTest {

  @TempDir Path dir;

  @Test
  void sipHashIsTheReferenceSipHash24() {
    SecureRandom random = new SecureRandom();
    long k0 = random.nextLong();
    long k1 = random.nextLong();
    for (int length = 0; length <= 40; length++) {
      byte[] bytes = new byte[length + 3];
      random.nextBytes(bytes);
      assertThat(KeyFingerprints.sipHash24(k0, k1, bytes, 3, length))
          .as("%d bytes", length)
          .isEqualTo(Hashing.sipHash24(k0, k1).hashBytes(bytes, 3, length).asLong());
    }
  }

  /** A long key's fingerprint, hashed from the long itself, is that of its little-endian bytes. */
  @Test
  void aLongKeysFingerprintIsThatOfItsLittleEndianBytes() throws Exception {
    SecureRandom random = new SecureRandom();
    try (KeyFingerprints table = KeyFingerprints.create(dir.resolve("t"), 10, random)) {
      for (int i = 0; i < 1_000; i++) {
        long key = i < 3 ? new long[] {0, -1, Long.MIN_VALUE}[i] : random.nextLong();
        byte[] le =
            java.nio.ByteBuffer.allocate(8)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putLong(key)
                .array();
        assertThat(table.of(key)).as("%d", key).isEqualTo(table.of(le, 0, 8));
      }
    }
  }

  @Test
  void aSecretPerTableMakesFingerprintsDiffer() throws Exception {
    byte[] key = "sku-1".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    try (KeyFingerprints a = KeyFingerprints.create(dir.resolve("a"), 10, new SecureRandom());
        KeyFingerprints b = KeyFingerprints.create(dir.resolve("b"), 10, new SecureRandom())) {
      assertThat(a.of(key, 0, key.length)).isNotEqualTo(b.of(key, 0, key.length));
      assertThat(a.of(key, 0, key.length)).isEqualTo(a.of(key.clone(), 0, key.length));
    }
  }

  @Test
  void occurrencesAreCountedTakenAndSaturate() throws Exception {
    try (KeyFingerprints table =
        KeyFingerprints.create(dir.resolve("t"), 100, new SecureRandom())) {
      long slots = KeyFingerprints.slots(100);
      // Two fingerprints with the same home slot, and a third: each keeps its own count.
      long a = 5;
      long b = 5 + slots;
      for (int i = 0; i < 3; i++) {
        assertThat(table.add(a)).isTrue();
      }
      assertThat(table.add(b)).isTrue();
      assertThat(table.count(table.find(a))).isEqualTo(3);
      assertThat(table.count(table.find(b))).isEqualTo(1);
      assertThat(table.find(6 + 2 * slots)).as("never added").isEqualTo(-1);
      table.take(table.find(b));
      assertThat(table.count(table.find(b))).as("deleted as often as counted").isZero();
      assertThat(table.find(b)).as("its slot stays").isNotNegative();
      assertThat(table.distinct()).isEqualTo(2);
      for (int i = 0; i < 300; i++) {
        table.add(a);
      }
      assertThat(table.count(table.find(a))).isEqualTo(KeyFingerprints.SATURATED);
    }
  }

  @Test
  void newKeysPastTheBoundAreRefusedAndKnownOnesStillCount() throws Exception {
    try (KeyFingerprints table = KeyFingerprints.create(dir.resolve("t"), 10, new SecureRandom())) {
      long bound = KeyFingerprints.maxKeys(10);
      assertThat(bound).isEqualTo(10 + KeyFingerprints.MIN_HEADROOM);
      for (long f = 1; f <= bound; f++) {
        assertThat(table.add(f)).isTrue();
      }
      assertThat(table.add(bound + 1)).isFalse();
      assertThat(table.find(bound + 1)).isEqualTo(-1);
      assertThat(table.add(1)).isTrue();
      assertThat(table.count(table.find(1))).isEqualTo(2);
      assertThat(KeyFingerprints.slots(10) * KeyFingerprints.MAX_LOAD_PERCENT / 100)
          .isGreaterThanOrEqualTo(bound);
    }
  }

  @Test
  void threadsAddingAtOnceCountEveryOccurrence() throws Exception {
    int keys = 50_000;
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (KeyFingerprints table =
        KeyFingerprints.create(dir.resolve("t"), keys, new SecureRandom())) {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  for (long f = 1; f <= keys; f++) {
                    table.add(f * 0x9E3779B97F4A7C15L);
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      assertThat(table.distinct()).isEqualTo(keys);
      for (long f = 1; f <= keys; f++) {
        assertThat(table.count(table.find(f * 0x9E3779B97F4A7C15L))).isEqualTo(threads);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
