package io.bloomoperator.lookup;

import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A first look at what the HTTP hop costs (not the issue's benchmark suite, which is still to
 * come): one server on loopback over a fixed in-memory filter of 1M keys, single-key GETs on one
 * keep-alive connection (p50/p99), 10,000-key text batches on 1 and 8 connections (keys/s), and the
 * in-process lookup of the same keys. Bounded: a fixed number of requests, a few seconds.
 *
 * <pre>
 * java -cp target/classes:target/test-classes:target/lib/* io.bloomoperator.lookup.LookupLatencyProbe
 * </pre>
 */
public final class LookupLatencyProbe {

  private LookupLatencyProbe() {}

  public static void main(String[] args) throws Exception {
    List<String> keys = LookupSidecarTest.keys("id", 1_000_000);
    LiveBloomFilter<String> filter = LiveBloomFilter.fixed("ids", LiveKeyType.STRING, keys);
    LookupServer.configureJdkServer(java.time.Duration.ofSeconds(10), 256);
    try (LookupServer server =
        new LookupServer(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
            Map.of("ids", filter),
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            8,
            64)) {
      server.start();
      String base = "http://127.0.0.1:" + server.address().getPort() + "/v1/filters/ids/contains";
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

      int singles = 20_000;
      long[] nanos = new long[singles];
      for (int i = -2_000; i < singles; i++) { // the first 2,000 warm up
        long start = System.nanoTime();
        HttpResponse<String> r =
            http.send(
                HttpRequest.newBuilder(URI.create(base + "?key=id-" + Math.abs(i))).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
          throw new IllegalStateException(r.body());
        }
        if (i >= 0) {
          nanos[i] = System.nanoTime() - start;
        }
      }
      Arrays.sort(nanos);
      System.out.printf(
          "single-key GET, 1 connection: p50 %.0f us, p99 %.0f us%n",
          nanos[singles / 2] / 1e3, nanos[singles * 99 / 100] / 1e3);

      String batch = String.join("\n", keys.subList(0, KeyBatch.MAX_KEYS));
      for (int connections : new int[] {1, 8}) {
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        int perConnection = 200;
        List<Future<?>> done = new ArrayList<>();
        long start = System.nanoTime();
        for (int c = 0; c < connections; c++) {
          HttpClient own = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
          done.add(
              pool.submit(
                  () -> {
                    for (int i = 0; i < perConnection; i++) {
                      own.send(
                          HttpRequest.newBuilder(URI.create(base))
                              .header("Content-Type", "text/plain")
                              .POST(HttpRequest.BodyPublishers.ofString(batch))
                              .build(),
                          HttpResponse.BodyHandlers.ofString());
                    }
                    return null;
                  }));
        }
        for (Future<?> f : done) {
          f.get();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        pool.shutdown();
        System.out.printf(
            "10,000-key text batches, %d connection(s): %.2f M keys/s%n",
            connections, connections * perConnection * (double) KeyBatch.MAX_KEYS / seconds / 1e6);
      }

      String[] array = keys.subList(0, KeyBatch.MAX_KEYS).toArray(String[]::new);
      boolean[] results = new boolean[array.length];
      long start = System.nanoTime();
      int rounds = 2_000;
      for (int i = 0; i < rounds; i++) {
        filter.mightContainAll(array, 0, array.length, results);
      }
      System.out.printf(
          "in-process mightContainAll, 1 thread: %.2f M keys/s%n",
          rounds * (double) array.length / ((System.nanoTime() - start) / 1e9) / 1e6);
    }
  }
}
