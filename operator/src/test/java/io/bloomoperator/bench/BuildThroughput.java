package io.bloomoperator.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.source.GeneratedSource;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Locale;

/**
 * Build throughput and peak heap of the operator's build path (line parsing, hashing, bit setting)
 * and of encoding the result into Base64 chunks as a publish does, for N generated String keys;
 * Guava's own {@code put} of the same keys is timed beside it.
 *
 * <p>Run (see docs/benchmarks.md): {@code mvn -q -pl operator test-compile exec:exec
 * -Dexec.executable=java -Dexec.classpathScope=test "-Dexec.args=-Xmx64m -cp %classpath
 * io.bloomoperator.bench.BuildThroughput 10000000"}. A heap limit far below the key list's size
 * proves that the keys are streamed, not held.
 */
public final class BuildThroughput {

  private BuildThroughput() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
    double fpp = 0.01;
    FilterBuilder builder = new FilterBuilder();
    FilterBuilder.Request request =
        new FilterBuilder.Request(KeyType.STRING, fpp, n, 0, Long.MAX_VALUE);

    // Warm-up on a smaller set so the JIT has compiled the hot path.
    builder.build(new GeneratedSource("product-", Math.min(n, 1_000_000)), request);

    System.gc();
    HeapPeak.reset();
    long start = System.nanoTime();
    FilterBuilder.Result result = builder.build(new GeneratedSource("product-", n), request);
    double buildSeconds = (System.nanoTime() - start) / 1e9;
    long buildPeak = HeapPeak.bytes();

    HeapPeak.reset();
    start = System.nanoTime();
    long[] base64Chars = {0};
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(
            result.bits(),
            1_000_000,
            (index, data, length, sha) ->
                base64Chars[0] +=
                    Base64.getEncoder()
                        .encodeToString(java.util.Arrays.copyOf(data, length))
                        .length());
    double encodeSeconds = (System.nanoTime() - start) / 1e9;
    long encodePeak = HeapPeak.bytes();

    BloomFilter<CharSequence> warm =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), 1_000_000, fpp);
    for (long i = 0; i < 1_000_000; i++) {
      warm.put("product-" + i);
    }
    BloomFilter<CharSequence> guava =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, fpp);
    start = System.nanoTime();
    for (long i = 0; i < n; i++) {
      guava.put("product-" + i);
    }
    double guavaSeconds = (System.nanoTime() - start) / 1e9;

    long bitArray = result.bits().numBits() / 8;
    System.out.printf(
        Locale.ROOT,
        "keys                      %,d (%,d bits, k=%d, bit array %.1f MB)%n",
        result.keys(),
        result.bits().numBits(),
        result.bits().numHashFunctions(),
        bitArray / 1e6);
    System.out.printf(
        Locale.ROOT, "max heap (-Xmx)           %.0f MB%n", Runtime.getRuntime().maxMemory() / 1e6);
    System.out.printf(
        Locale.ROOT,
        "build                     %.2f s = %.2f M keys/s, peak heap %.1f MB%n",
        buildSeconds,
        n / buildSeconds / 1e6,
        buildPeak / 1e6);
    System.out.printf(
        Locale.ROOT,
        "encode to Base64 chunks   %.3f s, %d chunks, peak heap %.1f MB%n",
        encodeSeconds,
        encoded.chunkCount(),
        encodePeak / 1e6);
    System.out.printf(
        Locale.ROOT,
        "Guava put (same keys)     %.2f s = %.2f M keys/s (%.0f ns/key)%n",
        guavaSeconds,
        n / guavaSeconds / 1e6,
        guavaSeconds * 1e9 / n);
  }
}
