package io.bloomoperator.bench;

import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.BodySource;
import io.bloomoperator.source.GeneratedLines;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URL;
import java.util.Locale;

/**
 * Keys/s of an http body (N generated keys served over loopback by the JDK's HttpServer, read by
 * the JDK's client) into the build path on 1..T threads, beside downloading the same body and
 * discarding it: the bound the server, the client and the socket set on the same cores.
 *
 * <p>Run (see docs/benchmarks.md): {@code mvn -q -pl operator test-compile exec:exec
 * -Dexec.executable=java -Dexec.classpathScope=test "-Dexec.args=-Xmx256m -cp %classpath
 * io.bloomoperator.bench.HttpIngestThroughput 20000000 2"}.
 */
public final class HttpIngestThroughput {

  private HttpIngestThroughput() {}

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 20_000_000L;
    int maxThreads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
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
    URL url = new URL("http://127.0.0.1:" + export.getAddress().getPort() + "/ids.txt");
    BodySource body =
        BodySource.of(
            () -> {
              try {
                return url.openStream();
              } catch (java.io.IOException e) {
                throw new UncheckedIOException(e);
              }
            },
            64 * 1024);
    FilterBuilder.Request request =
        new FilterBuilder.Request(KeyType.STRING, 0.01, n, 0, Long.MAX_VALUE);
    for (int round = 0; round < 3; round++) {
      long start = System.nanoTime();
      long bytes;
      try (InputStream in = url.openStream()) {
        bytes = in.transferTo(OutputStream.nullOutputStream());
      }
      report("download only", 0, n, start, bytes);
      for (int threads = 1; threads <= maxThreads; threads++) {
        start = System.nanoTime();
        FilterBuilder.Result result =
            new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1)).build(body, request);
        report("download + build (guava layout)", threads, result.keys(), start, bytes);
      }
    }
    export.stop(0);
  }

  private static void report(String what, int threads, long keys, long start, long bytes) {
    double seconds = (System.nanoTime() - start) / 1e9;
    System.out.printf(
        Locale.ROOT,
        "%-34s threads %d  %,d keys  %.2f s = %.2f M keys/s (%.0f MB/s)%n",
        what,
        threads,
        keys,
        seconds,
        keys / seconds / 1e6,
        bytes / seconds / 1e6);
  }
}
