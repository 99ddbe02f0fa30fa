package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotRefusedException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The watch loop alone, without an API server: a fake feed delivers manifest events and a fake
 * chunk source serves (or fails) chunks, so load, same, refuse, retry and delete are driven step by
 * step.
 */
class WatchLoopTest {

  private static final String NS = "shop";
  private static final String FILTER = "ids";
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final WatcherThread thread = new WatcherThread("watch-loop-test");
  private final FakeFeed feed = new FakeFeed();
  private final FakeChunks chunks = new FakeChunks();
  private final Recorder listener = new Recorder();
  private final AtomicInteger jitterDraws = new AtomicInteger();
  private WatchLoop loop;

  @AfterEach
  void close() {
    if (loop != null) {
      loop.close();
    }
  }

  @Test
  void loadsAnAnnouncedSnapshotAndSwapsItIn() throws Exception {
    BloomFilterBits bits = bits("a");
    start();
    feed.announce(publish(1, bits));
    assertThat(loop.awaitReady(WAIT)).isTrue();
    assertThat(loop.serving().version()).isEqualTo(1);
    assertThat(loop.serving().bits()).isEqualTo(bits);
    assertThat(listener.updates).containsExactly(List.of(LiveBloomFilter.NO_VERSION, 1L));
    assertThat(loop.loads()).isEqualTo(1);
  }

  @Test
  void theSameAnnouncementAgainFetchesNothing() throws Exception {
    start();
    ConfigMap v1 = publish(1, bits("a"));
    feed.announce(v1);
    assertThat(loop.awaitReady(WAIT)).isTrue();
    int fetched = chunks.fetches.get();
    feed.announce(v1);
    feed.announce(publish(2, bits("b")));
    await().atMost(WAIT).until(() -> loop.serving().version() == 2);
    assertThat(loop.loads()).isEqualTo(2); // v1 once, v2 once: the repeat changed nothing
    assertThat(chunks.fetches.get() - fetched).isEqualTo(chunks.chunksOf(2));
  }

  @Test
  void aRefusedManifestFetchesNothingAndKeepsServing() throws Exception {
    start();
    feed.announce(publish(1, bits("a")));
    assertThat(loop.awaitReady(WAIT)).isTrue();
    int fetched = chunks.fetches.get();
    Manifest foreign = manifest("other-filter", 2, bits("b"));
    feed.announce(SnapshotConfigMaps.manifest(NS, FILTER, foreign.toJson(), null, null));
    await().atMost(WAIT).until(() -> listener.failures.size() == 1);
    assertThat(listener.failures.get(0))
        .isInstanceOfSatisfying(
            SnapshotRefusedException.class,
            e -> assertThat(e.reason()).isEqualTo(LoadFailureReason.WRONG_FILTER));
    assertThat(chunks.fetches.get()).isEqualTo(fetched);
    assertThat(loop.serving().version()).isEqualTo(1);
    assertThat(loop.failures()).isEqualTo(1);
  }

  @Test
  void anUnreadableManifestIsReportedWithoutAVersion() throws Exception {
    start();
    feed.announce(SnapshotConfigMaps.manifest(NS, FILTER, "{not json", null, null));
    await().atMost(WAIT).until(() -> listener.failures.size() == 1);
    assertThat(listener.failedVersions).containsExactly(LiveBloomFilter.NO_VERSION);
    assertThat(loop.serving()).isNull();
  }

  @Test
  void aFailedLoadIsRetriedWithBackoffUntilItSucceeds() throws Exception {
    start();
    chunks.failNext(2);
    feed.announce(publish(1, bits("a")));
    assertThat(loop.awaitReady(WAIT)).isTrue();
    assertThat(listener.failures).hasSize(2).allMatch(e -> e instanceof IOException);
    assertThat(jitterDraws.get()).isEqualTo(2); // one backoff per failed attempt
    assertThat(loop.failures()).isEqualTo(2);
    assertThat(loop.serving().version()).isEqualTo(1);
  }

  @Test
  void aDeletedManifestStopsTheRetriesAndKeepsServing() throws Exception {
    start();
    feed.announce(publish(1, bits("a")));
    assertThat(loop.awaitReady(WAIT)).isTrue();
    chunks.failNext(Integer.MAX_VALUE);
    feed.announce(publish(2, bits("b")));
    await().atMost(WAIT).until(() -> listener.failures.size() >= 2); // retrying
    feed.delete();
    int failuresAtDelete = awaitQuiet();
    Thread.sleep(200); // ten backoff periods: a retry still scheduled would have run
    assertThat(listener.failures).hasSize(failuresAtDelete);
    assertThat(loop.serving().version()).isEqualTo(1);
  }

  @Test
  void theResyncPollLoadsWhatTheWatchMissed() throws Exception {
    feed.stored = publish(1, bits("a"));
    start(Duration.ofMillis(20));
    assertThat(loop.awaitReady(WAIT)).isTrue(); // no event was delivered: the poll found it
    assertThat(loop.serving().version()).isEqualTo(1);
  }

  @Test
  void aReaderInTheCanaryShareServesTheCanary() throws Exception {
    start("app-8"); // bucket 8: in a 10 % share
    feed.announce(withCanary(publish(1, bits("a")), 2, bits("b"), 10));
    await().atMost(WAIT).until(() -> loop.serving() != null && loop.serving().version() == 2);
    assertThat(listener.updates).containsExactly(List.of(LiveBloomFilter.NO_VERSION, 2L));
  }

  @Test
  void aReaderOutsideTheShareServesTheStableVersionAndFetchesNoCanaryChunk() throws Exception {
    start("app-1"); // bucket 65
    feed.announce(withCanary(publish(1, bits("a")), 2, bits("b"), 10));
    assertThat(loop.awaitReady(WAIT)).isTrue();
    awaitQuiet();
    assertThat(loop.serving().version()).isEqualTo(1);
    assertThat(chunks.fetches.get()).isEqualTo(chunks.chunksOf(1));
  }

  @Test
  void aReaderWithoutPodNameIgnoresEveryCanary() throws Exception {
    start((String) null);
    feed.announce(withCanary(publish(1, bits("a")), 2, bits("b"), 100));
    assertThat(loop.awaitReady(WAIT)).isTrue();
    awaitQuiet();
    assertThat(loop.serving().version()).isEqualTo(1);
  }

  @Test
  void aRefusedCanaryIsReportedOnceAndTheStableVersionServed() throws Exception {
    start("app-8");
    ConfigMap stable = publish(1, bits("a"));
    Manifest foreign = manifest("other-filter", 2, bits("b"));
    ConfigMap refused = SnapshotConfigMaps.withCanary(stable, foreign.toJson(), null, 10);
    feed.announce(refused);
    assertThat(loop.awaitReady(WAIT)).isTrue();
    feed.announce(refused); // a resync: no second report
    awaitQuiet();
    assertThat(loop.serving().version()).isEqualTo(1);
    assertThat(listener.failedVersions).containsExactly(2L);
    assertThat(listener.failures.get(0))
        .isInstanceOfSatisfying(
            SnapshotRefusedException.class,
            e -> assertThat(e.reason()).isEqualTo(LoadFailureReason.WRONG_FILTER));
  }

  @Test
  void promotingTheCanaryLoadsNothingNewForItsReaders() throws Exception {
    start("app-8");
    BloomFilterBits next = bits("b");
    feed.announce(withCanary(publish(1, bits("a")), 2, next, 10));
    await().atMost(WAIT).until(() -> loop.serving() != null && loop.serving().version() == 2);
    int fetched = chunks.fetches.get();
    feed.announce(SnapshotConfigMaps.manifest(NS, chunks.manifestOf(2), null, null));
    awaitQuiet();
    assertThat(loop.serving().version()).isEqualTo(2);
    assertThat(chunks.fetches.get()).isEqualTo(fetched);
    assertThat(loop.loads()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- fixtures

  private void start() {
    start(Duration.ZERO);
  }

  private void start(String podName) {
    start(Duration.ZERO, podName);
  }

  private void start(Duration resync) {
    start(resync, null);
  }

  private void start(Duration resync, String podName) {
    Acceptance acceptance =
        new Acceptance(
            NS, FILTER, KeyType.STRING, SnapshotLimits.forThisHeap(), TrustedKeys.none(), null);
    Backoff backoff =
        new Backoff(
            Duration.ofMillis(20),
            Duration.ofMillis(20),
            () -> {
              jitterDraws.incrementAndGet();
              return 1.0;
            });
    loop =
        new WatchLoop(
            acceptance,
            feed,
            new SnapshotFetcher(chunks),
            null,
            new Pacing(thread, backoff, resync, Clock.systemUTC()),
            listener,
            podName);
    loop.start();
  }

  /** Waits until the watcher thread has run everything queued; returns the failures so far. */
  private int awaitQuiet() {
    thread.callAndWait(() -> null);
    return listener.failures.size();
  }

  private static BloomFilterBits bits(String prefix) {
    return TestKeys.stringFilter(5_000, TestKeys.strings(prefix, 2_000));
  }

  /**
   * Puts the chunks of {@code bits} as {@code version} into the fake store; returns its manifest.
   */
  private ConfigMap publish(long version, BloomFilterBits bits) throws IOException {
    Manifest manifest = chunks.put(version, bits);
    feed.stored = SnapshotConfigMaps.manifest(NS, manifest, null, null);
    return feed.stored;
  }

  /** {@code stable} with the chunks of {@code bits} as canary {@code version} for a share. */
  private ConfigMap withCanary(ConfigMap stable, long version, BloomFilterBits bits, int percent)
      throws IOException {
    Manifest canary = chunks.put(version, bits);
    feed.stored = SnapshotConfigMaps.withCanary(stable, canary.toJson(), null, percent);
    return feed.stored;
  }

  private static Manifest manifest(String filter, long version, BloomFilterBits bits)
      throws IOException {
    SnapshotEncoder.Result encoded = SnapshotEncoder.encode(bits, 1_000, (i, d, l, s) -> {});
    return Manifest.of(filter, version, bits, 2_000, encoded, Instant.now());
  }

  /** Manifest events delivered by hand, on the watcher thread as the informer does. */
  private final class FakeFeed implements ManifestFeed {
    volatile ConfigMap stored;
    private Consumer<ConfigMap> onChanged;
    private Runnable onDeleted;

    @Override
    public void start(Consumer<ConfigMap> onChanged, Runnable onDeleted) {
      this.onChanged = onChanged;
      this.onDeleted = onDeleted;
    }

    void announce(ConfigMap configMap) {
      thread.execute(() -> onChanged.accept(configMap));
    }

    void delete() {
      stored = null;
      thread.execute(onDeleted);
    }

    @Override
    public ConfigMap read() {
      return stored;
    }

    @Override
    public void close() {}
  }

  /** Chunks by name in memory; can fail the next n fetches as a lost API server would. */
  private static final class FakeChunks implements SnapshotDecoder.ChunkSource {
    final AtomicInteger fetches = new AtomicInteger();
    private final AtomicInteger failures = new AtomicInteger();
    private final Map<String, byte[]> byName = new ConcurrentHashMap<>();
    private final Map<Long, Integer> chunkCounts = new ConcurrentHashMap<>();
    private final Map<Long, Manifest> manifests = new ConcurrentHashMap<>();

    Manifest put(long version, BloomFilterBits bits) throws IOException {
      List<byte[]> written = new CopyOnWriteArrayList<>();
      SnapshotEncoder.Result encoded =
          SnapshotEncoder.encode(
              bits, 1_000, (index, data, length, sha) -> written.add(Arrays.copyOf(data, length)));
      Manifest manifest = Manifest.of(FILTER, version, bits, 2_000, encoded, Instant.now());
      for (int i = 0; i < written.size(); i++) {
        byName.put(manifest.chunks().get(i).name(), written.get(i));
      }
      chunkCounts.put(version, written.size());
      manifests.put(version, manifest);
      return manifest;
    }

    Manifest manifestOf(long version) {
      return manifests.get(version);
    }

    int chunksOf(long version) {
      return chunkCounts.get(version);
    }

    void failNext(int count) {
      failures.set(count);
    }

    @Override
    public byte[] load(int index, Manifest.ChunkRef ref) throws IOException {
      if (failures.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0) {
        throw new IOException("simulated: chunk " + ref.name() + " unavailable");
      }
      fetches.incrementAndGet();
      byte[] data = byName.get(ref.name());
      if (data == null) {
        throw new IOException("no chunk " + ref.name());
      }
      return data;
    }
  }

  /** Records what the listeners are told. */
  private static final class Recorder implements BloomFilterListener {
    final List<List<Long>> updates = new CopyOnWriteArrayList<>();
    final List<Exception> failures = new CopyOnWriteArrayList<>();
    final List<Long> failedVersions = new CopyOnWriteArrayList<>();

    @Override
    public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
      updates.add(List.of(oldVersion, newVersion));
    }

    @Override
    public void onFailure(long version, Exception exception) {
      failures.add(exception);
      failedVersions.add(version);
    }
  }
}
