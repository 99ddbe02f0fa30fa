package io.bloomoperator.bench;

import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.assemble.ParallelFill;
import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.source.BodySource;
import io.bloomoperator.source.LineBlock;
import io.bloomoperator.source.LineParser;
import java.util.Locale;

/**
 * Build keys/s of the operator's build path on 1..T threads for N generated String keys given as a
 * text body (split into lines, parsed from the bytes, hashed, bits set), Guava layout; then the
 * same body into a split-block filter through {@link SplitBlockBits.Builder#concurrent()}, and the
 * body alone (generating and splitting it, no hashing) as the bound the source sets.
 *
 * <p>Run (see docs/benchmarks.md): {@code mvn -q -pl operator test-compile exec:exec
 * -Dexec.executable=java -Dexec.classpathScope=test "-Dexec.args=-Xmx256m -cp %classpath
 * io.bloomoperator.bench.ParallelBuildThroughput 10000000 2"}.
 */
public final class ParallelBuildThroughput {

  private ParallelBuildThroughput() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    int maxThreads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    FilterBuilder.Request request =
        new FilterBuilder.Request(KeyType.STRING, 0.01, n, 0, Long.MAX_VALUE);
    for (int round = 0; round < 3; round++) {
      for (int threads = 1; threads <= maxThreads; threads++) {
        FilterBuilder builder = new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1));
        long start = System.nanoTime();
        FilterBuilder.Result result = builder.build(BodySource.generated("product-", n), request);
        report("guava layout", threads, result.keys(), start);
      }
      for (int threads = 1; threads <= maxThreads; threads++) {
        long start = System.nanoTime();
        long keys = splitBlock(n, threads);
        report("split-block", threads, keys, start);
      }
      long start = System.nanoTime();
      long lines = sourceOnly(n);
      report("source only (generate + split lines)", 1, lines, start);
    }
  }

  /** The same body into a split-block filter at 1 %, through the same parallel fill. */
  private static long splitBlock(long n, int threads) throws Exception {
    SplitBlockBits.Builder bits =
        SplitBlockBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(n, 0.01));
    KeyInserter inserter = bits.concurrent();
    LineParser counts =
        ParallelFill.insertAll(
            BodySource.generated("product-", n),
            KeyType.STRING,
            0,
            inserter,
            BuildWorkers.of(threads, 1));
    bits.build();
    return counts.keys();
  }

  private static long sourceOnly(long n) throws Exception {
    long[] lines = {0};
    BodySource.generated("product-", n)
        .readKeys(
            new io.bloomoperator.source.KeySink() {
              @Override
              public void line(String rawLine) {}

              @Override
              public void lines(LineBlock block) {
                lines[0] += block.count();
              }

              @Override
              public void value(String key) {}

              @Override
              public void value(long key) {}

              @Override
              public void nullValue() {}
            });
    return lines[0];
  }

  private static void report(String what, int threads, long keys, long start) {
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "%-40s threads %d  %,d keys  %.2f s = %.2f M keys/s%n",
        what,
        threads,
        keys,
        seconds,
        keys / seconds / 1e6);
  }
}
