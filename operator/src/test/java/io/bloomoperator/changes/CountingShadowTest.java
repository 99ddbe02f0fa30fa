package io.bloomoperator.changes;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The counting shadow on its own: it counts exactly the bits the builder sets (both layouts), a
 * delete clears only bits no other key holds, a key in two rows survives one delete, a saturated
 * counter never decrements, a replayed delete, a delete of a key never counted (the reviewer's
 * attack: its counters are all above 0) and an unordered delete change nothing.
 */
class CountingShadowTest {

  @TempDir Path dir;

  private static BloomFilterBits.Builder builder(String layout, int keys) {
    return layout.equals("guava")
        ? BloomFilterBits.builder(KeyType.STRING, keys * 10L, 7)
        : BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(keys, 0.01));
  }

  private CountingShadow shadowFor(BloomFilterBits.Builder b) throws Exception {
    return shadowFor(b, 10_000, -1L);
  }

  /** A shadow for a build of {@code keys} keys, fingerprints cut to {@code mask}. */
  private CountingShadow shadowFor(BloomFilterBits.Builder b, long keys, long mask)
      throws Exception {
    return CountingShadow.create(
        dir.resolve("f.counts"),
        dir.resolve("f.prints"),
        BitPositions.of(b.format(), b.numBits(), b.numHashFunctions()),
        KeyType.STRING,
        keys,
        1 << 16,
        new SecureRandom(),
        mask);
  }

  static CountingShadow.Deletion delete(String key, long offset) {
    return new CountingShadow.Deletion(key, 0, offset, true, 0);
  }

  /** Filter bits = bits whose counter is above 0, exactly. */
  private static void assertMirrors(CountingShadow shadow, BloomFilterBits bits) {
    long counted = 0;
    for (long p = 0; p < bits.numBits(); p++) {
      if (shadow.counter(p) > 0) {
        counted++;
      }
    }
    assertThat(counted).isEqualTo(bits.bitCount());
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void deletesClearOnlyBitsNoLiveKeyHoldsInBothLayouts(String layout) throws Exception {
    int n = 2_000;
    List<String> keys = IntStream.range(0, n).mapToObj(i -> "key-" + i).toList();
    BloomFilterBits.Builder b = builder(layout, n);
    BloomFilterBits bits;
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      keys.forEach(counting::putString);
      bits = b.build();
      assertMirrors(shadow, bits);
      shadow.follow(StreamPosition.start(), "sha");

      List<CountingShadow.Deletion> deletions = new ArrayList<>();
      for (int i = 0; i < n / 2; i++) {
        deletions.add(delete(keys.get(i), i));
      }
      CountingShadow.Applied applied =
          shadow.apply(List.of(), deletions, new StreamPosition(new java.util.TreeMap<>()));
      assertThat(applied.removed()).isEqualTo(n / 2);
      long[] clears = shadow.clears();
      BloomFilterBits after = BitPositions.withCleared(bits, clears, clears.length);
      assertMirrors(shadow, after);
      // Not one live key lost a bit.
      assertThat(keys.subList(n / 2, n)).allMatch(after::mightContainString);
      long stillAnswered =
          keys.subList(0, n / 2).stream().filter(after::mightContainString).count();
      assertThat(stillAnswered).as("deleted keys still answered present").isLessThan(n / 20);
      // The published bits are untouched: clearing works on a copy.
      assertThat(keys).allMatch(bits::mightContainString);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void positionsAreTheBuildersBits(String layout) {
    BloomFilterBits.Builder b = builder(layout, 100);
    BitPositions positions = BitPositions.of(b.format(), b.numBits(), b.numHashFunctions());
    b.putString("only-key");
    BloomFilterBits bits = b.build();
    long[] at = new long[positions.perKey()];
    positions.ofString("only-key", at);
    BloomFilterBits cleared = BitPositions.withCleared(bits, at, at.length);
    assertThat(cleared.bitCount()).isZero();
    assertThat(bits.bitCount()).isEqualTo(java.util.Arrays.stream(at).distinct().count());
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void anIdTheBuildReadsInTwoRowsIsPinnedAndItsDeletesWait(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      counting.putString("twice");
      counting.putString("twice");
      counting.putString("once");
      BloomFilterBits bits = b.build();
      shadow.follow(StreamPosition.start(), "sha");
      // A delete is matched to its key, not its row: one row's delete, or the same delete
      // delivered twice at two offsets, could otherwise take the other row's occurrence too.
      CountingShadow.Applied applied =
          shadow.apply(
              List.of(),
              List.of(delete("twice", 0), delete("twice", 1), delete("once", 2)),
              StreamPosition.start().with(0, 3));
      assertThat(applied.waiting()).as("both deletes of the repeated ID wait").isEqualTo(2);
      assertThat(applied.removed()).as("the ID read once is deleted").isEqualTo(1);
      assertThat(shadow.occurrences("twice")).isEqualTo(KeyFingerprints.SATURATED);
      long[] clears = shadow.clears();
      BloomFilterBits after = BitPositions.withCleared(bits, clears, clears.length);
      assertThat(after.mightContainString("twice")).isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void aSaturatedCounterNeverDecrements(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      for (int i = 0; i < 20; i++) {
        counting.putString("hot");
      }
      BloomFilterBits bits = b.build();
      long[] at = new long[b.numHashFunctions()];
      BitPositions.of(bits).ofString("hot", at);
      assertThat(counters(shadow, at)).containsOnly(15);
      shadow.follow(StreamPosition.start(), "sha");
      List<CountingShadow.Deletion> twenty = new ArrayList<>();
      for (int i = 0; i < 20; i++) {
        twenty.add(delete("hot", i));
      }
      shadow.apply(List.of(), twenty, StreamPosition.start().with(0, 20));
      // 20 real deletes of 20 rows, yet the count is unknown past 15: the bits stay (a false
      // positive until the next full build), never a count reaching 0 under a live key.
      assertThat(counters(shadow, at)).containsOnly(15);
      assertThat(shadow.clears()).isEmpty();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void aReplayedDeleteIsSkippedAndKeepsALiveKeySharingBits(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      // "twice" is in two rows; "live" shares a bit with it. One row of "twice" is deleted, and
      // the delete is read again (its publish failed): applied twice it would bring every counter
      // of "twice" to 0 and clear the bit "live" needs.
      String twice = "twice";
      String live =
          sharingBitWith(BitPositions.of(b.format(), b.numBits(), b.numHashFunctions()), twice);
      counting.putString(twice);
      counting.putString(twice);
      counting.putString(live);
      BloomFilterBits bits = b.build();
      shadow.follow(StreamPosition.start().with(0, 0), "sha");
      CountingShadow.Deletion once = delete(twice, 0);
      shadow.apply(List.of(), List.of(once), StreamPosition.start().with(0, 1));
      CountingShadow.Applied again =
          shadow.apply(List.of(), List.of(once), StreamPosition.start().with(0, 1));
      assertThat(again.skipped()).isEqualTo(1);
      assertThat(again.removed()).isZero();
      long[] clears = shadow.clears();
      BloomFilterBits after = BitPositions.withCleared(bits, clears, clears.length);
      assertThat(after.mightContainString(live)).isTrue();
      assertThat(after.mightContainString(twice)).as("its other row is live").isTrue();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void aDeleteEventSentTwiceWaitsAndKeepsLiveKeysSharingItsBits(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    BitPositions positions = BitPositions.of(b.format(), b.numBits(), b.numHashFunctions());
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      // "gone" is in one row, and live keys hold every one of its bits too. The producer sends
      // the delete of "gone" twice, at two offsets (no replay the position catches): applied
      // twice, the second would find every counter above 0 and take counts the live keys hold.
      String gone = "gone";
      List<String> live = coveringEveryBitOf(positions, gone);
      counting.putString(gone);
      live.forEach(counting::putString);
      BloomFilterBits bits = b.build();
      shadow.follow(StreamPosition.start().with(0, 0), "sha");
      CountingShadow.Applied applied =
          shadow.apply(
              List.of(),
              List.of(delete(gone, 0), delete(gone, 1)),
              StreamPosition.start().with(0, 2));
      assertThat(applied.removed()).isEqualTo(1);
      assertThat(applied.waiting()).as("the second delete of the same key").isEqualTo(1);
      assertLive(shadow, bits, live);

      // Added again, then deleted again: that delete is applied (it has a count to take); a
      // further one is not.
      CountingShadow.Applied readded =
          shadow.apply(
              List.of(gone),
              List.of(new CountingShadow.Deletion(gone, 0, 3, true, 1)),
              StreamPosition.start().with(0, 4));
      assertThat(readded.removed()).isEqualTo(1);
      CountingShadow.Applied third =
          shadow.apply(List.of(), List.of(delete(gone, 4)), StreamPosition.start().with(0, 5));
      assertThat(third.waiting()).isEqualTo(1);
      assertLive(shadow, bits, live);
    }
  }

  private static void assertLive(CountingShadow shadow, BloomFilterBits bits, List<String> live) {
    long[] clears = shadow.clears();
    BloomFilterBits after = BitPositions.withCleared(bits, clears, clears.length);
    live.forEach(key -> assertThat(after.mightContainString(key)).as(key).isTrue());
  }

  /** Keys that together hold every bit of {@code key}. */
  static List<String> coveringEveryBitOf(BitPositions positions, String key) {
    long[] mine = new long[positions.perKey()];
    positions.ofString(key, mine);
    long[] theirs = new long[positions.perKey()];
    List<String> covering = new java.util.ArrayList<>();
    int next = 0;
    for (long bit : mine) {
      search:
      for (; ; next++) {
        String other = "cover-" + next;
        positions.ofString(other, theirs);
        for (long t : theirs) {
          if (t == bit) {
            covering.add(other);
            next++;
            break search;
          }
        }
      }
    }
    return covering;
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void anAddAfterADeleteInOneBatchKeepsTheKey(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      counting.putString("back");
      BloomFilterBits bits = b.build();
      shadow.follow(StreamPosition.start(), "sha");
      // delete(back) then add(back): the add comes after the delete in stream order.
      shadow.apply(
          List.of("back"),
          List.of(new CountingShadow.Deletion("back", 0, 0, true, 0)),
          StreamPosition.start().with(0, 2));
      long[] clears = shadow.clears();
      assertThat(BitPositions.withCleared(bits, clears, clears.length).mightContainString("back"))
          .isTrue();
    }
  }

  /**
   * Counting a key costs the build no per-key garbage of its own: no positions array and no byte
   * buffer per key (measured beside the filter's own inserts; what is left, under 64 bytes, is the
   * positions' own hashing: a captured lambda, the split-block mask). Before, about 200 bytes.
   */
  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void countingLongKeysAllocatesNothingPerKey(String layout) throws Exception {
    int n = 200_000;
    java.util.function.Supplier<BloomFilterBits.Builder> longs =
        () ->
            layout.equals("guava")
                ? BloomFilterBits.builder(KeyType.LONG, n * 10L, 7)
                : BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(n, 0.01));
    BloomFilterBits.Builder plain = longs.get();
    BloomFilterBits.Builder counted = longs.get();
    try (CountingShadow shadow =
        CountingShadow.create(
            dir.resolve("f.counts"),
            dir.resolve("f.prints"),
            BitPositions.of(counted.format(), counted.numBits(), counted.numHashFunctions()),
            KeyType.LONG,
            3L * n,
            1 << 16,
            new SecureRandom(),
            -1L)) {
      io.bloomoperator.snapshot.KeyInserter inserter = shadow.counting(counted);
      com.sun.management.ThreadMXBean threads =
          (com.sun.management.ThreadMXBean)
              java.lang.management.ManagementFactory.getThreadMXBean();
      for (int round = 0; round < 3; round++) { // the last round measures warmed-up code
        long before = threads.getCurrentThreadAllocatedBytes();
        for (long key = 0; key < n; key++) {
          plain.putLong(key * 31 + round);
        }
        long own = threads.getCurrentThreadAllocatedBytes() - before;
        before = threads.getCurrentThreadAllocatedBytes();
        for (long key = 0; key < n; key++) {
          inserter.putLong(key * 31 + round);
        }
        long withCounting = threads.getCurrentThreadAllocatedBytes() - before;
        if (round == 2) {
          assertThat((withCounting - own) / (double) n)
              .as("bytes a key counting adds (filter alone: %.1f a key)", own / (double) n)
              .isLessThan(64);
        }
      }
    }
  }

  @org.junit.jupiter.api.Test
  void aShadowOverItsNamespaceBoundIsRefusedBeforeAnyFileIsMade() throws Exception {
    BitPositions positions =
        BitPositions.of(io.bloomoperator.snapshot.FilterFormat.GUAVA, 64L * 1024, 7);
    long one = CountingShadow.bytesFor(positions.numBits(), 5_000);
    // Counters 32 KiB; fingerprints of 5,000 keys (and a quarter more) 9 bytes a slot.
    assertThat(one).isEqualTo(32_768 + KeyFingerprints.bytesFor(5_000));
    assertThat(KeyFingerprints.bytesFor(5_000)).isEqualTo(7_813 * 8 + 7_816);
    try (CountingShadows shadows = new CountingShadows(dir, 2 * one + one / 2, one + one / 2)) {
      CountingShadows.Reserved first = shadows.reserve("a", "ns", positions, KeyType.STRING, 5_000);
      assertThat(first.shadow()).isNotNull();
      assertThat(shadows.bytes()).isEqualTo(one);
      // The fingerprints alone would fit beside the first shadow; with the counters they do not.
      CountingShadows.Reserved second =
          shadows.reserve("b", "ns", positions, KeyType.STRING, 5_000);
      assertThat(second.shadow()).isNull();
      assertThat(second.refusal()).contains("BLOOM_STREAM_NAMESPACE_COUNTING_BYTES");
      assertThat(files(".counts") + files(".prints")).as("none made for b").isEqualTo(2);
      // A build of many more keys is refused on its fingerprints alone.
      assertThat(shadows.reserve("c", "other", positions, KeyType.STRING, 1_000_000).refusal())
          .contains("BLOOM_STREAM_NAMESPACE_COUNTING_BYTES");
      assertThat(shadows.reserve("c", "other", positions, KeyType.STRING, 5_000).shadow())
          .isNotNull();
      assertThat(shadows.reserve("d", "third", positions, KeyType.STRING, 5_000).refusal())
          .contains("BLOOM_STREAM_COUNTING_BYTES=");
      assertThat(files(".counts") + files(".prints")).isEqualTo(4);
    }
    // A new process starts without the shadows of the old one.
    try (CountingShadows again = new CountingShadows(dir, 1 << 20, 1 << 20)) {
      assertThat(files(".counts") + files(".prints")).isZero();
      assertThat(again.of("a")).isNull();
    }
  }

  private long files(String ending) throws java.io.IOException {
    try (var files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(ending)).count();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void deletesOfKeysNeverCountedWhoseCountersAreAllSetKeepEveryLiveKey(String layout)
      throws Exception {
    int n = 2_000;
    List<String> keys = IntStream.range(0, n).mapToObj(i -> "key-" + i).toList();
    BloomFilterBits.Builder b = builder(layout, n);
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      keys.forEach(counting::putString);
      BloomFilterBits bits = b.build();
      shadow.follow(StreamPosition.start(), "sha");
      // The reviewer's attack: IDs never inserted whose k counters are all above 0 (the filter's
      // false positives, found by searching as anyone who reads the filter can), deleted.
      List<String> forged = forged(shadow, BitPositions.of(bits), 300);
      List<CountingShadow.Deletion> deletions = new ArrayList<>();
      for (int i = 0; i < forged.size(); i++) {
        deletions.add(delete(forged.get(i), i));
      }
      CountingShadow.Applied applied =
          shadow.apply(List.of(), deletions, StreamPosition.start().with(0, forged.size()));
      long[] clears = shadow.clears();
      BloomFilterBits after = BitPositions.withCleared(bits, clears, clears.length);
      assertThat(keys.stream().filter(k -> !after.mightContainString(k)))
          .as("live keys answered absent")
          .isEmpty();
      assertThat(applied.removed()).isZero();
      assertThat(applied.waiting()).isEqualTo(forged.size());
      assertMirrors(shadow, after);
    }
  }

  /** {@code count} keys never counted into {@code shadow} whose counters are all above 0. */
  private static List<String> forged(CountingShadow shadow, BitPositions positions, int count) {
    List<String> found = new ArrayList<>();
    long[] at = new long[positions.perKey()];
    for (int i = 0; found.size() < count; i++) {
      String candidate = "forged-" + i;
      positions.ofString(candidate, at);
      if (java.util.Arrays.stream(at).allMatch(p -> shadow.counter(p) > 0)) {
        found.add(candidate);
      }
    }
    return found;
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void aFingerprintCollisionTheCountersRefuteChangesNothing(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    BitPositions positions = BitPositions.of(b.format(), b.numBits(), b.numHashFunctions());
    // Fingerprints cut to 4 bits: most keys collide with a member (in the operator: n/2^64).
    try (CountingShadow shadow = shadowFor(b, 100, 0xFL)) {
      var counting = shadow.counting(b);
      List<String> members = IntStream.range(0, 20).mapToObj(i -> "m-" + i).toList();
      members.forEach(counting::putString);
      BloomFilterBits bits = b.build();
      shadow.follow(StreamPosition.start(), "sha");
      long[] at = new long[positions.perKey()];
      String collider = null;
      for (int i = 0; collider == null; i++) {
        String candidate = "x-" + i;
        positions.ofString(candidate, at);
        if (shadow.occurrences(candidate) > 0
            && java.util.Arrays.stream(at).anyMatch(p -> shadow.counter(p) == 0)) {
          collider = candidate;
        }
      }
      int before = shadow.occurrences(collider);
      CountingShadow.Applied applied =
          shadow.apply(List.of(), List.of(delete(collider, 0)), StreamPosition.start().with(0, 1));
      assertThat(applied.waiting()).isEqualTo(1);
      assertThat(shadow.occurrences(collider)).as("the member's count is kept").isEqualTo(before);
      assertThat(shadow.clears()).isEmpty();
      assertThat(members).allMatch(bits::mightContainString);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"guava", "splitBlock"})
  void anUnorderedDeleteAndADeleteOfASaturatedCountWait(String layout) throws Exception {
    BloomFilterBits.Builder b = builder(layout, 100);
    try (CountingShadow shadow = shadowFor(b)) {
      var counting = shadow.counting(b);
      counting.putString("kept");
      for (int i = 0; i < 300; i++) {
        counting.putString("hot");
      }
      b.build();
      shadow.follow(StreamPosition.start(), "sha");
      assertThat(shadow.occurrences("hot")).isEqualTo(KeyFingerprints.SATURATED);
      CountingShadow.Applied applied =
          shadow.apply(
              List.of(),
              List.of(new CountingShadow.Deletion("kept", 0, 0, false, 0), delete("hot", 1)),
              StreamPosition.start().with(0, 2));
      assertThat(applied.waiting()).isEqualTo(2);
      assertThat(applied.removed()).isZero();
      assertThat(shadow.occurrences("kept")).isEqualTo(1);
      assertThat(shadow.occurrences("hot")).isEqualTo(KeyFingerprints.SATURATED);
      assertThat(shadow.occurrences("never")).isEqualTo(-1);
    }
  }

  @org.junit.jupiter.api.Test
  void newKeysPastTheFingerprintBoundStopTheShadow() throws Exception {
    BloomFilterBits.Builder b = builder("guava", 10);
    try (CountingShadow shadow = shadowFor(b, 10, -1L)) {
      var counting = shadow.counting(b);
      IntStream.range(0, 10).forEach(i -> counting.putString("k-" + i));
      shadow.follow(StreamPosition.start(), "sha");
      long bound = KeyFingerprints.maxKeys(10);
      List<String> adds = new ArrayList<>();
      for (long i = 10; i < bound; i++) {
        adds.add("k-" + i);
      }
      assertThat(shadow.apply(adds, List.of(), StreamPosition.start().with(0, 1)).stopped())
          .isNull();
      CountingShadow.Applied over =
          shadow.apply(
              List.of("one-too-many"),
              List.of(delete("k-1", 1)),
              StreamPosition.start().with(0, 2));
      assertThat(over.stopped()).contains("bound");
      assertThat(over.removed()).isZero();
      assertThat(shadow.stopped()).isNotNull();
    }
  }

  private static List<Integer> counters(CountingShadow shadow, long[] at) {
    return java.util.Arrays.stream(at).mapToObj(p -> shadow.counter(p)).toList();
  }

  /** A key sharing at least one bit with {@code key}. */
  static String sharingBitWith(BitPositions positions, String key) {
    long[] mine = new long[positions.perKey()];
    positions.ofString(key, mine);
    long[] theirs = new long[positions.perKey()];
    for (int i = 0; ; i++) {
      String other = "live-" + i;
      positions.ofString(other, theirs);
      for (long a : mine) {
        for (long t : theirs) {
          if (a == t) {
            return other;
          }
        }
      }
    }
  }
}
