package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.source.GeneratedLines;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Security audit 2026-12-02, H2: http sources of long lines in two namespaces, against the packaged
 * operator with the installs' heap and build threads. Each source serves 30,000 lines of ~65,000
 * bytes (just under {@code BLOOM_HTTP_MAX_LINE_BYTES}) gzip'ed, about 2 MB on the wire and 1.95 GB
 * decompressed (the body is 30 gzip members of the same 1,000 lines, as {@code cat a.gz b.gz}
 * makes: compressing 1.95 GB would take the test longer than the operator's builds). When the
 * parallel build handed work over per 2,048 lines whatever their length, each build held ~512 MiB
 * of them and the operator died of OutOfMemoryError (exit 3); with batches bounded in bytes both
 * filters must become Ready and the operator stay up.
 *
 * <p>The heap is sampled from outside ({@code jstat}, which counts garbage not yet collected) and
 * from the operator's GC log (heap after each collection: what was live). {@code
 * -Dfaults.longLineNamespaces=1} runs the attack in one namespace (for a before/after figure on a
 * build that survives), {@code -Dfaults.operatorHeap} changes the heap.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class LongLinesFaultTest {

  private static final int LINE_BYTES = 65_000;
  private static final int DISTINCT_LINES = 1_000;

  private static final Pattern GC_PAUSE = Pattern.compile("(\\d+)M->(\\d+)M\\((\\d+)M\\)");

  @Test
  void longGzipLinesInTwoNamespacesLeaveTheOperatorUpAndBothFiltersReady(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    int members = FaultParameters.integer("longLineMembers", 30);
    int namespaceCount = FaultParameters.integer("longLineNamespaces", 2);
    String heap = System.getProperty("faults.operatorHeap", "768m");
    Duration timeout = FaultParameters.millis("longLinesTimeout", 240_000);
    long started = System.nanoTime();
    List<String> namespaces = new ArrayList<>(List.of(ns.name()));
    for (int i = 1; i < namespaceCount; i++) {
      String other = ns.name() + "-long-" + i;
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
          .create();
      namespaces.add(other);
    }
    byte[] member = gzip(new GeneratedLines("x".repeat(LINE_BYTES - 4), DISTINCT_LINES));
    long lines = (long) members * DISTINCT_LINES;
    Path log = Files.createTempFile("long-lines-", ".log");
    Path gcLog = Files.createTempFile("long-lines-gc-", ".log");
    System.out.println("long-lines: operator log " + log + ", GC log " + gcLog);
    HttpServer server = serve(member, members);
    try {
      String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/keys";
      for (String namespace : namespaces) {
        SnapshotFixtures.apply(
            client,
            namespace,
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: long-lines}
            spec:
              falsePositiveRate: 0.01
              expectedInsertions: %d
              source: {http: {url: "%s"}}
              refreshInterval: 1h
            """
                .formatted(lines, url));
      }
      // The installs' settings: 2 build slots, 2 threads per build, a 768 MiB heap (75 % of the
      // 1 GiB limit; with that much memory the JVM picks the serial collector), exit on OOM.
      Map<String, String> settings =
          Map.of(
              "BLOOM_WATCH_NAMESPACES", String.join(",", namespaces),
              "BLOOM_HTTP_ALLOW", "127.0.0.1",
              "BLOOM_BUILD_THREADS", "2",
              "BLOOM_MAX_CONCURRENT_BUILDS", "2",
              "BLOOM_MIN_PUBLISH_INTERVAL", "0");
      try (OperatorProcess operator =
          new OperatorProcess(
              cluster.kubeconfig(),
              settings,
              log,
              List.of(
                  "-Xmx" + heap,
                  "-XX:+UseSerialGC",
                  "-XX:+ExitOnOutOfMemoryError",
                  "-Xlog:gc:file=" + gcLog))) {
        operator.start();
        operator.awaitStarted(Duration.ofSeconds(120));
        long up = System.nanoTime();
        long readyAt;
        try (OperatorVitals vitals = new OperatorVitals(operator.pid())) {
          await()
              .atMost(timeout)
              .pollInterval(Duration.ofMillis(500))
              .until(() -> !operator.isAlive() || notReady(client, namespaces).isEmpty());
          readyAt = System.nanoTime();
          OptionalInt exit = operator.awaitExit(Duration.ofMillis(100));
          String operatorLog = Files.readString(log);
          long[] gc = gcPeaks(gcLog);
          FaultParameters.report(
              "long-lines",
              String.format(
                  "namespaces=%d lines=%d of %d bytes (gzip body %d B, %d B decompressed)"
                      + " heap=-Xmx%s threads=2 slots=2 | exit=%s oom=%s notReady=%s"
                      + " | operator up to all Ready %dms, test %dms | heapUsedMax=%dMiB (jstat,"
                      + " garbage included) heapAfterGcMax=%dMiB heapBeforeGcMax=%dMiB"
                      + " gcPauses=%d samples=%d",
                  namespaces.size(),
                  lines,
                  LINE_BYTES,
                  (long) member.length * members,
                  lines * LINE_BYTES,
                  heap,
                  exit.isPresent() ? Integer.toString(exit.getAsInt()) : "still running",
                  operatorLog.contains("OutOfMemoryError"),
                  operator.isAlive() ? notReady(client, namespaces) : "-",
                  Duration.ofNanos(readyAt - up).toMillis(),
                  Duration.ofNanos(System.nanoTime() - started).toMillis(),
                  vitals.maxHeapUsedMib(),
                  gc[1],
                  gc[0],
                  gc[2],
                  vitals.samples()));
          assertThat(exit).as("operator exit code (3: OutOfMemoryError)").isEmpty();
          assertThat(operatorLog).doesNotContain("OutOfMemoryError");
          assertThat(notReady(client, namespaces)).as("filters not Ready/Published").isEmpty();
        }
      }
    } finally {
      server.stop(0);
      for (String namespace : namespaces.subList(1, namespaces.size())) {
        client.namespaces().withName(namespace).delete();
      }
    }
  }

  /** The namespaces whose filter is not Ready with reason Published. */
  private static List<String> notReady(KubernetesClient client, List<String> namespaces) {
    return namespaces.stream()
        .filter(
            namespace -> {
              BloomFilter filter =
                  client
                      .resources(BloomFilter.class)
                      .inNamespace(namespace)
                      .withName("long-lines")
                      .get();
              return filter == null
                  || filter.getStatus() == null
                  || !SnapshotFixtures.ready(filter, "True", Reasons.PUBLISHED);
            })
        .toList();
  }

  /**
   * Serves {@code members} copies of the gzip member {@code member} at every path, {@code
   * Content-Encoding: gzip}, with a fixed ETag so a HEAD finds nothing changed.
   */
  private static HttpServer serve(byte[] member, int members) throws IOException {
    HttpServer server =
        HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    // A thread per exchange: the two downloads must run at once, as from two servers.
    server.setExecutor(
        Executors.newCachedThreadPool(
            r -> {
              Thread thread = new Thread(r, "long-lines-source");
              thread.setDaemon(true);
              return thread;
            }));
    server.createContext(
        "/",
        exchange -> {
          HttpExchange e = exchange;
          try {
            e.getResponseHeaders().add("Content-Encoding", "gzip");
            e.getResponseHeaders().add("ETag", "\"long-lines\"");
            if (e.getRequestMethod().equals("HEAD")) {
              e.sendResponseHeaders(200, -1);
              return;
            }
            e.sendResponseHeaders(200, (long) member.length * members);
            try (OutputStream out = e.getResponseBody()) {
              for (int i = 0; i < members; i++) {
                out.write(member);
              }
            } catch (IOException closed) {
              // the operator stopped reading (it died, or the test ended)
            }
          } finally {
            e.close();
          }
        });
    server.start();
    return server;
  }

  private static byte[] gzip(InputStream body) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream zip = new GZIPOutputStream(out, 64 * 1024);
        InputStream in = body) {
      in.transferTo(zip);
    }
    return out.toByteArray();
  }

  /** From a GC log: the most heap in use before a collection, after one, and the collections. */
  private static long[] gcPeaks(Path gcLog) throws IOException {
    long before = 0;
    long after = 0;
    long pauses = 0;
    for (String line : Files.readAllLines(gcLog)) {
      Matcher m = GC_PAUSE.matcher(line);
      if (m.find()) {
        before = Math.max(before, Long.parseLong(m.group(1)));
        after = Math.max(after, Long.parseLong(m.group(2)));
        pauses++;
      }
    }
    return new long[] {before, after, pauses};
  }
}
