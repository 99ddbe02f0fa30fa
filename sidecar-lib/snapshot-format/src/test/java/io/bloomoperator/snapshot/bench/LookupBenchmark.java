package io.bloomoperator.snapshot.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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

/**
 * One lookup per op, 50% present / 50% absent keys in random order, filters sized for n keys at 1%.
 * Ours and Guava hold the very same bits (Guava reads our payload), so the work differs only in
 * code.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class LookupBenchmark {

  private static final int QUERIES = 1 << 20; // more than fits in cache: no replaying the same keys

  @State(Scope.Benchmark)
  public static class StringFilters {
    @Param({"1000000", "10000000"})
    public int n;

    BloomFilterBits ours;
    BloomFilter<CharSequence> guava;
    String[] queries;
    int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder builder =
          BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(n, 0.01));
      for (int i = 0; i < n; i++) {
        builder.putString(Keys.present(i));
      }
      ours = builder.build();
      guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(SnapshotEncoder.toByteArray(ours)),
              Funnels.stringFunnel(StandardCharsets.UTF_8));
      long[] indexes = Keys.queryIndexes(QUERIES, n, 42);
      queries = new String[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        queries[i] = indexes[i] >= 0 ? Keys.present(indexes[i]) : Keys.absent(~indexes[i]);
      }
    }

    String nextKey() {
      return queries[next++ & (QUERIES - 1)];
    }
  }

  @State(Scope.Benchmark)
  public static class LongFilters {
    @Param({"1000000", "10000000"})
    public int n;

    BloomFilterBits ours;
    BloomFilter<Long> guava;
    long[] queries;
    int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder builder =
          BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(n, 0.01));
      for (int i = 0; i < n; i++) {
        builder.putLong(Keys.presentLong(i));
      }
      ours = builder.build();
      guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(SnapshotEncoder.toByteArray(ours)), Funnels.longFunnel());
      long[] indexes = Keys.queryIndexes(QUERIES, n, 43);
      queries = new long[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        queries[i] = indexes[i] >= 0 ? Keys.presentLong(indexes[i]) : Keys.absentLong(~indexes[i]);
      }
    }

    long nextKey() {
      return queries[next++ & (QUERIES - 1)];
    }
  }

  @Benchmark
  public boolean stringOurs(StringFilters s) {
    return s.ours.mightContainString(s.nextKey());
  }

  @Benchmark
  public boolean stringGuava(StringFilters s) {
    return s.guava.mightContain(s.nextKey());
  }

  @Benchmark
  public boolean longOurs(LongFilters s) {
    return s.ours.mightContainLong(s.nextKey());
  }

  @Benchmark
  public boolean longGuava(LongFilters s) {
    return s.guava.mightContain(s.nextKey()); // boxes, as every Guava Long caller must
  }
}
