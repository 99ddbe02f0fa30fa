package io.bloomoperator.source;

import static io.bloomoperator.source.HttpSourceTest.LOOPBACK_ALLOWED;
import static io.bloomoperator.source.HttpSourceTest.MARKER;
import static io.bloomoperator.source.HttpSourceTest.failure;
import static io.bloomoperator.source.HttpTestServer.gzip;
import static io.bloomoperator.source.HttpTestServer.send;
import static io.bloomoperator.source.HttpTestServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpHandler;
import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.assemble.BuildWorkers;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * http sources with {@code urls} against the JDK's HTTP server: the same keys as one URL serving
 * the bodies concatenated, and what a list may cost: no more connections or threads than the
 * namespace's share, the operator's body and time bounds over all URLs together, no request at all
 * when one URL's host is refused, and one failure stopping every URL.
 */
@Timeout(30)
class HttpUrlsSourceTest {

  private final HttpTestServer server = new HttpTestServer();

  @AfterEach
  void stop() {
    server.close();
  }

  static HttpSourceSpec spec(List<String> urls) {
    HttpSourceSpec spec = new HttpSourceSpec();
    spec.setUrls(urls);
    return spec;
  }

  private static HttpUrlsSource source(List<String> urls, HttpSourceSettings settings) {
    return new HttpUrlsSource(null, spec(urls), settings, EgressCheckedDns.Lookup.SYSTEM, "ns");
  }

  /** What a build's parser makes of a read: the keys in the order they came, and the counts. */
  private record Read(List<Object> keys, long count, long malformed) {}

  private static Read read(KeySource source) throws SourceException {
    List<Object> keys = new ArrayList<>();
    LineParser tolerant = HttpSourceTest.parser(KeyType.LONG, keys, 1000);
    source.readKeys(tolerant);
    return new Read(keys, tolerant.keys(), tolerant.malformed());
  }

  private static byte[] part(int from, int to) {
    return text(IntStream.range(from, to).mapToObj(Integer::toString).toList());
  }

  /**
   * Four parts (plain, gzip file, a comment, blank and malformed lines, a last line without a
   * newline): the URL list gives the keys and counts of one URL serving them concatenated, with a
   * share of connections and without.
   */
  @Test
  void aListReadsTheKeysOfOneUrlServingTheBodiesConcatenated() throws Exception {
    byte[][] bodies = {
      part(0, 60_000),
      ("# part two\n\n" + new String(part(60_000, 130_000), StandardCharsets.UTF_8) + "x-1\n")
          .getBytes(StandardCharsets.UTF_8),
      part(130_000, 200_000),
      "200000\n200001\n200002".getBytes(StandardCharsets.UTF_8)
    };
    ByteArrayOutputStream concatenated = new ByteArrayOutputStream();
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < bodies.length; i++) {
      byte[] body = bodies[i];
      concatenated.write(body);
      if (i < bodies.length - 1 && body[body.length - 1] != '\n') {
        throw new IllegalStateException("only the last part may end without a newline");
      }
      byte[] served = i == 2 ? gzip(body) : body;
      server.on("/part-" + i, ex -> send(ex, 200, served));
      urls.add(server.url("/part-" + i));
    }
    byte[] whole = concatenated.toByteArray();
    server.on("/whole", ex -> send(ex, 200, whole));

    Read one =
        read(
            new HttpSource(
                null, HttpSourceTest.spec(server.url("/whole"), null), LOOPBACK_ALLOWED));
    assertThat(one.count()).isEqualTo(200_003);
    assertThat(one.malformed()).isEqualTo(1);
    for (HttpSourceSettings settings :
        List.of(
            LOOPBACK_ALLOWED.withPartitionConnections(8, 3),
            LOOPBACK_ALLOWED.withPartitionConnections(0, 0))) {
      Read list = read(source(urls, settings));
      assertThat(list.count()).isEqualTo(one.count());
      assertThat(list.malformed()).isEqualTo(one.malformed());
      assertThat(sorted(list.keys())).isEqualTo(sorted(one.keys()));
      assertThat(settings.partitionConnections().inUse()).as("the share is back").isZero();
    }
  }

  /**
   * A real build (both layouts, Long and String keys, 2 build threads) of four URLs of 200,000
   * lines each, many times {@link KeyBatch#MAX_KEYS} and {@link LineBlock#MAX_LINES}: the payload
   * is byte for byte that of one URL serving the bodies concatenated, with the same key and
   * malformed-line counts, and most keys are inserted on the reading threads (through their lanes,
   * not by the build's thread). The bodies hold what the line rules settle: comments, blank and
   * padded lines, a Unicode digit, invalid UTF-8, a line too long for a Long, a last line without a
   * newline, one part gzipped.
   */
  @Test
  void aListBuildsTheFilterOfOneUrlServingTheBodiesConcatenatedByteForByte() throws Exception {
    int lines = 200_000;
    byte[][] bodies = new byte[4][];
    ByteArrayOutputStream concatenated = new ByteArrayOutputStream();
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < bodies.length; i++) {
      ByteArrayOutputStream body = new ByteArrayOutputStream();
      for (int j = 0; j < lines; j++) {
        int key = i * lines + j;
        String line =
            switch (j % 1000) {
              case 7 -> "# comment " + key;
              case 8 -> "";
              case 9 -> "  \t" + key + " ";
              case 10 -> "x" + key;
              case 11 -> "\u0663" + key;
              case 12 -> "99999999999999999999" + key;
              default -> Integer.toString(key);
            };
        body.write(line.getBytes(StandardCharsets.UTF_8));
        if (j % 1000 == 13) {
          body.write(new byte[] {(byte) 0xC3, '1'});
        }
        if (i < bodies.length - 1 || j < lines - 1) {
          body.write('\n');
        }
      }
      bodies[i] = body.toByteArray();
      concatenated.write(bodies[i]);
      byte[] served = i == 1 ? gzip(bodies[i]) : bodies[i];
      server.on("/big-" + i, ex -> send(ex, 200, served));
      urls.add(server.url("/big-" + i));
    }
    byte[] whole = concatenated.toByteArray();
    server.on("/big-whole", ex -> send(ex, 200, whole));
    HttpSourceSettings settings = LOOPBACK_ALLOWED.withPartitionConnections(8, 3);
    for (KeyType type : KeyType.values()) {
      for (FilterFormat format : List.of(FilterFormat.GUAVA, FilterFormat.SPLIT_BLOCK)) {
        Built one =
            build(
                new HttpSource(
                    null, HttpSourceTest.spec(server.url("/big-whole"), null), LOOPBACK_ALLOWED),
                type,
                format,
                false);
        assertThat(one.malformed())
            .as("%s %s", type, format)
            .isEqualTo(type == KeyType.LONG ? 4 * 200 * 3 : 0);
        assertThat(one.keys()).isGreaterThan(150L * KeyBatch.MAX_KEYS);
        Built list = build(source(urls, settings), type, format, false);
        assertThat(list.payload()).as("%s %s", type, format).isEqualTo(one.payload());
        assertThat(list.keys()).isEqualTo(one.keys());
        assertThat(list.malformed()).isEqualTo(one.malformed());
        // Counted in a build of its own: an inserter wrapped to count takes every key by itself,
        // so the split-block lanes would not buffer hashes per block range as they do above.
        Built counted = build(source(urls, settings), type, format, true);
        assertThat(counted.payload()).isEqualTo(one.payload());
        assertThat(counted.onReadingThreads())
            .as("%s %s: keys inserted on the reading threads", type, format)
            .isGreaterThan(counted.keys() / 2);
        assertThat(settings.partitionConnections().inUse()).as("the share is back").isZero();
      }
    }
  }

  /** A build's payload digest and counts, and how many keys the reading threads inserted. */
  private record Built(String payload, long keys, long malformed, long onReadingThreads) {}

  private static Built build(KeySource source, KeyType type, FilterFormat format, boolean count)
      throws Exception {
    AtomicLong onReadingThreads = new AtomicLong();
    FilterBuilder.Beside counting =
        InsertingThreads.counting(
            name -> {
              if (name.startsWith("http-partition-")) {
                onReadingThreads.incrementAndGet();
              }
            });
    FilterBuilder.Result result =
        new FilterBuilder(k -> {}, BuildWorkers.of(2, 1))
            .with(count ? counting : null)
            .build(
                source,
                new FilterBuilder.Request(type, 0.01, null, 10_000, 1L << 30, null, format));
    return new Built(
        SnapshotEncoder.sha256(result.bits()),
        result.keys(),
        result.malformed(),
        onReadingThreads.get());
  }

  private static List<Long> sorted(List<Object> keys) {
    return keys.stream().map(k -> (Long) k).sorted().toList();
  }

  /**
   * 64 URLs with a namespace share of 2: the server never sees more than 3 requests at once (the
   * build's own connection and the share), and no more than 3 reading threads run; with no share,
   * one request at a time on the build's own thread.
   */
  @Test
  void sixtyFourUrlsUseNoMoreConnectionsThanTheNamespaceShare() throws Exception {
    AtomicInteger inFlight = new AtomicInteger();
    AtomicInteger mostInFlight = new AtomicInteger();
    AtomicInteger mostThreads = new AtomicInteger();
    server.on(
        "/p/",
        ex -> {
          mostInFlight.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
          mostThreads.accumulateAndGet(readingThreads(), Math::max);
          try {
            Thread.sleep(30);
            send(ex, 200, part(0, 100));
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            inFlight.decrementAndGet();
          }
        });
    List<String> urls = IntStream.range(0, 64).mapToObj(i -> server.url("/p/" + i)).toList();

    HttpSourceSettings shared = LOOPBACK_ALLOWED.withPartitionConnections(8, 2);
    // Another read of the namespace holds nothing: the list gets its whole share.
    assertThat(read(source(urls, shared)).count()).isEqualTo(64 * 100);
    assertThat(mostInFlight.get()).as("requests at once").isEqualTo(3);
    assertThat(mostThreads.get()).as("reading threads").isBetween(1, 3);
    assertThat(shared.partitionConnections().inUse()).isZero();
    assertThat(server.requests).hasSize(64);

    mostInFlight.set(0);
    mostThreads.set(0);
    HttpSourceSettings none = LOOPBACK_ALLOWED.withPartitionConnections(8, 0);
    assertThat(read(source(urls, none)).count()).isEqualTo(64 * 100);
    assertThat(mostInFlight.get()).as("requests at once without a share").isEqualTo(1);
    assertThat(mostThreads.get()).as("reading threads without a share").isZero();
  }

  private static int readingThreads() {
    return (int)
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith("http-partition-") && t.isAlive())
            .count();
  }

  /** Four bodies of 300 bytes under a bound of 1000: each alone is read, together they fail. */
  @Test
  void theBodyBoundIsForAllUrlsTogether() throws Exception {
    byte[] body = "1234567\n".repeat(37).concat("123\n").getBytes(StandardCharsets.US_ASCII);
    assertThat(body).hasSize(300);
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      server.on("/b" + i, ex -> send(ex, 200, body));
      urls.add(server.url("/b" + i));
    }
    HttpSourceSettings settings =
        LOOPBACK_ALLOWED
            .withLimits(1024, 1000, Duration.ofMinutes(1))
            .withPartitionConnections(8, 3);
    for (String url : urls) {
      assertThat(read(new HttpSource(null, HttpSourceTest.spec(url, null), settings)).count())
          .isEqualTo(38);
    }
    for (HttpSourceSettings each : List.of(settings, settings.withPartitionConnections(0, 0))) {
      SourceException e = failure(() -> read(source(urls, each)));
      assertThat(e.reason()).isEqualTo(Reasons.SOURCE_LIMIT_EXCEEDED);
      assertThat(e.getMessage())
          .contains("the bodies of the 4 URLs are larger than 1000 bytes together")
          .contains("BLOOM_HTTP_MAX_BODY_BYTES");
    }
  }

  /**
   * Four URLs of 600 ms each, read one after the other, under a read time of 1.5 s: each alone is
   * in time, the list is not, and fails as one URL over the bound does.
   */
  @Test
  void theReadTimeIsForAllUrlsTogether() throws Exception {
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      server.on(
          "/slow" + i,
          ex -> {
            ex.sendResponseHeaders(200, 0);
            try (OutputStream out = ex.getResponseBody()) {
              out.write("1\n".getBytes(StandardCharsets.US_ASCII));
              out.flush();
              Thread.sleep(600);
              out.write("2\n".getBytes(StandardCharsets.US_ASCII));
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      urls.add(server.url("/slow" + i));
    }
    HttpSourceSettings settings =
        LOOPBACK_ALLOWED
            .withLimits(1024, 1 << 20, Duration.ofMillis(1500))
            .withPartitionConnections(0, 0);
    assertThat(read(new HttpSource(null, HttpSourceTest.spec(urls.get(0), null), settings)).count())
        .isEqualTo(2);
    long start = System.nanoTime();
    SourceException e = failure(() -> read(source(urls, settings)));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(e.getMessage())
        .contains("reading the 4 URLs")
        .contains("took longer than 1500 ms (the operator's BLOOM_HTTP_MAX_READ_TIME)");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
  }

  /**
   * One URL of the list on 127.0.0.2, which the policy refuses: neither it nor the allowed URLs
   * before it are requested, for the change token as for the read.
   */
  @Test
  void aRefusedHostInTheListFailsTheListBeforeAnyRequest() throws Exception {
    server.on("/ids", ex -> send(ex, 200, part(0, 10)));
    try (HttpTestServer internal = new HttpTestServer(InetAddress.getByName("127.0.0.2"))) {
      internal.on("/ids", ex -> send(ex, 200, part(0, 10)));
      HttpSourceSettings settings =
          HttpSourceSettings.defaults()
              .withEgress(EgressPolicy.of("127.0.0.1/32", null))
              .withPartitionConnections(8, 3);
      HttpUrlsSource source =
          source(List.of(server.url("/ids"), server.url("/ids"), internal.url("/ids")), settings);
      for (ThrowingRead call : List.<ThrowingRead>of(source::changeToken, () -> read(source))) {
        SourceException e = failure(call::run);
        assertThat(e.reason()).isEqualTo(Reasons.SOURCE_ADDRESS_NOT_ALLOWED);
        assertThat(e.getMessage()).startsWith("not connecting to " + internal.url("/ids"));
      }
      assertThat(internal.requests).isEmpty();
      assertThat(server.requests).isEmpty();
    }
  }

  @FunctionalInterface
  private interface ThrowingRead {
    Object run() throws Exception;
  }

  /**
   * A URL that fails while another streams slowly: the read fails with that URL's error at once,
   * the other's download is cut off, and the threads and their share are given back.
   */
  @Test
  void oneFailingUrlStopsEveryOther() throws Exception {
    AtomicInteger cutOff = new AtomicInteger();
    server.on("/endless", endless(cutOff));
    server.on(
        "/broken",
        ex -> {
          try {
            Thread.sleep(300);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          send(ex, 500, MARKER.getBytes(StandardCharsets.UTF_8));
        });
    HttpSourceSettings settings = LOOPBACK_ALLOWED.withPartitionConnections(8, 3);
    long start = System.nanoTime();
    SourceException e =
        failure(
            () ->
                read(
                    source(
                        List.of(server.url("/endless"), server.url("/broken?token=" + MARKER)),
                        settings)));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e).hasMessage("HTTP 500 from " + server.url("/broken") + "?…");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    await().atMost(Duration.ofSeconds(10)).until(() -> cutOff.get() == 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> readingThreads() == 0);
    assertThat(settings.partitionConnections().inUse()).isZero();
  }

  /** A line every 100 ms for a minute; counts the downloads the client cut off. */
  private static HttpHandler endless(AtomicInteger cutOff) {
    return ex -> {
      ex.sendResponseHeaders(200, 0);
      try (OutputStream out = ex.getResponseBody()) {
        for (int i = 0; i < 600; i++) {
          out.write((i + "\n").getBytes(StandardCharsets.US_ASCII));
          out.flush();
          Thread.sleep(100);
        }
      } catch (IOException e) {
        cutOff.incrementAndGet();
        throw e;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    };
  }

  /** The build stops the read (a stall, its time bound): every URL's download ends at once. */
  @Test
  void cancelEndsEveryUrlsDownload() throws Exception {
    AtomicInteger cutOff = new AtomicInteger();
    server.on("/endless/", endless(cutOff));
    HttpUrlsSource source =
        source(
            IntStream.range(0, 3).mapToObj(i -> server.url("/endless/" + i)).toList(),
            LOOPBACK_ALLOWED.withPartitionConnections(8, 3));
    Thread canceller =
        new Thread(
            () -> {
              await().atMost(Duration.ofSeconds(10)).until(() -> server.requests.size() == 3);
              source.cancel();
            });
    canceller.start();
    failure(() -> read(source));
    canceller.join();
    await().atMost(Duration.ofSeconds(10)).until(() -> cutOff.get() == 3);
  }

  /** The token changes when one URL's does, and is null when one URL has none. */
  @Test
  void theChangeTokenIsEveryUrlsTogether() throws Exception {
    String[] etags = {"\"a1\"", "\"b1\""};
    for (int i = 0; i < 2; i++) {
      int n = i;
      server.on(
          "/t" + i,
          ex -> {
            if (etags[n] != null) {
              ex.getResponseHeaders().add("ETag", etags[n]);
            }
            send(ex, 200, part(0, 10));
          });
    }
    HttpUrlsSource source = source(List.of(server.url("/t0"), server.url("/t1")), LOOPBACK_ALLOWED);
    String first = source.changeToken();
    assertThat(first).startsWith("urls:").isEqualTo(source.changeToken());
    etags[1] = "\"b2\"";
    assertThat(source.changeToken()).startsWith("urls:").isNotEqualTo(first);
    etags[0] = null;
    assertThat(source.changeToken()).isNull();
  }

  @Test
  void theSharesComeFromTheEnvironment() {
    assertThat(HttpSourceSettings.defaults().partitionConnections())
        .isEqualTo(new PartitionShares(8, 3));
    assertThat(
            HttpSourceSettings.fromEnvironment(
                    java.util.Map.of(
                        "BLOOM_HTTP_PARTITION_CONNECTIONS", "5",
                        "BLOOM_HTTP_PARTITION_CONNECTIONS_PER_NAMESPACE", "0"))
                .partitionConnections())
        .isEqualTo(new PartitionShares(5, 0));
    assertThatThrownBy(
            () ->
                HttpSourceSettings.fromEnvironment(
                    java.util.Map.of("BLOOM_HTTP_PARTITION_CONNECTIONS", "-1")))
        .hasMessageContaining("BLOOM_HTTP_PARTITION_CONNECTIONS");
  }

  /** What the schema refuses, refused again by the operator for resources that slipped past. */
  @Test
  void invalidListsAreInvalidSpecs() {
    String ok = server.url("/ids");
    HttpSourceSpec both = spec(List.of(ok));
    both.setUrl(ok);
    assertThat(source(List.of(ok), LOOPBACK_ALLOWED).description()).isEqualTo("http " + ok);
    assertThatThrownBy(
            () ->
                new HttpUrlsSource(
                    null, both, LOOPBACK_ALLOWED, EgressCheckedDns.Lookup.SYSTEM, "ns"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spec.source.http: set only one of url and urls");
    assertThatThrownBy(() -> new HttpSource(null, both, LOOPBACK_ALLOWED))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spec.source.http: set only one of url and urls");
    assertThatThrownBy(() -> source(List.of(), LOOPBACK_ALLOWED))
        .hasMessage("spec.source.http.urls must list 1 to 64 URLs");
    assertThatThrownBy(() -> source(Collections.nCopies(65, ok), LOOPBACK_ALLOWED))
        .hasMessage("spec.source.http.urls must list 1 to 64 URLs");
    assertThat(source(Collections.nCopies(64, ok), LOOPBACK_ALLOWED).description())
        .isEqualTo("http " + ok + " and 63 more URLs");
    assertThatThrownBy(
            () ->
                source(
                    List.of(ok, "ftp://user:" + MARKER + "@host/ids?x=" + MARKER),
                    LOOPBACK_ALLOWED))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spec.source.http.urls[1] must be an http:// or https:// URL with a host");
    assertThatThrownBy(() -> source(List.of(ok, "http://host/ids " + MARKER), LOOPBACK_ALLOWED))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("spec.source.http.urls[1] is not a URL")
        .hasMessageNotContaining(MARKER);
  }
}
