package io.bloomoperator.watch.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.LocalSnapshots;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter;
import org.apache.parquet.io.api.Binary;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Issue 20's lookup figures through the path applications use: Guava's {@code mightContain}; a
 * {@link LiveBloomFilter} serving the Guava layout and one serving the split-block layout, one key
 * per call ({@code mightContain}) and 64 per call ({@code mightContainAll}, time per key); and
 * parquet-column's {@code BlockSplitBloomFilter} holding the split-block bits, the independent
 * anchor. 50 % present / 50 % absent keys in random order, filters sized for n keys at 1 %. The
 * live filters serve a local snapshot; their client points at a closed port, so no API server takes
 * part.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class FormatLookupBenchmark {

  private static final int QUERIES = 1 << 20;
  private static final int BATCH = 64;

  /** What both key types share: two live filters, their directory and client, a cursor. */
  abstract static class Served {
    KubernetesClient client;
    Path directory;
    int next;

    void startClient() throws IOException {
      directory = Files.createTempDirectory("format-lookup-bench");
      client =
          new KubernetesClientBuilder()
              .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
              .build();
    }

    <K> LiveBloomFilter<K> serve(String name, BloomFilterBits bits, long n, LiveKeyType<K> type)
        throws IOException {
      LocalSnapshots.write(directory, "bench", name, bits, n);
      LiveBloomFilter<K> live =
          BloomFilterWatcher.builder(client, "bench", name, type)
              .localSnapshotDirectory(directory)
              .resync(Duration.ZERO)
              .retryBackoff(Duration.ofMinutes(1), Duration.ofMinutes(1))
              .start();
      if (!live.isReady()) {
        throw new IllegalStateException("local snapshot not served");
      }
      return live;
    }

    int nextIndex() {
      return next++ & (QUERIES - 1);
    }

    int nextBatch() {
      int from = next & (QUERIES - 1);
      next += BATCH;
      return from;
    }

    void stop(LiveBloomFilter<?>... filters) throws IOException {
      for (LiveBloomFilter<?> filter : filters) {
        filter.close();
      }
      client.close();
      try (var files = Files.walk(directory)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @State(Scope.Benchmark)
  public static class Strings extends Served {
    @Param({"1000000", "10000000"})
    public int n;

    BloomFilter<CharSequence> guava;
    LiveBloomFilter<String> guavaLayout;
    LiveBloomFilter<String> splitBlock;
    BlockSplitBloomFilter parquet;
    String[] queries;
    Binary[] binaries;
    boolean[] results = new boolean[BATCH];

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder layout =
          BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(n, 0.01));
      BloomFilterBits.Builder split =
          BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(n, 0.01));
      for (int i = 0; i < n; i++) {
        String key = present(i);
        layout.putString(key);
        split.putString(key);
      }
      BloomFilterBits layoutBits = layout.build();
      BloomFilterBits splitBits = split.build();
      guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(SnapshotEncoder.toByteArray(layoutBits)),
              Funnels.stringFunnel(StandardCharsets.UTF_8));
      parquet = new BlockSplitBloomFilter(SnapshotEncoder.toByteArray(splitBits));
      startClient();
      guavaLayout = serve("guava", layoutBits, n, LiveKeyType.STRING);
      splitBlock = serve("split", splitBits, n, LiveKeyType.STRING);
      SplittableRandom random = new SplittableRandom(42);
      queries = new String[QUERIES];
      binaries = new Binary[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        long index = random.nextLong(n);
        queries[i] = random.nextBoolean() ? present(index) : absent(index);
        binaries[i] = Binary.fromString(queries[i]);
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      stop(guavaLayout, splitBlock);
    }
  }

  @State(Scope.Benchmark)
  public static class Longs extends Served {
    @Param({"1000000", "10000000"})
    public int n;

    BloomFilter<Long> guava;
    LiveBloomFilter<Long> guavaLayout;
    LiveBloomFilter<Long> splitBlock;
    BlockSplitBloomFilter parquet;
    long[] queries;
    Long[] boxed; // boxed up front: the benchmark measures the lookup, not Long.valueOf
    boolean[] results = new boolean[BATCH];

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder layout =
          BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(n, 0.01));
      BloomFilterBits.Builder split =
          BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(n, 0.01));
      for (int i = 0; i < n; i++) {
        layout.putLong(mix(i));
        split.putLong(mix(i));
      }
      BloomFilterBits layoutBits = layout.build();
      BloomFilterBits splitBits = split.build();
      guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(SnapshotEncoder.toByteArray(layoutBits)),
              Funnels.longFunnel());
      parquet = new BlockSplitBloomFilter(SnapshotEncoder.toByteArray(splitBits));
      startClient();
      guavaLayout = serve("guava", layoutBits, n, LiveKeyType.LONG);
      splitBlock = serve("split", splitBits, n, LiveKeyType.LONG);
      SplittableRandom random = new SplittableRandom(43);
      queries = new long[QUERIES];
      boxed = new Long[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        long index = random.nextLong(n);
        queries[i] = random.nextBoolean() ? mix(index) : mix(index) ^ 0x5555_5555_5555_5555L;
        boxed[i] = queries[i];
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      stop(guavaLayout, splitBlock);
    }
  }

  /** Present key {@code i}: ~30 ASCII chars, like a user id or e-mail. */
  static String present(long i) {
    return "user-" + Long.toHexString(mix(i)) + "@example.com";
  }

  /** A key never inserted (another prefix and domain). */
  static String absent(long i) {
    return "anon-" + Long.toHexString(mix(~i)) + "@example.org";
  }

  /** SplitMix64's finaliser: a bijection, so distinct i give distinct keys. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  @Benchmark
  public boolean stringGuava(Strings s) {
    return s.guava.mightContain(s.queries[s.nextIndex()]);
  }

  @Benchmark
  public boolean stringLiveGuavaLayout(Strings s) {
    return s.guavaLayout.mightContain(s.queries[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int stringLiveGuavaLayoutBatch(Strings s) {
    return s.guavaLayout.mightContainAll(s.queries, s.nextBatch(), BATCH, s.results);
  }

  @Benchmark
  public boolean stringLiveSplitBlock(Strings s) {
    return s.splitBlock.mightContain(s.queries[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int stringLiveSplitBlockBatch(Strings s) {
    return s.splitBlock.mightContainAll(s.queries, s.nextBatch(), BATCH, s.results);
  }

  @Benchmark
  public boolean stringParquet(Strings s) {
    return s.parquet.findHash(s.parquet.hash(s.binaries[s.nextIndex()]));
  }

  /** The hash alone (XXH64 of the key's UTF-8 bytes): what a String lookup pays before probing. */
  @Benchmark
  public long stringHashOnly(Strings s) {
    return SplitBlockBits.hashString(s.queries[s.nextIndex()]);
  }

  @Benchmark
  public boolean longGuava(Longs s) {
    return s.guava.mightContain(s.boxed[s.nextIndex()]);
  }

  @Benchmark
  public boolean longLiveGuavaLayout(Longs s) {
    return s.guavaLayout.mightContain(s.boxed[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int longLiveGuavaLayoutBatch(Longs s) {
    return s.guavaLayout.mightContainAllLongs(s.queries, s.nextBatch(), BATCH, s.results);
  }

  @Benchmark
  public boolean longLiveSplitBlock(Longs s) {
    return s.splitBlock.mightContain(s.boxed[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int longLiveSplitBlockBatch(Longs s) {
    return s.splitBlock.mightContainAllLongs(s.queries, s.nextBatch(), BATCH, s.results);
  }

  /** The hash alone (XXH64 of the 8 little-endian bytes). */
  @Benchmark
  public long longHashOnly(Longs s) {
    return SplitBlockBits.hashLong(s.queries[s.nextIndex()]);
  }

  @Benchmark
  public boolean longParquet(Longs s) {
    return s.parquet.findHash(s.parquet.hash(s.queries[s.nextIndex()]));
  }
}
