package io.bloomoperator.source;

import static io.bloomoperator.source.HttpTestServer.gzip;
import static io.bloomoperator.source.HttpTestServer.send;
import static io.bloomoperator.source.HttpTestServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.zip.GZIPOutputStream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HttpSource against the JDK's HTTP server; no Kubernetes involved (no headersSecret). The server
 * listens on loopback, which the operator refuses by default: these tests allow it through the
 * egress policy, as an administrator would with BLOOM_HTTP_ALLOW.
 */
@Timeout(20)
class HttpSourceTest {

  /** The defaults, plus loopback allowed. */
  static final HttpSourceSettings LOOPBACK_ALLOWED =
      HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.0/8, ::1", null));

  /** Stands for anything a server may send that must never be repeated. */
  static final String MARKER = "S3CRET-MARKER-7f3a";

  private final HttpTestServer server = new HttpTestServer();
  private final List<Object> keys = new ArrayList<>();

  @AfterEach
  void stop() {
    server.close();
  }

  private static HttpSource source(String url) {
    return source(url, null);
  }

  private static HttpSource source(String url, String readTimeout) {
    return new HttpSource(null, spec(url, readTimeout), LOOPBACK_ALLOWED);
  }

  static HttpSourceSpec spec(String url, String readTimeout) {
    HttpSourceSpec spec = new HttpSourceSpec();
    spec.setUrl(url);
    spec.setReadTimeout(readTimeout);
    return spec;
  }

  LineParser parser(KeyType type) {
    return parser(type, keys);
  }

  static LineParser parser(KeyType type, List<Object> keys) {
    return parser(type, keys, 0);
  }

  /** A parser that tolerates {@code maxMalformed} malformed lines. */
  static LineParser parser(KeyType type, List<Object> keys, long maxMalformed) {
    return new LineParser(
        type,
        new LineParser.KeyConsumer() {
          @Override
          public void putString(String key) {
            keys.add(key);
          }

          @Override
          public void putLong(long key) {
            keys.add(key);
          }
        },
        maxMalformed);
  }

  private List<Object> read(HttpSource source) throws SourceException {
    source.readKeys(parser(KeyType.STRING));
    return keys;
  }

  /** The SourceException {@code call} throws; none of its messages may hold {@link #MARKER}. */
  static SourceException failure(ThrowingCallable call) {
    Throwable thrown = org.assertj.core.api.Assertions.catchThrowable(call);
    assertThat(thrown).isInstanceOf(SourceException.class);
    for (Throwable t = thrown; t != null; t = t.getCause()) {
      assertThat(String.valueOf(t.getMessage())).doesNotContain(MARKER);
    }
    return (SourceException) thrown;
  }

  private static List<String> ids(int n) {
    return IntStream.range(0, n).mapToObj(i -> "id-" + i).toList();
  }

  @Test
  void plainTextIsReadLineByLineAskingForGzip() throws Exception {
    server.on("/ids.txt", ex -> send(ex, 200, text(ids(1000))));
    assertThat(read(source(server.url("/ids.txt")))).containsExactlyElementsOf(ids(1000));
    HttpTestServer.Request get = server.requests.get(0);
    assertThat(get.method()).isEqualTo("GET");
    assertThat(get.header("Accept-Encoding")).isEqualTo("gzip");
  }

  @Test
  void gzipContentEncodingIsDecoded() throws Exception {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("Content-Encoding", "gzip");
          ex.getResponseHeaders().add("Content-Type", "text/plain");
          send(ex, 200, gzip(text(ids(100_000))));
        });
    assertThat(read(source(server.url("/ids")))).containsExactlyElementsOf(ids(100_000));
  }

  @Test
  void gzipFileIsRecognisedByItsMagicBytes() throws Exception {
    server.on(
        "/ids.txt.gz",
        ex -> {
          ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
          send(ex, 200, gzip(text(ids(50_000))));
        });
    assertThat(read(source(server.url("/ids.txt.gz")))).containsExactlyElementsOf(ids(50_000));
  }

  @Test
  void gzipFileServedWithGzipContentEncodingIsDecodedTwice() throws Exception {
    server.on(
        "/ids.txt.gz",
        ex -> {
          ex.getResponseHeaders().add("Content-Encoding", "gzip");
          send(ex, 200, gzip(gzip(text(ids(10)))));
        });
    assertThat(read(source(server.url("/ids.txt.gz")))).containsExactlyElementsOf(ids(10));
  }

  @Test
  void sharedLineRulesApplyToTheBody() throws Exception {
    byte[] body =
        "\uFEFF42\r\n# exported 2024-05-01\r\n\r\n  7  \r\n-3".getBytes(StandardCharsets.UTF_8);
    server.on("/numbers", ex -> send(ex, 200, body));
    LineParser parser = parser(KeyType.LONG);
    source(server.url("/numbers")).readKeys(parser);
    assertThat(keys).containsExactly(42L, 7L, -3L);
    assertThat(parser.malformed()).isZero();
  }

  @Test
  void malformedLineFailsTheReadAndStopsTheDownload() {
    server.on("/numbers", ex -> send(ex, 200, text(List.of("1", "two", "3"))));
    SourceException e =
        failure(() -> source(server.url("/numbers")).readKeys(parser(KeyType.LONG)));
    assertThat(e.reason()).isEqualTo(Reasons.MALFORMED_KEYS);
    assertThat(e).hasMessageContaining("line 2 (3 characters)").hasMessageNotContaining("two");
  }

  @Test
  void largeExportIsStreamedNotBuffered() throws Exception {
    // ~25 MB of text generated while it is sent, gzip on the wire; the client counts lines.
    int n = 2_000_000;
    server.on(
        "/big.gz",
        ex -> {
          ex.getResponseHeaders().add("Content-Encoding", "gzip");
          ex.sendResponseHeaders(200, 0);
          try (OutputStream out = new GZIPOutputStream(ex.getResponseBody(), 64 * 1024)) {
            StringBuilder batch = new StringBuilder();
            for (int i = 0; i < n; i++) {
              batch.append("customer-").append(i).append('\n');
              if (batch.length() > 60_000) {
                out.write(batch.toString().getBytes(StandardCharsets.UTF_8));
                batch.setLength(0);
              }
            }
            out.write(batch.toString().getBytes(StandardCharsets.UTF_8));
          }
        });
    long[] count = {0};
    String[] last = {null};
    source(server.url("/big.gz"))
        .readKeys(
            new LineParser(
                KeyType.STRING,
                new LineParser.KeyConsumer() {
                  @Override
                  public void putString(String key) {
                    count[0]++;
                    last[0] = key;
                  }

                  @Override
                  public void putLong(long key) {}
                },
                0));
    assertThat(count[0]).isEqualTo(n);
    assertThat(last[0]).isEqualTo("customer-" + (n - 1));
  }

  @Test
  void etagIsTheChangeTokenAndNeedsNoDownload() throws Exception {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("ETag", "\"v1\"");
          ex.getResponseHeaders().add("Last-Modified", "Wed, 01 May 2024 10:00:00 GMT");
          send(ex, 200, text(ids(10)));
        });
    String token = source(server.url("/ids")).changeToken();
    assertThat(token).isEqualTo("etag:" + ChangeTokens.digest("\"v1\"")).doesNotContain("v1");
    assertThat(server.count("HEAD", "/ids")).isEqualTo(1);
    assertThat(server.count("GET", "/ids")).isZero();
  }

  @Test
  void lastModifiedIsTheTokenWithoutEtag() throws Exception {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("Last-Modified", "Wed, 01 May 2024 10:00:00 GMT");
          send(ex, 200, text(ids(10)));
        });
    assertThat(source(server.url("/ids")).changeToken())
        .isEqualTo("last-modified:" + ChangeTokens.digest("Wed, 01 May 2024 10:00:00 GMT"));
  }

  @Test
  void noValidatorMeansNoToken() throws Exception {
    server.on("/ids", ex -> send(ex, 200, text(ids(10))));
    assertThat(source(server.url("/ids")).changeToken()).isNull();
  }

  @Test
  void serverWithoutHeadGivesTheTokenThroughAnAbandonedGet() throws Exception {
    server.on(
        "/ids",
        ex -> {
          if (ex.getRequestMethod().equals("HEAD")) {
            ex.sendResponseHeaders(405, -1);
            return;
          }
          ex.getResponseHeaders().add("ETag", "W/\"abc\"");
          send(ex, 200, text(ids(200_000)));
        });
    assertThat(source(server.url("/ids")).changeToken())
        .isEqualTo("etag:" + ChangeTokens.digest("W/\"abc\""));
    assertThat(server.count("HEAD", "/ids")).isEqualTo(1);
    assertThat(server.count("GET", "/ids")).isEqualTo(1);
  }

  @Test
  void changeTokenReportsErrorsOfTheGetWhenHeadFails() {
    server.on("/gone", ex -> send(ex, 404, "no such export".getBytes(StandardCharsets.UTF_8)));
    SourceException e = failure(() -> source(server.url("/gone")).changeToken());
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_NOT_FOUND);
    assertThat(e).hasMessage("HTTP 404 from " + server.url("/gone"));
  }

  @Test
  void notFoundIsSourceNotFound() {
    server.on("/missing", ex -> send(ex, 404, new byte[0]));
    SourceException e = failure(() -> read(source(server.url("/missing"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_NOT_FOUND).isEqualTo("SourceNotFound");
    assertThat(e).hasMessage("HTTP 404 from " + server.url("/missing"));
  }

  @Test
  void serverErrorReportsTheStatusAndNeverTheBody() {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("Content-Type", "text/plain; charset=utf-8");
          send(ex, 500, ("database on fire, password=" + MARKER).getBytes(StandardCharsets.UTF_8));
        });
    SourceException e = failure(() -> read(source(server.url("/ids"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e).hasMessage("HTTP 500 from " + server.url("/ids"));
    SourceException token = failure(() -> source(server.url("/ids")).changeToken());
    assertThat(token).hasMessage("HTTP 500 from " + server.url("/ids"));
  }

  @Test
  void unsupportedContentEncodingIsNotQuoted() {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("Content-Encoding", "br-" + MARKER);
          send(ex, 200, text(ids(10)));
        });
    SourceException e = failure(() -> read(source(server.url("/ids"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e)
        .hasMessage(
            "body of "
                + server.url("/ids")
                + " has an unsupported "
                + "Content-Encoding (only gzip is accepted)");
  }

  @Test
  void redirectLocationsAreNotQuoted() {
    server.on(
        "/scheme",
        ex -> {
          ex.getResponseHeaders().add("Location", "ftp://" + MARKER + ".example/ids");
          send(ex, 302, new byte[0]);
        });
    server.on(
        "/unknown",
        ex -> {
          ex.getResponseHeaders().add("Location", "http://" + MARKER + ".invalid/ids?k=" + MARKER);
          send(ex, 302, new byte[0]);
        });
    SourceException scheme = failure(() -> read(source(server.url("/scheme"))));
    assertThat(scheme.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(scheme)
        .hasMessage(
            "HTTP 302 from "
                + server.url("/scheme")
                + " redirects to a Location that is not an http(s) URL");
    SourceException unknown = failure(() -> read(source(server.url("/unknown"))));
    assertThat(unknown.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(unknown)
        .hasMessage("cannot GET " + server.url("/unknown") + " (after 1 redirect): unknown host");
  }

  @Test
  void invalidResponseIsNotQuoted() throws Exception {
    try (ServerSocket raw = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      Thread responder =
          new Thread(
              () -> {
                try (java.net.Socket socket = raw.accept()) {
                  socket.getInputStream().read(new byte[4096]);
                  socket
                      .getOutputStream()
                      .write(
                          ("HTTP/1.1 " + MARKER + " nonsense\r\n\r\n")
                              .getBytes(StandardCharsets.US_ASCII));
                } catch (IOException ignored) {
                  // the test fails on the client side if this did not happen
                }
              });
      responder.start();
      SourceException e =
          failure(() -> read(source("http://127.0.0.1:" + raw.getLocalPort() + "/ids")));
      responder.join(5_000);
      assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
      assertThat(e.getMessage()).contains("not a valid HTTP response");
    }
  }

  @Test
  void binaryErrorBodyIsNotQuoted() {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
          send(ex, 503, new byte[] {0, 1, 2});
        });
    SourceException e = failure(() -> read(source(server.url("/ids"))));
    assertThat(e).hasMessage("HTTP 503 from " + server.url("/ids"));
  }

  @Test
  void forbiddenPointsAtHeadersSecret() {
    server.on("/ids", ex -> send(ex, 403, "denied".getBytes(StandardCharsets.UTF_8)));
    SourceException e = failure(() -> read(source(server.url("/ids"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e.getMessage())
        .contains("HTTP 403")
        .contains("headersSecret")
        .doesNotContain("denied");
  }

  @Test
  void stalledBodyTimesOutAfterReadTimeout() {
    server.on(
        "/slow",
        ex -> {
          ex.sendResponseHeaders(200, 0);
          OutputStream out = ex.getResponseBody();
          out.write(text(ids(100)));
          out.flush();
          try {
            Thread.sleep(15_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    long start = System.nanoTime();
    SourceException e = failure(() -> read(source(server.url("/slow"), "500ms")));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT).isEqualTo("SourceTimeout");
    assertThat(e.getMessage()).contains("stalled").contains("500 ms");
    assertThat(keys).as("lines before the stall were read").hasSize(100);
  }

  @Test
  void slowButSteadyBodyLongerThanReadTimeoutSucceeds() throws Exception {
    server.on(
        "/trickle",
        ex -> {
          ex.sendResponseHeaders(200, 0);
          OutputStream out = ex.getResponseBody();
          for (int i = 0; i < 10; i++) {
            out.write(("k" + i + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            try {
              Thread.sleep(200);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              return;
            }
          }
          out.close();
        });
    // 2 s in total, never more than 200 ms without data.
    assertThat(read(source(server.url("/trickle"), "700ms"))).hasSize(10);
  }

  @Test
  void responseThatDoesNotStartInTimeTimesOut() {
    server.on(
        "/late",
        ex -> {
          try {
            Thread.sleep(15_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    SourceException e = failure(() -> source(server.url("/late"), "500ms").changeToken());
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(e.getMessage()).contains("no response").contains("readTimeout");
  }

  @Test
  void truncatedBodyIsUnreadable() {
    server.on(
        "/cut",
        ex -> {
          ex.sendResponseHeaders(200, 10_000);
          ex.getResponseBody().write(text(ids(10)));
          ex.getResponseBody().flush();
        });
    SourceException e = failure(() -> read(source(server.url("/cut"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
  }

  @Test
  void corruptGzipIsUnreadable() {
    byte[] broken = gzip(text(ids(1000)));
    byte[] truncated = java.util.Arrays.copyOf(broken, broken.length / 2);
    server.on("/ids.gz", ex -> send(ex, 200, truncated));
    SourceException e = failure(() -> read(source(server.url("/ids.gz"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
  }

  @Test
  void connectionRefusedIsUnreadableWithTheCause() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    SourceException e = failure(() -> read(source("http://127.0.0.1:" + port + "/ids")));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e.getMessage()).contains("127.0.0.1:" + port).containsIgnoringCase("refused");
  }

  @Test
  void unknownHostIsUnreadable() {
    SourceException e = failure(() -> read(source("http://no-such-host.invalid/ids")));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e.getMessage()).contains("unknown host");
  }

  @Test
  void redirectsAreFollowed() throws Exception {
    server.on(
        "/old",
        ex -> {
          ex.getResponseHeaders().add("Location", "/new/ids.txt");
          send(ex, 301, new byte[0]);
        });
    server.on(
        "/new",
        ex -> {
          ex.getResponseHeaders().add("ETag", "\"moved\"");
          send(ex, 200, text(ids(5)));
        });
    HttpSource source = source(server.url("/old"));
    assertThat(source.changeToken()).isEqualTo("etag:" + ChangeTokens.digest("\"moved\""));
    assertThat(read(source)).containsExactlyElementsOf(ids(5));
  }

  @Test
  void redirectLoopIsReported() {
    server.on(
        "/loop",
        ex -> {
          ex.getResponseHeaders().add("Location", "/loop");
          send(ex, 302, new byte[0]);
        });
    SourceException e = failure(() -> read(source(server.url("/loop"))));
    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e.getMessage()).contains("redirects");
  }

  @Test
  void descriptionHidesUserInfoAndQuery() {
    assertThat(
            source("https://user:pw@exports.example.com:8443/ids.txt.gz?X-Amz-Signature=s3cr3t")
                .description())
        .isEqualTo("http https://exports.example.com:8443/ids.txt.gz?…");
    assertThat(source("http://exports.example.com/ids.txt").description())
        .isEqualTo("http http://exports.example.com/ids.txt");
  }

  @Test
  void invalidSpecIsRejectedAsIllegalArgument() {
    assertThatThrownBy(() -> source("ftp://exports.example.com/ids"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("http");
    assertThatThrownBy(() -> source("http://exports.example.com/ids", "soon"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("readTimeout");
    assertThatThrownBy(() -> source("http://exports.example.com:99999/ids?sig=" + MARKER))
        .isInstanceOf(IllegalArgumentException.class)
        .message()
        .doesNotContain(MARKER);
  }
}
