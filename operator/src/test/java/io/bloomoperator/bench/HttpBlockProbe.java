package io.bloomoperator.bench;

import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.GeneratedLines;
import io.bloomoperator.source.HttpSource;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.KeySink;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineBlock;
import io.bloomoperator.source.SourceException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;

/**
 * An http body of N generated keys read by the operator's http source ({@link HttpSource}: its HTTP
 * client, gzip sniffing, size bound and line splitting, as a BloomFilter's build reads it) into a
 * 2-thread build: keys/s, the blocks the source handed over (how many, lines each) and the CPU of
 * the reading thread and of the build helpers, i.e. whether the build uses both cores. Only
 * HttpSource's public API is used, so the same probe measures any version of the source (the OkHttp
 * one before issue 32, Apache HttpClient 5 after).
 *
 * <p>Run (see docs/benchmarks.md): {@code java -Xmx512m -cp $CP
 * io.bloomoperator.bench.HttpBlockProbe 10000000}.
 */
public final class HttpBlockProbe {
  private HttpBlockProbe() {}

  public static void main(String[] args) throws Exception {
    long n = Long.parseLong(args[0]);
    HttpServer export = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    export.createContext(
        "/ids.txt",
        exchange -> {
          exchange.sendResponseHeaders(200, 0);
          try (OutputStream out = exchange.getResponseBody()) {
            new GeneratedLines("product-", n).transferTo(out);
          }
        });
    export.start();
    String url = "http://127.0.0.1:" + export.getAddress().getPort() + "/ids.txt";
    HttpSourceSpec spec = new HttpSourceSpec();
    spec.setUrl(url);
    HttpSource body =
        new HttpSource(
            null,
            spec,
            HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32", null)));
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    for (int round = 0; round < 3; round++) {
      long[] stats = new long[4]; // blocks, lines, blocks < 2048, blocks < 256
      KeySource counting =
          new KeySource() {
            public String description() {
              return "probe";
            }

            public String changeToken() {
              return null;
            }

            public void readKeys(KeySink sink) throws SourceException {
              body.readKeys(
                  new KeySink() {
                    public void line(String l) throws SourceException {
                      sink.line(l);
                    }

                    public void lines(LineBlock b) throws SourceException {
                      stats[0]++;
                      stats[1] += b.count();
                      if (b.count() < 2048) stats[2]++;
                      if (b.count() < 256) stats[3]++;
                      sink.lines(b);
                    }

                    public void value(String k) throws SourceException {
                      sink.value(k);
                    }

                    public void value(long k) throws SourceException {
                      sink.value(k);
                    }

                    public void nullValue() {
                      sink.nullValue();
                    }
                  });
            }
          };
      long cpuMain0 = mx.getCurrentThreadCpuTime();
      long cpuWorkers0 = workerCpu(mx);
      long start = System.nanoTime();
      FilterBuilder.Result r =
          new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
              .build(
                  counting, new FilterBuilder.Request(KeyType.STRING, 0.01, n, 0, Long.MAX_VALUE));
      double s = (System.nanoTime() - start) / 1e9;
      System.out.printf(
          "http source+build 2 threads: %,d keys %.2f s = %.2f M keys/s | blocks %,d, mean %.0f lines, <2048: %.1f%%, <256: %.1f%% | reader cpu %.2f s, helper cpu %.2f s%n",
          r.keys(),
          s,
          r.keys() / s / 1e6,
          stats[0],
          (double) stats[1] / stats[0],
          100.0 * stats[2] / stats[0],
          100.0 * stats[3] / stats[0],
          (mx.getCurrentThreadCpuTime() - cpuMain0) / 1e9,
          (workerCpu(mx) - cpuWorkers0) / 1e9);
    }
    export.stop(0);
    System.exit(0);
  }

  private static long workerCpu(ThreadMXBean mx) {
    long t = 0;
    for (long id : mx.getAllThreadIds()) {
      var info = mx.getThreadInfo(id);
      if (info != null && info.getThreadName().startsWith("bloom-build-worker")) {
        t += Math.max(0, mx.getThreadCpuTime(id));
      }
    }
    return t;
  }
}
