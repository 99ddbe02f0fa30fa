package io.bloomoperator.bench;

import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.GeneratedLines;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.source.HttpUrlsSource;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The same N generated keys served as 1 URL and as {@code parts} URLs (each an equal slice), read
 * by the operator's http source with {@code urls} ({@link HttpUrlsSource}, the default share of
 * partition connections) into a 2-thread build: keys/s of each, alternating, 3 rounds. A third
 * argument names the layout ({@code GUAVA}, the default, or {@code SPLIT_BLOCK}).
 *
 * <p>Run (see docs/benchmarks.md): {@code java -Xmx512m -cp $CP
 * io.bloomoperator.bench.HttpUrlsProbe 10000000 2 [SPLIT_BLOCK]}.
 */
public final class HttpUrlsProbe {
  private HttpUrlsProbe() {}

  public static void main(String[] args) throws Exception {
    long n = Long.parseLong(args[0]);
    int parts = Integer.parseInt(args[1]);
    FilterFormat format = args.length > 2 ? FilterFormat.valueOf(args[2]) : FilterFormat.GUAVA;
    HttpServer export = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    export.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    String base = "http://127.0.0.1:";
    for (int count : new int[] {1, parts}) {
      for (int i = 0; i < count; i++) {
        long first = n * i / count;
        long size = n * (i + 1) / count - first;
        export.createContext(
            "/" + count + "/" + i,
            exchange -> {
              exchange.sendResponseHeaders(200, 0);
              try (OutputStream out = exchange.getResponseBody()) {
                new GeneratedLines("product-", first, size).transferTo(out);
              }
            });
      }
    }
    export.start();
    HttpSourceSettings settings =
        HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32", null));
    for (int round = 0; round < 3; round++) {
      for (int count : new int[] {1, parts}) {
        List<String> urls = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          urls.add(base + export.getAddress().getPort() + "/" + count + "/" + i);
        }
        HttpSourceSpec spec = new HttpSourceSpec();
        spec.setUrls(urls);
        long start = System.nanoTime();
        FilterBuilder.Result r =
            new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
                .build(
                    new HttpUrlsSource(null, spec, settings),
                    new FilterBuilder.Request(
                        KeyType.STRING, 0.01, n, 0, Long.MAX_VALUE, null, format));
        double s = (System.nanoTime() - start) / 1e9;
        System.out.printf(
            "%s round %d, %d URL(s): %,d keys %.2f s = %.2f M keys/s%n",
            format, round + 1, count, r.keys(), s, r.keys() / s / 1e6);
      }
    }
    export.stop(0);
    System.exit(0);
  }
}
