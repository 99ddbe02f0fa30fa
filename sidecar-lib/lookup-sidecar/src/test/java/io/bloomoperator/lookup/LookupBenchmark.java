package io.bloomoperator.lookup;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The lookup sidecar's benchmark (issue 30): the HTTP server of the sidecar ({@link LookupServer},
 * the default 4 request threads) on 127.0.0.1 over String filters of 1M keys at a 1% false-positive
 * rate (k = 7, 1.2 MB), side by side with the in-process lookup of the same filter.
 *
 * <ul>
 *   <li>single-key {@code GET …/contains?key=} latency, p50/p99/p99.9, on 1 keep-alive connection
 *       and on 8 at once, from a minimal HTTP/1.1 client on a raw socket (so that the figures are
 *       the server and loopback, not a client library);
 *   <li>10,000-key {@code text/plain} batches, keys/s, on 1 and 8 connections (the same client);
 *   <li>in process: {@code mightContain} per key and {@code mightContainAll} keys/s, 1 and 2
 *       threads;
 *   <li>memory per filter: the heap retained by 4 such filters after a full GC, per filter, and the
 *       process's resident set.
 * </ul>
 *
 * Bounded: fixed request counts, under a minute on 2 cores. Not a JMH harness: warm-up rounds
 * first, then one measured round per figure; run it on an idle machine for stable tails.
 *
 * <pre>
 * java -Xmx1g -cp "target/classes:target/test-classes:target/lib/*" io.bloomoperator.lookup.LookupBenchmark
 * </pre>
 */
public final class LookupBenchmark {

  private static final int KEYS = 1_000_000;
  private static final int SINGLES = 40_000;
  private static final int BATCHES_PER_CONNECTION = 60;

  private LookupBenchmark() {}

  public static void main(String[] args) throws Exception {
    List<String> keys = LookupSidecarTest.keys("id", KEYS);
    Path payload = Files.createTempFile("lookup-bench", ".payload");
    try {
      long heapBefore = usedHeapAfterGc();
      Map<String, LiveBloomFilter<?>> filters = new LinkedHashMap<>();
      for (int f = 0; f < 4; f++) {
        BloomFilterBits.Builder bits =
            BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(KEYS, 0.01));
        for (String key : keys) {
          bits.putString(f + key);
        }
        try (OutputStream out = Files.newOutputStream(payload)) {
          SnapshotEncoder.writeTo(bits.build(), out);
        }
        filters.put(
            "f" + f,
            LiveBloomFilter.fromFile("f" + f, LiveKeyType.STRING, FilterFormat.GUAVA, payload));
      }
      long perFilter = (usedHeapAfterGc() - heapBefore) / filters.size();
      System.out.printf(
          "memory: payload %d bytes (1M keys, 1%%), heap retained per filter %d bytes%n",
          Files.size(payload), perFilter);
      @SuppressWarnings("unchecked")
      LiveBloomFilter<String> filter = (LiveBloomFilter<String>) filters.get("f0");
      List<String> present = keys.stream().map(k -> "0" + k).toList();

      LookupServer.configureJdkServer(java.time.Duration.ofSeconds(10), 256);
      try (LookupServer server =
          new LookupServer(
              new InetSocketAddress(InetAddress.getLoopbackAddress(), 0),
              filters,
              new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
              4,
              64)) {
        server.start();
        int port = server.address().getPort();
        System.out.printf("resident set with the server and 4 filters: %s%n", rss());

        for (int connections : new int[] {1, 8}) {
          singles(port, present, connections, SINGLES / 4 / connections); // warm-up
          long[] nanos = singles(port, present, connections, SINGLES / connections);
          Arrays.sort(nanos);
          System.out.printf(
              "single-key GET, %d connection(s): p50 %.0f us, p99 %.0f us, p99.9 %.0f us%n",
              connections, pct(nanos, 50), pct(nanos, 99), pct(nanos, 99.9));
        }

        String batch = String.join("\n", present.subList(0, KeyBatch.MAX_KEYS));
        for (int connections : new int[] {1, 8}) {
          batches(port, batch, connections, 10); // warm-up
          long start = System.nanoTime();
          batches(port, batch, connections, BATCHES_PER_CONNECTION);
          double seconds = (System.nanoTime() - start) / 1e9;
          System.out.printf(
              "10,000-key text batches, %d connection(s): %.2f M keys/s%n",
              connections,
              connections * BATCHES_PER_CONNECTION * (double) KeyBatch.MAX_KEYS / seconds / 1e6);
        }

        String[] array = present.toArray(String[]::new);
        inProcessSingle(filter, array); // warm-up
        inProcessSingle(filter, array);
        for (int threads : new int[] {1, 2}) {
          inProcessBatches(filter, array, threads, 20); // warm-up
          System.out.printf(
              "in-process mightContainAll (10,000 keys a call), %d thread(s): %.2f M keys/s%n",
              threads, inProcessBatches(filter, array, threads, 100));
        }
      }
    } finally {
      Files.deleteIfExists(payload);
    }
  }

  /** Per-request latencies of {@code perConnection} GETs on each of {@code connections}. */
  private static long[] singles(int port, List<String> keys, int connections, int perConnection)
      throws Exception {
    List<Callable<long[]>> work = new ArrayList<>();
    for (int c = 0; c < connections; c++) {
      int offset = c * perConnection;
      work.add(
          () -> {
            long[] nanos = new long[perConnection];
            try (RawClient client = new RawClient(port)) {
              for (int i = 0; i < perConnection; i++) {
                String key = keys.get((offset + i) % keys.size());
                long start = System.nanoTime();
                client.send("GET /v1/filters/f0/contains?key=" + key + " HTTP/1.1", null);
                nanos[i] = System.nanoTime() - start;
              }
            }
            return nanos;
          });
    }
    long[][] all = runAll(work);
    return Arrays.stream(all).flatMapToLong(Arrays::stream).toArray();
  }

  private static void batches(int port, String batch, int connections, int perConnection)
      throws Exception {
    byte[] body = batch.getBytes(StandardCharsets.UTF_8);
    List<Callable<long[]>> work = new ArrayList<>();
    for (int c = 0; c < connections; c++) {
      work.add(
          () -> {
            try (RawClient client = new RawClient(port)) {
              for (int i = 0; i < perConnection; i++) {
                client.send("POST /v1/filters/f0/contains HTTP/1.1", body);
              }
            }
            return new long[0];
          });
    }
    runAll(work);
  }

  private static void inProcessSingle(LiveBloomFilter<String> filter, String[] keys) {
    long start = System.nanoTime();
    int hits = 0;
    for (String key : keys) {
      if (filter.mightContain(key)) {
        hits++;
      }
    }
    double nanos = (System.nanoTime() - start) / (double) keys.length;
    System.out.printf(
        "in-process mightContain, 1 thread: %.0f ns a key (%d of %d present)%n",
        nanos, hits, keys.length);
  }

  private static double inProcessBatches(
      LiveBloomFilter<String> filter, String[] keys, int threads, int rounds) throws Exception {
    List<Callable<long[]>> work = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int offset = t * KeyBatch.MAX_KEYS;
      work.add(
          () -> {
            boolean[] results = new boolean[KeyBatch.MAX_KEYS];
            for (int r = 0; r < rounds; r++) {
              int from = (offset + r * KeyBatch.MAX_KEYS) % (keys.length - KeyBatch.MAX_KEYS);
              filter.mightContainAll(keys, from, KeyBatch.MAX_KEYS, results);
            }
            return new long[0];
          });
    }
    long start = System.nanoTime();
    runAll(work);
    return threads
        * (double) rounds
        * KeyBatch.MAX_KEYS
        / ((System.nanoTime() - start) / 1e9)
        / 1e6;
  }

  private static long[][] runAll(List<Callable<long[]>> work) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(work.size());
    try {
      List<Future<long[]>> futures = pool.invokeAll(work);
      long[][] results = new long[futures.size()][];
      for (int i = 0; i < results.length; i++) {
        results[i] = futures.get(i).get();
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  private static double pct(long[] sorted, double p) {
    return sorted[(int) Math.min(sorted.length - 1, Math.floor(sorted.length * p / 100))] / 1e3;
  }

  private static long usedHeapAfterGc() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static String rss() throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return line.substring(6).strip();
      }
    }
    return "unknown";
  }

  /**
   * A minimal HTTP/1.1 client on one keep-alive socket: writes the request, reads the status line
   * and headers, then exactly Content-Length bytes of the answer. What any language's simplest
   * client does; no pooling, no HTTP/2.
   */
  private static final class RawClient implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] buffer = new byte[1 << 16];

    RawClient(int port) throws IOException {
      socket = new Socket(InetAddress.getLoopbackAddress(), port);
      socket.setTcpNoDelay(true);
      out = socket.getOutputStream();
      in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
    }

    void send(String requestLine, byte[] body) throws IOException {
      StringBuilder head = new StringBuilder(requestLine).append("\r\nHost: 127.0.0.1\r\n");
      if (body != null) {
        head.append("Content-Type: text/plain\r\nContent-Length: ")
            .append(body.length)
            .append("\r\n");
      }
      head.append("\r\n");
      out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
      if (body != null) {
        out.write(body);
      }
      out.flush();
      String status = line();
      if (!status.startsWith("HTTP/1.1 200")) {
        throw new IOException("answer: " + status);
      }
      int length = -1;
      for (String header = line(); !header.isEmpty(); header = line()) {
        int colon = header.indexOf(':');
        if (header.substring(0, colon).equalsIgnoreCase("Content-Length")) {
          length = Integer.parseInt(header.substring(colon + 1).strip());
        }
      }
      if (length < 0) {
        throw new IOException("no Content-Length");
      }
      while (length > 0) {
        int n = in.read(buffer, 0, Math.min(length, buffer.length));
        if (n < 0) {
          throw new IOException("closed mid-answer");
        }
        length -= n;
      }
    }

    private String line() throws IOException {
      StringBuilder s = new StringBuilder();
      for (int c = in.read(); c != '\n'; c = in.read()) {
        if (c < 0) {
          throw new IOException("closed");
        }
        if (c != '\r') {
          s.append((char) c);
        }
      }
      return s.toString();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
