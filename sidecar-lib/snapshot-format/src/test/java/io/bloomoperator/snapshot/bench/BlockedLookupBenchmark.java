package io.bloomoperator.snapshot.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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

/**
 * Lookups side by side in one run: Guava, ours in Guava's layout, ours split-block (one key per
 * call and batched) and Apache Parquet's {@code BlockSplitBloomFilter} as an independent blocked
 * anchor. 50 % present / 50 % absent keys in random order, every filter sized for n keys at 1 %
 * (Parquet's holds our split-block bits, so the two blocked rows differ only in code). The batched
 * rows report time per key.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class BlockedLookupBenchmark {

  private static final int QUERIES = 1 << 20;
  private static final int BATCH = 64;

  @State(Scope.Benchmark)
  public static class StringFilters {
    @Param({"1000000", "10000000"})
    public int n;

    BloomFilter<CharSequence> guava;
    BloomFilterBits guavaLayout;
    SplitBlockBits blocked;
    BlockSplitBloomFilter parquet;
    String[] queries;
    Binary[] binaries;
    boolean[] results = new boolean[BATCH];
    int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder layout =
          BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(n, 0.01));
      SplitBlockBits.Builder split =
          SplitBlockBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(n, 0.01));
      for (int i = 0; i < n; i++) {
        String key = Keys.present(i);
        layout.putString(key);
        split.putString(key);
      }
      guavaLayout = layout.build();
      guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(SnapshotEncoder.toByteArray(guavaLayout)),
              Funnels.stringFunnel(StandardCharsets.UTF_8));
      blocked = split.build();
      parquet = new BlockSplitBloomFilter(blocked.toByteArray());
      long[] indexes = Keys.queryIndexes(QUERIES, n, 42);
      queries = new String[QUERIES];
      binaries = new Binary[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        queries[i] = indexes[i] >= 0 ? Keys.present(indexes[i]) : Keys.absent(~indexes[i]);
        binaries[i] = Binary.fromString(queries[i]);
      }
    }

    int nextIndex() {
      return next++ & (QUERIES - 1);
    }

    int nextBatch() {
      int from = next & (QUERIES - 1);
      next += BATCH;
      return from;
    }
  }

  @State(Scope.Benchmark)
  public static class LongFilters {
    @Param({"1000000", "10000000"})
    public int n;

    BloomFilter<Long> guava;
    BloomFilterBits guavaLayout;
    SplitBlockBits blocked;
    BlockSplitBloomFilter parquet;
    long[] queries;
    boolean[] results = new boolean[BATCH];
    int next;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      BloomFilterBits.Builder layout =
          BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(n, 0.01));
      SplitBlockBits.Builder split =
          SplitBlockBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(n, 0.01));
      for (int i = 0; i < n; i++) {
        long key = Keys.presentLong(i);
        layout.putLong(key);
        split.putLong(key);
      }
      guavaLayout = layout.build();
      guava =
          BloomFilter.readFrom(
              new ByteArrayInputStream(SnapshotEncoder.toByteArray(guavaLayout)),
              Funnels.longFunnel());
      blocked = split.build();
      parquet = new BlockSplitBloomFilter(blocked.toByteArray());
      long[] indexes = Keys.queryIndexes(QUERIES, n, 43);
      queries = new long[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        queries[i] = indexes[i] >= 0 ? Keys.presentLong(indexes[i]) : Keys.absentLong(~indexes[i]);
      }
    }

    int nextIndex() {
      return next++ & (QUERIES - 1);
    }

    int nextBatch() {
      int from = next & (QUERIES - 1);
      next += BATCH;
      return from;
    }
  }

  @Benchmark
  public boolean stringGuava(StringFilters s) {
    return s.guava.mightContain(s.queries[s.nextIndex()]);
  }

  @Benchmark
  public boolean stringGuavaLayout(StringFilters s) {
    return s.guavaLayout.mightContainString(s.queries[s.nextIndex()]);
  }

  @Benchmark
  public boolean stringSplitBlock(StringFilters s) {
    return s.blocked.mightContainString(s.queries[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public boolean[] stringSplitBlockBatch(StringFilters s) {
    s.blocked.mightContainStrings(s.queries, s.nextBatch(), BATCH, s.results);
    return s.results;
  }

  @Benchmark
  public boolean stringParquet(StringFilters s) {
    return s.parquet.findHash(s.parquet.hash(s.binaries[s.nextIndex()]));
  }

  @Benchmark
  public boolean longGuava(LongFilters s) {
    return s.guava.mightContain(s.queries[s.nextIndex()]); // boxes, as every Guava caller must
  }

  @Benchmark
  public boolean longGuavaLayout(LongFilters s) {
    return s.guavaLayout.mightContainLong(s.queries[s.nextIndex()]);
  }

  @Benchmark
  public boolean longSplitBlock(LongFilters s) {
    return s.blocked.mightContainLong(s.queries[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public boolean[] longSplitBlockBatch(LongFilters s) {
    s.blocked.mightContainLongs(s.queries, s.nextBatch(), BATCH, s.results);
    return s.results;
  }

  @Benchmark
  public boolean longParquet(LongFilters s) {
    return s.parquet.findHash(s.parquet.hash(s.queries[s.nextIndex()]));
  }
}
