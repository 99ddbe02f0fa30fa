package io.bloomoperator.source;

import static io.bloomoperator.source.HttpSourceTest.LOOPBACK_ALLOWED;
import static io.bloomoperator.source.HttpSourceTest.failure;
import static io.bloomoperator.source.HttpSourceTest.parser;
import static io.bloomoperator.source.HttpSourceTest.spec;
import static io.bloomoperator.source.HttpTestServer.send;
import static io.bloomoperator.source.HttpTestServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.zip.Deflater;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What one http source may cost the operator: line length, body size, time, threads. */
@Timeout(30)
class HttpSourceLimitsTest {

  private final HttpTestServer server = new HttpTestServer();
  private final List<Object> keys = new ArrayList<>();

  @AfterEach
  void stop() {
    server.close();
  }

  private static HttpSource source(String url, HttpSourceSettings settings) {
    return new HttpSource(null, spec(url, null), settings);
  }

  private static HttpSourceSettings limits(int lineBytes, long bodyBytes, Duration readTime) {
    return LOOPBACK_ALLOWED.withLimits(lineBytes, bodyBytes, readTime);
  }

  @Test
  void endlessLineFailsAtTheDefaultLimitWithoutBeingRead() {
    AtomicBoolean cutOff = new AtomicBoolean();
    server.on(
        "/ids",
        ex -> {
          ex.sendResponseHeaders(200, 0);
          OutputStream out = ex.getResponseBody();
          out.write("id-1\n".getBytes(StandardCharsets.UTF_8));
          byte[] chunk = new byte[64 * 1024];
          Arrays.fill(chunk, (byte) 'x');
          try {
            // 4 GiB on one line, more than a String can hold: only a reader that gives up at the
            // limit ends this.
            for (int i = 0; i < 65536; i++) {
              out.write(chunk);
            }
            out.close();
          } catch (IOException e) {
            cutOff.set(true);
            throw e;
          }
        });
    SourceException e =
        failure(
            () ->
                source(server.url("/ids"), LOOPBACK_ALLOWED)
                    .readKeys(parser(KeyType.STRING, keys)));
    assertThat(e.reason())
        .isEqualTo(Reasons.SOURCE_LIMIT_EXCEEDED)
        .isEqualTo("SourceLimitExceeded");
    assertThat(e)
        .hasMessage(
            "download from "
                + server.url("/ids")
                + " stopped: line 2 is longer "
                + "than 65536 bytes (the operator's BLOOM_HTTP_MAX_LINE_BYTES)");
    assertThat(keys).containsExactly("id-1");
    await().atMost(Duration.ofSeconds(20)).untilTrue(cutOff);
  }

  @Test
  void lineOfExactlyTheLimitIsAKey() throws Exception {
    String longest = "k".repeat(1000);
    server.on("/ok", ex -> send(ex, 200, text(List.of("a", longest, "b"))));
    server.on("/long", ex -> send(ex, 200, text(List.of("a", longest + "k", "b"))));
    HttpSourceSettings settings = limits(1000, 1 << 20, Duration.ofMinutes(1));
    source(server.url("/ok"), settings).readKeys(parser(KeyType.STRING, keys));
    assertThat(keys).containsExactly("a", longest, "b");
    SourceException e =
        failure(
            () ->
                source(server.url("/long"), settings)
                    .readKeys(parser(KeyType.STRING, new ArrayList<>())));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_LIMIT_EXCEEDED);
    assertThat(e.getMessage()).contains("line 2 is longer than 1000 bytes");
  }

  @Test
  void gzipBombFailsAtTheBodyLimit() throws IOException {
    // 256 MiB of short lines in about 250 KB of gzip, served as a .gz file and, wrapped once
    // more, with Content-Encoding: gzip.
    ByteArrayOutputStream packed = new ByteArrayOutputStream();
    try (OutputStream out =
        new GZIPOutputStream(packed, 64 * 1024) {
          {
            def.setLevel(Deflater.BEST_COMPRESSION);
          }
        }) {
      byte[] lines = "0000000\n".repeat(8192).getBytes(StandardCharsets.US_ASCII);
      for (int i = 0; i < 4096; i++) {
        out.write(lines);
      }
    }
    byte[] bomb = packed.toByteArray();
    assertThat(bomb.length).isLessThan(1 << 20);
    server.on("/ids.gz", ex -> send(ex, 200, bomb));
    server.on(
        "/encoded",
        ex -> {
          ex.getResponseHeaders().add("Content-Encoding", "gzip");
          send(ex, 200, HttpTestServer.gzip(bomb));
        });
    long limit = 16L * 1024 * 1024;
    HttpSourceSettings settings = limits(1024, limit, Duration.ofMinutes(1));
    for (String path : List.of("/ids.gz", "/encoded")) {
      List<Object> read = new ArrayList<>();
      SourceException e =
          failure(
              () ->
                  source(server.url(path), settings)
                      .readKeys(
                          new LineParser(
                              KeyType.STRING,
                              new LineParser.KeyConsumer() {
                                @Override
                                public void putString(String key) {
                                  read.add(Boolean.TRUE);
                                }

                                @Override
                                public void putLong(long key) {}
                              },
                              0)));
      assertThat(e.reason()).as(path).isEqualTo(Reasons.SOURCE_LIMIT_EXCEEDED);
      assertThat(e)
          .hasMessage(
              "download from "
                  + server.url(path)
                  + " stopped: the body is "
                  + "larger than "
                  + limit
                  + " bytes after decompression (the operator's "
                  + "BLOOM_HTTP_MAX_BODY_BYTES)");
      assertThat((long) read.size()).as(path).isLessThanOrEqualTo(limit / 8);
    }
  }

  @Test
  void tricklingServerEndsAtTheTotalReadTime() {
    server.on(
        "/trickle",
        ex -> {
          ex.sendResponseHeaders(200, 0);
          OutputStream out = ex.getResponseBody();
          // A key every 300 ms for up to 25 s: never a stall of readTimeout (1 s).
          for (int i = 0; i < 80; i++) {
            out.write(("k" + i + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            try {
              Thread.sleep(300);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
          }
          out.close();
        });
    HttpSourceSpec spec = spec(server.url("/trickle"), "1s");
    HttpSource source = new HttpSource(null, spec, limits(1024, 1 << 20, Duration.ofMillis(2500)));
    long start = System.nanoTime();
    SourceException e = failure(() -> source.readKeys(parser(KeyType.STRING, keys)));
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(e)
        .hasMessage(
            "reading "
                + server.url("/trickle")
                + " took longer than 2500 ms "
                + "(the operator's BLOOM_HTTP_MAX_READ_TIME)");
    assertThat(keys).as("keys before the deadline were read").isNotEmpty();
    assertThat(took)
        .as("ended by the total limit, not by the server")
        .isLessThan(Duration.ofSeconds(15));
  }

  @Test
  void totalReadTimeCoversRedirectsAndTheChangeToken() {
    server.on(
        "/slow",
        ex -> {
          try {
            Thread.sleep(800);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          ex.getResponseHeaders().add("Location", "/slow");
          send(ex, 302, new byte[0]);
        });
    // Each hop answers within readTimeout; five of them do not fit into 2 s.
    SourceException e =
        failure(
            () ->
                source(server.url("/slow"), limits(1024, 1024, Duration.ofSeconds(2)))
                    .changeToken());
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(e.getMessage()).contains("BLOOM_HTTP_MAX_READ_TIME");
  }

  @Test
  void manyConnectTimeoutsDoNotAddThreads() throws Exception {
    server.on("/ids", ex -> send(ex, 200, text(List.of("a"))));
    readWithConnectTimeout(1);
    readWithConnectTimeout(2);
    int before = clientThreads();
    for (int i = 3; i <= 40; i++) {
      readWithConnectTimeout(i);
    }
    assertThat(clientThreads())
        .as("threads after 38 more distinct connectTimeouts")
        .isLessThanOrEqualTo(before + 2);
  }

  private void readWithConnectTimeout(int seconds) throws SourceException {
    HttpSourceSpec spec = spec(server.url("/ids"), null);
    spec.setConnectTimeout(seconds + "s");
    new HttpSource(null, spec, LOOPBACK_ALLOWED)
        .readKeys(parser(KeyType.STRING, new ArrayList<>()));
  }

  /** Live threads except the test server's own. */
  private static int clientThreads() {
    return (int)
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && !t.getName().startsWith("http-test-server"))
            .count();
  }
}
