package io.bloomoperator.snapshot.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Builds a whole filter for 10M keys at 1% FPP (12 MB) per op, one thread, keys already in memory.
 * Scores are per key (ns/key); keys/s = 1e9 / score. Guava gets the same shape (numLongs, k) via
 * {@code create}, which it would pick itself for 10M keys at 1% (a hair smaller than ours).
 */
@BenchmarkMode(Mode.SingleShotTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2)
@Measurement(iterations = 3)
@OperationsPerInvocation(BuildBenchmark.KEYS)
@State(Scope.Benchmark)
public class BuildBenchmark {

  static final int KEYS = 10_000_000;

  String[] stringKeys;
  long[] longKeys;
  BloomFilterSizing sizing;

  @Setup(Level.Trial)
  public void setUp() {
    sizing = BloomFilterSizing.forKeys(KEYS, 0.01);
    stringKeys = new String[KEYS];
    longKeys = new long[KEYS];
    for (int i = 0; i < KEYS; i++) {
      stringKeys[i] = Keys.present(i);
      longKeys[i] = Keys.presentLong(i);
    }
  }

  @Benchmark
  public BloomFilterBits stringOurs() {
    BloomFilterBits.Builder bits = BloomFilterBits.builder(KeyType.STRING, sizing);
    for (String key : stringKeys) {
      bits.putString(key);
    }
    return bits.build();
  }

  @Benchmark
  public BloomFilter<CharSequence> stringGuava() {
    BloomFilter<CharSequence> filter =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), KEYS, 0.01);
    for (String key : stringKeys) {
      filter.put(key);
    }
    return filter;
  }

  @Benchmark
  public BloomFilterBits longOurs() {
    BloomFilterBits.Builder bits = BloomFilterBits.builder(KeyType.LONG, sizing);
    for (long key : longKeys) {
      bits.putLong(key);
    }
    return bits.build();
  }

  @Benchmark
  public BloomFilter<Long> longGuava() {
    BloomFilter<Long> filter = BloomFilter.create(Funnels.longFunnel(), KEYS, 0.01);
    for (long key : longKeys) {
      filter.put(key);
    }
    return filter;
  }
}
