package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * {@link LiveBloomFilter#addLocal} on a filter whose versions a test swaps in by hand, as the watch
 * loop does (one volatile write, then the listeners on the swapping thread), with a clock the test
 * moves: answered at once, dropped when a version shows the key and not before, expired and counted
 * after the TTL, bounded, and never a false negative while adds, lookups and swaps race.
 */
class LocalAddsTest {

  private static final Duration TTL = Duration.ofMinutes(10);

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final HandSwapped source = new HandSwapped();

  @Test
  void aKeyAddedLocallyIsMaybePresentAtOnceBeforeAnyVersionHasIt() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 100, BeforeFirstSnapshot.FAIL_CLOSED);
    assertThat(live.mightContain("order-1")).isFalse(); // fail-closed, nothing served

    assertThat(live.addLocal("order-1")).isTrue();
    assertThat(live.mightContain("order-1")).isTrue();
    assertThat(live.localAdds()).isEqualTo(1);

    source.swap(1, strings("a", "b"));
    assertThat(live.mightContain("order-1")).isTrue();
    assertThat(live.mightContain("a")).isTrue();
    assertThat(live.mightContain("order-2")).isFalse();
    assertThat(live.localAdds()).isEqualTo(1);
    assertThat(live.lookups()).isEqualTo(5);
    assertThat(live.maybePresent()).isEqualTo(3); // the overlay's answers count as maybe present
  }

  @Test
  void aKeyIsDroppedOnceAServedVersionShowsItAndNotBefore() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 100, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(1, strings("a"));
    live.addLocal("order-1");
    live.addLocal("order-2");

    source.swap(2, strings("a", "b")); // neither arrived yet
    assertThat(live.localAdds()).isEqualTo(2);
    assertThat(live.localAddsArrived()).isZero();

    source.swap(3, strings("a", "b", "order-1"));
    assertThat(live.localAdds()).isEqualTo(1);
    assertThat(live.localAddsArrived()).isEqualTo(1);
    assertThat(live.mightContain("order-1")).isTrue(); // now from the bits
    assertThat(live.mightContain("order-2")).isTrue(); // still from the overlay

    source.swap(4, strings("a", "b", "order-1", "order-2"));
    assertThat(live.localAdds()).isZero();
    assertThat(live.localAddsArrived()).isEqualTo(2);
    assertThat(live.localAddsExpired()).isZero();
  }

  @Test
  void aKeyNoVersionShowsExpiresAfterTheTtlAndIsCounted() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 100, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(1, strings("a"));
    live.addLocal("lost");
    nanos.addAndGet(TTL.toNanos() / 2);
    live.addLocal("later");

    nanos.addAndGet(TTL.toNanos() / 2 - 1);
    source.sweep();
    assertThat(live.localAdds()).isEqualTo(2); // one nanosecond short of the TTL: kept

    nanos.addAndGet(1);
    source.sweep();
    assertThat(live.localAdds()).isEqualTo(1);
    assertThat(live.localAddsExpired()).isEqualTo(1);
    assertThat(live.mightContain("lost")).isFalse();
    assertThat(live.mightContain("later")).isTrue();

    live.addLocal("later"); // added again: its TTL starts again
    nanos.addAndGet(TTL.toNanos() - 1);
    source.sweep();
    assertThat(live.mightContain("later")).isTrue();
    assertThat(live.localAddsExpired()).isEqualTo(1);
  }

  @Test
  void whenFullAnAddIsRefusedAndCountedInsteadOfEvictingAnother() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 3, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(1, strings("a"));
    assertThat(live.addLocal(List.of("k1", "k2", "k1"))).isEqualTo(3); // k1 again takes no slot
    assertThat(live.localAdds()).isEqualTo(2);

    assertThat(live.addLocal(List.of("k3", "k4", "k5"))).isEqualTo(1);
    assertThat(live.addLocal("k6")).isFalse();
    assertThat(live.addLocal("k2")).isTrue(); // held already: accepted without a slot
    assertThat(live.localAdds()).isEqualTo(3);
    assertThat(live.localAddsRefused()).isEqualTo(3);
    assertThat(List.of("k1", "k2", "k3")).allMatch(live::mightContain);
    assertThat(List.of("k4", "k5", "k6")).noneMatch(live::mightContain);

    source.swap(2, strings("a", "k1")); // one slot free again
    assertThat(live.addLocal("k4")).isTrue();
    assertThat(live.mightContain("k4")).isTrue();
  }

  /**
   * The narrowest race: a lookup reads the served version, the watcher then swaps in the version
   * that holds the key and drops it from the overlay, and only then does the lookup, stalled in
   * between, find the old bits answering "absent" and the overlay empty. It must still answer
   * "maybe present".
   */
  @Test
  void aLookupStalledAcrossTheSwapThatDropsItsKeyStillFindsIt() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 100, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(1, strings("a"));
    live.addLocal("order-1");
    source.afterNextRead = () -> source.swap(2, strings("a", "order-1"));

    assertThat(live.mightContain("order-1")).isTrue();
    assertThat(source.current.version()).isEqualTo(2);
    assertThat(live.localAdds()).isZero(); // the drop did happen before the overlay was read

    live.addLocal("order-2");
    source.afterNextRead = () -> source.swap(3, strings("a", "order-1", "order-2"));
    String[] keys = {"order-2", "absent"};
    boolean[] results = new boolean[2];
    assertThat(live.mightContainAll(keys, 0, 2, results)).isEqualTo(1);
    assertThat(results).containsExactly(true, false);
    assertThat(live.localAdds()).isZero();

    LiveBloomFilter<Long> longs = filter(LiveKeyType.LONG, 100, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(4, longs(1));
    longs.addLocal(77L);
    source.afterNextRead = () -> source.swap(5, longs(1, 77));
    assertThat(longs.mightContainAllLongs(new long[] {77, 78}, 0, 2, results)).isEqualTo(1);
    assertThat(results).containsExactly(true, false);
    assertThat(longs.localAdds()).isZero();
  }

  @Test
  void longKeysAreHeldAndDroppedLikeStrings() {
    LiveBloomFilter<Long> live = filter(LiveKeyType.LONG, 100, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(1, longs(1, 2));
    assertThat(live.addLocal(List.of(1_000_000_007L, 42L))).isEqualTo(2);
    assertThat(live.mightContain(1_000_000_007L)).isTrue();
    assertThat(live.mightContain(Long.valueOf(1_000_000_007L))).isTrue(); // another box, same key
    assertThat(live.mightContain(1_000_000_008L)).isFalse();

    long[] keys = {1, 1_000_000_007L, 1_000_000_008L, 42};
    boolean[] results = new boolean[4];
    assertThat(live.mightContainAllLongs(keys, 0, 4, results)).isEqualTo(3);
    assertThat(results).containsExactly(true, true, false, true);
    Long[] boxed = LongStream.of(keys).boxed().toArray(Long[]::new);
    assertThat(live.mightContainAll(boxed, 0, 4, results)).isEqualTo(3);
    assertThat(results).containsExactly(true, true, false, true);

    source.swap(2, longs(1, 2, 1_000_000_007L));
    assertThat(live.localAdds()).isEqualTo(1);
    assertThat(live.mightContain(42L)).isTrue();
  }

  @Test
  void aKeyOverTheLengthBoundOrOfTheWrongTypeIsRefusedWithAnException() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 100, BeforeFirstSnapshot.FAIL_OPEN);
    source.swap(1, strings("a"));
    String longest = "x".repeat(BloomFilterWatcher.DEFAULT_LOCAL_ADDS_MAX_KEY_LENGTH);
    assertThat(live.addLocal(longest)).isTrue();
    assertThatThrownBy(() -> live.addLocal(longest + "x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 256 chars");
    // A batch is checked whole before anything is added.
    assertThatThrownBy(() -> live.addLocal(List.of("fine", longest + "x")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> live.addLocal(Arrays.asList("fine", null)))
        .isInstanceOf(NullPointerException.class);
    assertThat(live.mightContain("fine")).isFalse();
    assertThat(live.localAdds()).isEqualTo(1);
    assertThat(live.localAddsRefused()).isZero();

    @SuppressWarnings({"unchecked", "rawtypes"})
    LiveBloomFilter<Object> raw = (LiveBloomFilter) live;
    assertThatThrownBy(() -> raw.addLocal(7L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("String keys");
  }

  @Test
  void withLocalAddsOffEveryAddIsRefused() {
    LiveBloomFilter<String> live = filter(LiveKeyType.STRING, 0, BeforeFirstSnapshot.FAIL_CLOSED);
    assertThat(live.addLocal("k")).isFalse();
    assertThat(live.mightContain("k")).isFalse();
    assertThat(live.localAddsRefused()).isEqualTo(1);
  }

  @Test
  void theFixedTestDoubleAnswersLocalAddsToo() {
    LiveBloomFilter<Long> fixed = LiveBloomFilter.fixed("ids", LiveKeyType.LONG, List.of(1L, 2L));
    assertThat(fixed.mightContain(3L)).isFalse();
    assertThat(fixed.addLocal(3L)).isTrue();
    assertThat(fixed.mightContain(3L)).isTrue();
  }

  /**
   * Request threads add keys and look them up at once and again later, other threads look up keys
   * never added, while a watcher thread swaps in versions that hold ever more of the added keys
   * (and drops them from the overlay). An added key must never be answered "absent": neither before
   * its version, nor in the instant a lookup reads the old version while the drop of the key races
   * it.
   */
  @Test
  void concurrentAddsLookupsAndSwapsNeverAnswerAbsentForAnAddedKey() throws Exception {
    LiveBloomFilter<String> live =
        filter(LiveKeyType.STRING, 1_000_000, BeforeFirstSnapshot.FAIL_CLOSED);
    source.swap(1, strings("seed"));
    Queue<String> added = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong falseNegatives = new AtomicLong();
    AtomicLong lookups = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    int writers = 3;
    CountDownLatch started = new CountDownLatch(writers + 2);
    for (int w = 0; w < writers; w++) {
      int writer = w;
      threads.add(
          new Thread(
              () -> {
                started.countDown();
                List<String> mine = new ArrayList<>();
                for (int i = 0; !stop.get(); i++) {
                  if (i < 50_000) { // enough keys after that: only look up
                    String key = "w" + writer + "-" + i;
                    if (!live.addLocal(key) || !live.mightContain(key)) {
                      falseNegatives.incrementAndGet(); // the bound is far away: never refused
                    }
                    added.add(key);
                    mine.add(key);
                  }
                  lookUpAgain(live, mine, falseNegatives, lookups);
                }
              }));
    }
    threads.add(
        new Thread(
            () -> {
              started.countDown();
              for (int i = 0; !stop.get(); i++) {
                live.mightContain("never-added-" + i); // the absent path, concurrently
              }
            }));
    Thread watcher =
        new Thread(
            () -> {
              started.countDown();
              long version = 2;
              List<String> published = new ArrayList<>();
              while (!stop.get()) {
                // Publish what was added so far, minus the newest: those stay in the overlay.
                List<String> snapshot = new ArrayList<>(added);
                published.addAll(snapshot.subList(published.size(), snapshot.size()));
                source.swap(version++, published.subList(0, Math.max(0, published.size() - 20)));
              }
            });
    threads.add(watcher);
    threads.forEach(Thread::start);
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    Thread.sleep(1_500);
    stop.set(true);
    for (Thread thread : threads) {
      thread.join(10_000);
    }
    assertThat(lookups.get()).isGreaterThan(10_000);
    assertThat(source.current.version()).isGreaterThan(5); // the swaps did race the lookups
    assertThat(live.localAddsArrived()).isPositive();
    assertThat(falseNegatives.get()).isZero();
    // Every added key is either in the served version or still held.
    assertThat(added).allMatch(live::mightContain);
    assertThat(live.localAdds())
        .isEqualTo(
            (int) added.stream().filter(k -> !source.current.bits().mightContainString(k)).count());
  }

  @Test
  void heldStringKeysAreFoundThroughEveryEntryPointAndOthersAreNot() {
    LiveBloomFilter<String> live =
        filter(LiveKeyType.STRING, 100_000, BeforeFirstSnapshot.FAIL_CLOSED);
    source.swap(1, strings("served-1", "served-2"));
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      // ASCII, 2-, 3- and 4-byte UTF-8, and lengths on both sides of XXH64's 32-byte stripe.
      held.add(
          switch (i % 4) {
            case 0 -> "user-" + i + "@example.com";
            case 1 -> "ключ-" + i;
            case 2 -> "注文-" + i + "-".repeat(i % 40);
            default -> "\uD83D\uDE00-" + i;
          });
    }
    assertThat(live.addLocal(held)).isEqualTo(held.size()); // grows the table from its 64 slots
    List<String> absent = new ArrayList<>();
    for (String key : held) {
      absent.add(key + "!");
    }
    for (List<String> keys : List.of(held, absent)) {
      boolean expected = keys == held;
      boolean[] results = new boolean[keys.size()];
      assertThat(live.mightContainAll(keys.toArray(String[]::new), 0, keys.size(), results))
          .isEqualTo(expected ? keys.size() : 0);
      byte[] data = new byte[0];
      int[] offsets = new int[keys.size()];
      int[] lengths = new int[keys.size()];
      java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
      for (int i = 0; i < keys.size(); i++) {
        String key = keys.get(i);
        assertThat(live.mightContain(key)).as(key).isEqualTo(expected);
        assertThat(live.mightContainChars(new StringBuilder(key))).as(key).isEqualTo(expected);
        byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
        byte[] padded = new byte[utf8.length + 7]; // the key in the middle of a larger array
        System.arraycopy(utf8, 0, padded, 3, utf8.length);
        assertThat(live.mightContainUtf8(padded, 3, utf8.length)).as(key).isEqualTo(expected);
        ByteBuffer heap = ByteBuffer.wrap(padded, 3, utf8.length);
        assertThat(live.mightContainUtf8(heap)).as(key).isEqualTo(expected);
        assertThat(heap.position()).isEqualTo(3);
        ByteBuffer direct = ByteBuffer.allocateDirect(padded.length).put(padded);
        direct.position(3).limit(3 + utf8.length);
        assertThat(live.mightContainUtf8(direct.asReadOnlyBuffer())).as(key).isEqualTo(expected);
        offsets[i] = all.size();
        lengths[i] = utf8.length;
        all.writeBytes(utf8);
      }
      data = all.toByteArray();
      results = new boolean[keys.size()];
      assertThat(live.mightContainAllUtf8(data, offsets, lengths, 0, keys.size(), results))
          .isEqualTo(expected ? keys.size() : 0);
    }
  }

  @Test
  void heldLongKeysAreFoundThroughEveryEntryPointAndOthersAreNot() {
    LiveBloomFilter<Long> live = filter(LiveKeyType.LONG, 100_000, BeforeFirstSnapshot.FAIL_CLOSED);
    source.swap(1, longs(-1));
    long[] held = new long[10_000];
    for (int i = 0; i < held.length; i++) {
      held[i] = i * 0x9E3779B97F4A7C15L; // 0 among them: a fingerprint is never the empty slot
      assertThat(live.addLocal(held[i])).isTrue();
    }
    for (long offset : new long[] {0, 1}) {
      boolean expected = offset == 0;
      long[] keys = LongStream.of(held).map(k -> k + offset).toArray();
      Long[] boxed = LongStream.of(keys).boxed().toArray(Long[]::new);
      for (long key : keys) {
        assertThat(live.mightContain(key)).as("%d", key).isEqualTo(expected);
      }
      boolean[] results = new boolean[keys.length];
      assertThat(live.mightContainAllLongs(keys, 0, keys.length, results))
          .isEqualTo(expected ? keys.length : 0);
      assertThat(live.mightContainAll(boxed, 0, boxed.length, results))
          .isEqualTo(expected ? keys.length : 0);
    }
  }

  @Test
  void keysStayFoundAcrossSweepsThatShrinkTheFingerprintTable() {
    LiveBloomFilter<String> live =
        filter(LiveKeyType.STRING, 100_000, BeforeFirstSnapshot.FAIL_CLOSED);
    source.swap(1, strings("a"));
    List<String> first = new ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      first.add("first-" + i);
      live.addLocal("first-" + i);
    }
    live.addLocal("stays");
    source.swap(2, first); // all of them arrive: the table is rebuilt for the one key left
    assertThat(live.localAdds()).isEqualTo(1);
    assertThat(live.mightContain("stays")).isTrue();
    source.swap(3, strings("a")); // a version without them: the dropped keys are not held
    assertThat(first).noneMatch(live::mightContain);
    for (int i = 0; i < 5_000; i++) {
      live.addLocal("second-" + i); // grows again
    }
    assertThat(live.mightContain("stays")).isTrue();
    for (int i = 0; i < 5_000; i++) {
      assertThat(
              live.mightContainUtf8(
                  ("second-" + i).getBytes(StandardCharsets.UTF_8), 0, ("second-" + i).length()))
          .isTrue();
    }
  }

  @Test
  void lookupsOfOtherKeysAllocateNothingWhileTenThousandKeysAreHeld() {
    LiveBloomFilter<String> strings =
        filter(LiveKeyType.STRING, 100_000, BeforeFirstSnapshot.FAIL_CLOSED);
    source.swap(1, strings("served"));
    for (int i = 0; i < 10_000; i++) {
      strings.addLocal("user-" + i + "@example.com");
    }
    byte[][] utf8 = new byte[4096][];
    int[] offsets = new int[64];
    int[] lengths = new int[64];
    byte[] batch = new byte[64 * 40];
    for (int i = 0; i < utf8.length; i++) {
      utf8[i] = ("other-" + i + "@example.com").getBytes(StandardCharsets.UTF_8);
    }
    for (int i = 0; i < 64; i++) {
      System.arraycopy(utf8[i], 0, batch, i * 40, utf8[i].length);
      offsets[i] = i * 40;
      lengths[i] = utf8[i].length;
    }
    ByteBuffer direct = ByteBuffer.allocateDirect(64);
    boolean[] results = new boolean[64];
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long allocated = 0;
    int maybe = 0;
    for (int round = 0; round < 3; round++) { // the first two warm up (and JIT-compile)
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < 200_000; i++) {
        byte[] key = utf8[i & (utf8.length - 1)];
        maybe += strings.mightContainUtf8(key, 0, key.length) ? 1 : 0;
        direct.clear().put(key).flip();
        maybe += strings.mightContainUtf8(direct) ? 1 : 0;
        if ((i & 63) == 0) {
          maybe += strings.mightContainAllUtf8(batch, offsets, lengths, 0, 64, results);
        }
      }
      allocated = threads.getCurrentThreadAllocatedBytes() - before;
    }
    assertThat(maybe).isZero();
    assertThat(allocated)
        .as("bytes allocated by 400,000 lookups and 3,125 batches")
        .isLessThan(4096);

    LiveBloomFilter<Long> longs =
        filter(LiveKeyType.LONG, 100_000, BeforeFirstSnapshot.FAIL_CLOSED);
    source.swap(2, longs(-1));
    for (long i = 0; i < 10_000; i++) {
      longs.addLocal(i * 0x9E3779B97F4A7C15L);
    }
    long[] others = LongStream.range(0, 4096).map(i -> i * 0x9E3779B97F4A7C15L + 1).toArray();
    for (int round = 0; round < 3; round++) {
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < 20_000; i++) {
        maybe += longs.mightContainAllLongs(others, (i & 63) * 64, 64, results);
      }
      allocated = threads.getCurrentThreadAllocatedBytes() - before;
    }
    assertThat(maybe).isZero();
    assertThat(allocated).as("bytes allocated by 1,280,000 Long lookups").isLessThan(4096);
  }

  /** Looks up a writer's 50 newest keys again: some were dropped as their version arrived. */
  private static void lookUpAgain(
      LiveBloomFilter<String> live, List<String> mine, AtomicLong falseNegatives, AtomicLong n) {
    for (int j = Math.max(0, mine.size() - 50); j < mine.size(); j++) {
      if (!live.mightContain(mine.get(j))) {
        falseNegatives.incrementAndGet();
      }
      n.incrementAndGet();
    }
  }

  private <K> LiveBloomFilter<K> filter(
      LiveKeyType<K> keyType, int maxEntries, BeforeFirstSnapshot beforeFirst) {
    LocalAdds<K> localAdds = new LocalAdds<>(keyType, maxEntries, TTL, 256, nanos::get);
    localAdds.attach(source);
    source.listener = localAdds;
    ReaderCounters counters = new ReaderCounters();
    counters.attach(source);
    return new LiveBloomFilter<>("shop", "ids", keyType, beforeFirst, source, counters, localAdds);
  }

  private static BloomFilterBits strings(String... keys) {
    return strings(Arrays.asList(keys));
  }

  private static BloomFilterBits strings(Collection<String> keys) {
    // A false positive would drop a key before its version: at 1e-9 none occurs in these tests.
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(
            KeyType.STRING,
            BloomFilterSizing.forKeys(Math.max(1000, keys.size()), LiveBloomFilter.FIXED_FPP));
    keys.forEach(bits::putString);
    return bits.build();
  }

  private static BloomFilterBits longs(long... keys) {
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(
            KeyType.LONG, BloomFilterSizing.forKeys(1000, LiveBloomFilter.FIXED_FPP));
    LongStream.of(keys).forEach(bits::putLong);
    return bits.build();
  }

  /** Versions swapped in by the test the way {@link WatchLoop#install} does it. */
  private static final class HandSwapped implements SnapshotSource {
    volatile ServedSnapshot current;
    volatile LocalAdds<?> listener;
    // Runs once, inside the next serving() call after its value was read: a stall of the reader.
    volatile Runnable afterNextRead;

    void swap(long version, BloomFilterBits bits) {
      ServedSnapshot old = current;
      current = served(version, bits);
      listener.onUpdate(old == null ? LiveBloomFilter.NO_VERSION : old.version(), version, null);
    }

    void swap(long version, List<String> keys) {
      swap(version, strings(keys));
    }

    /** The watcher's periodic sweep. */
    void sweep() {
      listener.sweepServed();
    }

    private static ServedSnapshot served(long version, BloomFilterBits bits) {
      SnapshotEncoder.Result encoded;
      try {
        encoded = SnapshotEncoder.encode(bits, 1 << 20, (index, data, length, sha256) -> {});
      } catch (IOException e) {
        throw new AssertionError(e);
      }
      Manifest manifest = Manifest.of("ids", version, bits, 1, encoded, Instant.now());
      return new ServedSnapshot(new AnnouncedManifest(manifest, manifest.toJson(), null), bits);
    }

    @Override
    public ServedSnapshot serving() {
      ServedSnapshot read = current;
      Runnable stall = afterNextRead;
      if (stall != null) {
        afterNextRead = null;
        stall.run();
      }
      return read;
    }

    @Override
    public boolean awaitReady(Duration timeout) {
      return current != null;
    }

    @Override
    public long loads() {
      return 0;
    }

    @Override
    public long failures() {
      return 0;
    }

    @Override
    public void close() {}
  }
}
