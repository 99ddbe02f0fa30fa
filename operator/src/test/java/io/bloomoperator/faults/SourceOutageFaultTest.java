package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 8 of docs/reliability.md, for an HTTP source: the server is down (connection refused), slow
 * (headers, then a body that stalls past the source's readTimeout) or sends garbage mid-stream
 * (binary bytes, then the connection is cut short of its Content-Length), each for several refresh
 * intervals, while new content waits behind it. Throughout: the published version stays, it keeps
 * verifying, a reader keeps serving it, and Ready=False names the failure; the first good read
 * afterwards publishes the new content.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class SourceOutageFaultTest {

  private static final String FILTER = "outage";

  enum Mode {
    GOOD,
    DOWN,
    SLOW,
    GARBAGE
  }

  @Test
  void lastGoodSnapshotKeepsServingThroughSourceOutages(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    Duration outage = FaultParameters.millis("sourceOutage", 25_000);
    String namespace = ns.name();
    try (FlakySource source = new FlakySource()) {
      source.serve(0);
      SnapshotFixtures.apply(
          client,
          namespace,
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: %s}
          spec:
            falsePositiveRate: 0.01
            source: {http: {url: "%s", readTimeout: 2s, connectTimeout: 2s}}
            refreshInterval: 10s
            snapshot: {chunkSizeBytes: 1024, retainPreviousFor: 5s}
          """
              .formatted(FILTER, source.url()));
      Path log = Files.createTempFile("source-outage-", ".log");
      List<String> figures = new ArrayList<>();
      try (OperatorProcess operator =
              new OperatorProcess(
                  cluster.kubeconfig(),
                  Map.of(
                      "BLOOM_MIN_PUBLISH_INTERVAL", "0",
                      "BLOOM_WATCH_NAMESPACES", namespace,
                      "BLOOM_HTTP_ALLOW", "127.0.0.1"),
                  log);
          SnapshotChecker checker =
              new SnapshotChecker(client, namespace, List.of(FILTER), Duration.ofSeconds(5));
          LiveBloomFilter<String> reader =
              BloomFilterWatcher.builder(client, namespace, FILTER, LiveKeyType.STRING).start()) {
        operator.start();
        checker.start();
        assertThat(reader.awaitReady(Duration.ofSeconds(90))).isTrue();
        OutageWatch watch = new OutageWatch(client, namespace, FILTER, reader);
        int round = 0;
        for (Mode mode : List.of(Mode.DOWN, Mode.SLOW, Mode.GARBAGE)) {
          long good = SnapshotFixtures.manifest(client, namespace, FILTER).version();
          List<String> goodKeys = source.keys(round);
          round++;
          source.serve(round);
          source.mode(mode);
          Set<String> reasons = watch.during(mode, outage, good, goodKeys, message -> {});
          source.mode(Mode.GOOD);
          long publishedAfter = watch.recovery(source.keys(round));
          long requestsDuringOutage = source.requests(mode);
          figures.add(
              String.format(
                  "%s[requests=%d readyFalseReasons=%s recovered->readerOnNewVersion=%dms]",
                  mode, requestsDuringOutage, reasons, publishedAfter));
          if (mode != Mode.DOWN) { // a refused connection reaches no handler to count it
            assertThat(requestsDuringOutage)
                .as("%s: the operator tried again during the outage", mode)
                .isGreaterThan(1);
          }
          assertThat(reasons)
              .as("%s: Ready=False says why", mode)
              .isNotEmpty()
              .isSubsetOf(expectedReasons(mode));
        }
        checker.close();
        FaultParameters.report(
            "source-outage",
            String.format(
                "outageEach=%s %s samples=%d checks=%d violations=%d",
                outage,
                String.join(" ", figures),
                watch.samples(),
                checker.checks(),
                checker.violations().size()));
        assertThat(checker.violations()).isEmpty();
      }
    }
  }

  private static Set<String> expectedReasons(Mode mode) {
    return switch (mode) {
      case DOWN -> Set.of(Reasons.SOURCE_UNREADABLE);
      case SLOW -> Set.of(Reasons.SOURCE_TIMEOUT);
      case GARBAGE -> Set.of(Reasons.SOURCE_UNREADABLE, Reasons.MALFORMED_KEYS);
      case GOOD -> Set.of();
    };
  }

  /**
   * An HTTP key export on 127.0.0.1 that can be made to misbehave. DOWN closes the listening
   * socket, so connections are refused; the same port is bound again when it comes back.
   */
  static final class FlakySource implements AutoCloseable {
    private final ExecutorService executor = Executors.newCachedThreadPool(daemon());
    private final int port;
    private final java.util.concurrent.ConcurrentHashMap<
            Mode, java.util.concurrent.atomic.AtomicLong>
        requests = new java.util.concurrent.ConcurrentHashMap<>();
    private volatile Mode mode = Mode.GOOD;
    private volatile int round;
    private HttpServer server;

    FlakySource() {
      server = bind(0);
      port = server.getAddress().getPort();
    }

    String url() {
      return "http://127.0.0.1:" + port + "/ids.txt";
    }

    List<String> keys(int round) {
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < 5_000; i++) {
        keys.add("outage-" + round + "-" + i);
      }
      return keys;
    }

    void serve(int round) {
      this.round = round;
    }

    long requests(Mode mode) {
      var count = requests.get(mode);
      return count == null ? 0 : count.get();
    }

    synchronized void mode(Mode next) {
      if (next == Mode.DOWN && server != null) {
        server.stop(0);
        server = null;
        requests.computeIfAbsent(Mode.DOWN, m -> new java.util.concurrent.atomic.AtomicLong());
      } else if (next != Mode.DOWN && server == null) {
        server = bind(port);
      }
      mode = next;
    }

    private HttpServer bind(int onPort) {
      try {
        HttpServer http =
            HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), onPort), 0);
        http.setExecutor(executor);
        http.createContext("/ids.txt", this::handle);
        http.start();
        return http;
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    private void handle(HttpExchange exchange) throws IOException {
      Mode now = mode;
      requests
          .computeIfAbsent(now, m -> new java.util.concurrent.atomic.AtomicLong())
          .incrementAndGet();
      byte[] body = (String.join("\n", keys(round)) + "\n").getBytes(StandardCharsets.UTF_8);
      try (exchange) {
        switch (now) {
          case GOOD -> {
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
              out.write(body);
            }
          }
          case SLOW -> {
            exchange.sendResponseHeaders(200, body.length);
            OutputStream out = exchange.getResponseBody();
            out.write(body, 0, 100);
            out.flush();
            sleep(Duration.ofSeconds(10)); // well past readTimeout
          }
          case GARBAGE -> {
            exchange.sendResponseHeaders(200, body.length);
            OutputStream out = exchange.getResponseBody();
            out.write(body, 0, body.length / 3);
            byte[] garbage = new byte[4096];
            new java.util.Random(round).nextBytes(garbage);
            out.write(garbage);
            out.flush();
            // Cut short of the announced Content-Length.
          }
          case DOWN -> throw new IllegalStateException("unreachable: the socket is closed");
        }
      }
    }

    private static void sleep(Duration duration) {
      try {
        Thread.sleep(duration.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    private static java.util.concurrent.ThreadFactory daemon() {
      return r -> {
        Thread thread = new Thread(r, "flaky-source");
        thread.setDaemon(true);
        return thread;
      };
    }

    @Override
    public synchronized void close() {
      if (server != null) {
        server.stop(0);
      }
      executor.shutdownNow();
    }
  }
}
