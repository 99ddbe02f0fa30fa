package io.bloomoperator.watch.bench;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.LocalSnapshots;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * What {@link LiveBloomFilter#mightContain} costs on top of the bare {@link BloomFilterBits}
 * lookup: the volatile read of the served snapshot and the lookup counters. One Long lookup per op,
 * 50 % present keys, 1 % FPP. Run with {@code -t 1} and {@code -t 2} (the counters are LongAdders:
 * two threads must not contend). The filter serves a local snapshot; its client points at a closed
 * port, so no API server takes part.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LiveLookupBenchmark {

  private static final int QUERIES = 1 << 20;

  @State(Scope.Benchmark)
  public static class Filters {
    @Param({"1000000"})
    public int n;

    BloomFilterBits bits;
    LiveBloomFilter<Long> live;
    long[] queries;
    Long[] boxedQueries; // boxed up front: the benchmark measures the lookup, not Long.valueOf
    private KubernetesClient client;
    private Path directory;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder builder =
          BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(n, 0.01));
      for (long key = 0; key < n; key++) {
        builder.putLong(key);
      }
      bits = builder.build();
      directory = Files.createTempDirectory("live-lookup-bench");
      LocalSnapshots.write(directory, "bench", "ids", bits, n);
      client =
          new KubernetesClientBuilder()
              .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
              .build();
      live =
          BloomFilterWatcher.builder(client, "bench", "ids", LiveKeyType.LONG)
              .localSnapshotDirectory(directory)
              .resync(Duration.ZERO)
              .retryBackoff(Duration.ofMinutes(1), Duration.ofMinutes(1))
              .start();
      if (!live.isReady()) {
        throw new IllegalStateException("local snapshot not served");
      }
      SplittableRandom random = new SplittableRandom(42);
      queries = new long[QUERIES];
      boxedQueries = new Long[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        queries[i] = random.nextBoolean() ? random.nextLong(n) : n + random.nextLong(1L << 40);
        boxedQueries[i] = queries[i];
      }
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
      live.close();
      client.close();
      try (var files = Files.walk(directory)) {
        files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  /** Each thread walks the queries from its own position. */
  @State(Scope.Thread)
  public static class Cursor {
    int next = (int) Thread.currentThread().getId() * 7919;
  }

  @Benchmark
  public boolean bits(Filters filters, Cursor cursor) {
    return filters.bits.mightContainLong(filters.queries[cursor.next++ & (QUERIES - 1)]);
  }

  @Benchmark
  public boolean live(Filters filters, Cursor cursor) {
    return filters.live.mightContain(filters.boxedQueries[cursor.next++ & (QUERIES - 1)]);
  }
}
