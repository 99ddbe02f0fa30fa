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
 * What the local-add overlay ({@link LiveBloomFilter#addLocal}) costs lookups of other keys, side
 * by side: {@code overlay} {@code none} (local adds off: the lookup path skips the overlay), {@code
 * empty} (on, nothing held: the default state) and {@code 10000} (10,000 keys held, none of them
 * looked up). {@code present} looks up keys of the snapshot (the overlay is never consulted),
 * {@code absent} keys neither in the snapshot nor held (the overlay is consulted when the bits
 * answer "absent"). Same filter and serving as {@link LiveLookupBenchmark}: 1M Long keys at 1 %, a
 * local snapshot, a client pointing at a closed port.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LocalAddsLookupBenchmark {

  private static final int QUERIES = 1 << 20;
  private static final int N = 1_000_000;

  @State(Scope.Benchmark)
  public static class Filters {
    @Param({"none", "empty", "10000"})
    public String overlay;

    LiveBloomFilter<Long> live;
    Long[] present; // boxed up front: the benchmark measures the lookup, not Long.valueOf
    Long[] absent;
    private KubernetesClient client;
    private Path directory;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder builder =
          BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(N, 0.01));
      for (long key = 0; key < N; key++) {
        builder.putLong(key);
      }
      BloomFilterBits bits = builder.build();
      directory = Files.createTempDirectory("local-adds-bench");
      LocalSnapshots.write(directory, "bench", "ids", bits, N);
      client =
          new KubernetesClientBuilder()
              .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build())
              .build();
      live =
          BloomFilterWatcher.builder(client, "bench", "ids", LiveKeyType.LONG)
              .localSnapshotDirectory(directory)
              .resync(Duration.ZERO)
              .retryBackoff(Duration.ofMinutes(1), Duration.ofMinutes(1))
              .readerReports(false)
              .localAdds(
                  overlay.equals("none") ? 0 : BloomFilterWatcher.DEFAULT_LOCAL_ADDS_MAX_ENTRIES,
                  Duration.ofHours(1))
              .start();
      if (!live.isReady()) {
        throw new IllegalStateException("local snapshot not served");
      }
      if (overlay.equals("10000")) {
        for (long key = -1; key >= -10_000; key--) { // never looked up
          live.addLocal(key);
        }
      }
      SplittableRandom random = new SplittableRandom(42);
      present = new Long[QUERIES];
      absent = new Long[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        present[i] = random.nextLong(N);
        absent[i] = N + random.nextLong(1L << 40);
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
  public boolean present(Filters filters, Cursor cursor) {
    return filters.live.mightContain(filters.present[cursor.next++ & (QUERIES - 1)]);
  }

  @Benchmark
  public boolean absent(Filters filters, Cursor cursor) {
    return filters.live.mightContain(filters.absent[cursor.next++ & (QUERIES - 1)]);
  }
}
