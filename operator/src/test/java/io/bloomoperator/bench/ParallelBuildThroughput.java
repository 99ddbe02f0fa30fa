package io.bloomoperator.bench;

import com.sun.management.OperatingSystemMXBean;
import io.bloomoperator.assemble.AtomicOrBuild;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.BodySource;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.LineBlock;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * Build keys/s of the operator's build path on 1..T threads for N generated keys given as a text
 * body (cut into lines, parsed from the bytes, hashed, bits set), String keys ({@code product-0} …)
 * and Long keys ({@code 0} …): the split-block layout partitioned by block range (the operator's
 * build), the split-block layout with atomic ORs (the build before, {@link AtomicOrBuild}) and the
 * Guava layout (atomic ORs), side by side in one JVM; then the body alone (generating and cutting
 * it, no parsing or hashing), the bound the source sets. Each line also gives the cores the JVM
 * used over the build (process CPU time / wall time) and, for split-block, the payload's sha256
 * prefix, the same for every thread count and both builds.
 *
 * <p>Run (see docs/benchmarks.md): {@code java -Xmx640m -XX:+UseSerialGC -cp $CP
 * io.bloomoperator.bench.ParallelBuildThroughput 10000000 2 3}: keys, most threads, rounds.
 */
public final class ParallelBuildThroughput {

  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

  private ParallelBuildThroughput() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    int maxThreads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    for (int round = 0; round < rounds; round++) {
      for (KeyType type : KeyType.values()) {
        String prefix = type == KeyType.STRING ? "product-" : "";
        FilterBuilder.Request split =
            new FilterBuilder.Request(
                type, 0.01, n, 0, Long.MAX_VALUE, null, FilterFormat.SPLIT_BLOCK);
        FilterBuilder.Request guava = new FilterBuilder.Request(type, 0.01, n, 0, Long.MAX_VALUE);
        for (int threads = 1; threads <= maxThreads; threads++) {
          BuildWorkers workers = BuildWorkers.of(threads, 1);
          Run run = Run.start();
          FilterBuilder.Result ranges =
              new FilterBuilder(k -> {}, workers).build(BodySource.generated(prefix, n), split);
          run.report(type, "split-block, block ranges", threads, ranges.keys(), ranges.bits());

          run = Run.start();
          BloomFilterBits atomic =
              AtomicOrBuild.build(BodySource.generated(prefix, n), split, n, workers);
          run.report(type, "split-block, atomic ORs (before)", threads, n, atomic);

          run = Run.start();
          FilterBuilder.Result built =
              new FilterBuilder(k -> {}, workers).build(BodySource.generated(prefix, n), guava);
          run.report(type, "guava layout, atomic ORs", threads, built.keys(), null);
        }
        Run run = Run.start();
        long lines = sourceOnly(prefix, n);
        run.report(type, "source only (generate + cut lines)", 1, lines, null);
      }
    }
  }

  private static long sourceOnly(String prefix, long n) throws Exception {
    long[] lines = {0};
    BodySource.generated(prefix, n)
        .readKeys(
            new KeySink() {
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

  /** Wall and process CPU time from the start of one build. */
  private record Run(long wallStart, long cpuStart) {
    static Run start() {
      System.gc(); // the previous build's array, not this one's, should pay for its collection
      return new Run(System.nanoTime(), OS.getProcessCpuTime());
    }

    void report(KeyType type, String what, int threads, long keys, BloomFilterBits bits) {
      double seconds = (System.nanoTime() - wallStart) / 1e9;
      double cores = (OS.getProcessCpuTime() - cpuStart) / 1e9 / seconds;
      double rate = keys / seconds / 1e6;
      System.out.printf(
          Locale.ROOT,
          "%-6s %-36s threads %d  %,d keys  %6.2f s = %6.2f M keys/s  %5.2f cores  %6.2f M"
              + " keys/s per core busy%s%n",
          type,
          what,
          threads,
          keys,
          seconds,
          rate,
          cores,
          rate / cores,
          bits == null ? "" : "  sha256 " + SnapshotEncoder.sha256(bits).substring(0, 12));
    }
  }
}
