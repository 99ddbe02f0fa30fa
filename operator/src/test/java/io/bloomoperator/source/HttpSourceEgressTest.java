package io.bloomoperator.source;

import static io.bloomoperator.source.HttpSourceTest.failure;
import static io.bloomoperator.source.HttpSourceTest.parser;
import static io.bloomoperator.source.HttpSourceTest.spec;
import static io.bloomoperator.source.HttpTestServer.send;
import static io.bloomoperator.source.HttpTestServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Server-side request forgery through an http source: URLs and redirects that lead to the
 * operator's own machine or the cloud metadata endpoint are refused with {@value
 * HttpSource#ADDRESS_NOT_ALLOWED}, before anything is sent there. Unless a test says otherwise, the
 * operator's default policy applies.
 */
@Timeout(20)
class HttpSourceEgressTest {

  private final HttpTestServer server = new HttpTestServer();
  private final List<HttpTestServer> others = new ArrayList<>();
  private final List<Object> keys = new ArrayList<>();

  @AfterEach
  void stop() {
    server.close();
    others.forEach(HttpTestServer::close);
  }

  private HttpTestServer serverOn(String loopback) throws IOException {
    HttpTestServer other = new HttpTestServer(InetAddress.getByName(loopback));
    others.add(other);
    return other;
  }

  private static HttpSource source(String url, HttpSourceSettings settings) {
    return new HttpSource(null, spec(url, null), settings);
  }

  private static HttpSourceSettings allowing(String allow, String deny) {
    return HttpSourceSettings.defaults().withEgress(EgressPolicy.of(allow, deny));
  }

  private List<Object> read(HttpSource source) throws SourceException {
    source.readKeys(parser(KeyType.STRING, keys));
    return keys;
  }

  /** Both operations are refused with the reason, and nothing reached the server. */
  private static SourceException refused(HttpSource source, HttpTestServer... untouched) {
    SourceException token = failure(source::changeToken);
    SourceException read =
        failure(() -> source.readKeys(parser(KeyType.STRING, new ArrayList<>())));
    assertThat(token.reason())
        .isEqualTo(Reasons.SOURCE_ADDRESS_NOT_ALLOWED)
        .isEqualTo("SourceAddressNotAllowed");
    assertThat(read.reason()).isEqualTo(Reasons.SOURCE_ADDRESS_NOT_ALLOWED);
    assertThat(read).hasMessage(token.getMessage());
    for (HttpTestServer s : untouched) {
      assertThat(s.requests).as("requests that reached the refused server").isEmpty();
    }
    return read;
  }

  private void serveIds() {
    server.on("/ids", ex -> send(ex, 200, text(List.of("a", "b"))));
  }

  @Test
  void loopbackAddressIsRefusedByDefault() {
    serveIds();
    SourceException e = refused(source(server.url("/ids"), HttpSourceSettings.defaults()), server);
    assertThat(e)
        .hasMessage(
            "not connecting to "
                + server.url("/ids")
                + ": the host's address "
                + "is a loopback address (only the operator's BLOOM_HTTP_ALLOW can admit it)");
  }

  @Test
  void localhostIsRefusedAfterItIsResolved() {
    serveIds();
    String url = "http://localhost:" + server.port() + "/ids";
    SourceException e = refused(source(url, HttpSourceSettings.defaults()), server);
    assertThat(e.getMessage()).startsWith("not connecting to " + url + ": ").contains("loopback");
  }

  @Test
  void ipv6LoopbackIsRefused() throws Exception {
    HttpTestServer v6;
    try {
      v6 = serverOn("::1");
    } catch (java.io.UncheckedIOException e) {
      // No IPv6 loopback to listen on: the literal is still refused before any connection, and
      // once allowed the source does try to connect (and fails for want of a listener), so the
      // refusal was the policy's.
      String url = "http://[::1]:" + server.port() + "/ids";
      refused(source(url, HttpSourceSettings.defaults()));
      assertThat(failure(() -> read(source(url, allowing("::1", null)))).reason())
          .isNotEqualTo(Reasons.SOURCE_ADDRESS_NOT_ALLOWED);
      return;
    }
    v6.on("/ids", ex -> send(ex, 200, text(List.of("a"))));
    refused(source(v6.url("/ids"), HttpSourceSettings.defaults()), v6);
    // The same server is reachable once allowed: the refusal was the policy's.
    assertThat(read(source(v6.url("/ids"), allowing("::1", null)))).containsExactly("a");
  }

  @Test
  void ipv6FormsOfLoopbackAreRefused() {
    serveIds();
    for (String host :
        List.of(
            "[::ffff:127.0.0.1]",
            "[::ffff:7f00:1]",
            "[::127.0.0.1]",
            "[0:0:0:0:0:0:0:1]",
            "[64:ff9b::127.0.0.1]")) {
      SourceException e =
          refused(
              source(
                  "http://" + host + ":" + server.port() + "/ids", HttpSourceSettings.defaults()),
              server);
      assertThat(e.getMessage()).as(host).contains("loopback");
    }
  }

  @Test
  void numericHostsThatAreNoDottedQuadAreRefused() throws IOException {
    // All of them mean 127.0.0.2 to some parser.
    HttpTestServer target = serverOn("127.0.0.2");
    target.on("/ids", ex -> send(ex, 200, text(List.of("a"))));
    HttpSourceSettings settings = allowing("127.0.0.1", null);
    for (String host : List.of("2130706434", "127.000.000.002")) {
      SourceException e =
          refused(source("http://" + host + ":" + target.port() + "/ids", settings), target);
      assertThat(e.getMessage()).as(host).contains("not a dotted-quad IPv4 address");
    }
    // java.net.URI rejects 127.2 in a spec, but a redirect's Location is read as HTTP reads a host.
    server.on(
        "/short",
        ex -> {
          ex.getResponseHeaders().add("Location", "http://127.2:" + target.port() + "/ids");
          send(ex, 302, new byte[0]);
        });
    assertThat(refused(source(server.url("/short"), settings), target).getMessage())
        .contains("not a dotted-quad IPv4 address");
  }

  @Test
  void unspecifiedAddressIsRefused() {
    serveIds();
    for (String host : List.of("0.0.0.0", "[::]")) {
      SourceException e =
          refused(
              source(
                  "http://" + host + ":" + server.port() + "/ids", HttpSourceSettings.defaults()),
              server);
      assertThat(e.getMessage()).as(host).contains("unspecified");
    }
  }

  @Test
  void metadataEndpointIsRefusedWithoutAConnectionAttempt() {
    // A literal is judged before any connection: a connect attempt to this address would end
    // in another reason (no route, timeout) or outlive the test's timeout.
    HttpSourceSpec spec =
        spec("http://169.254.169.254/latest/meta-data/iam/security-credentials/", null);
    spec.setConnectTimeout("60s");
    HttpSource source = new HttpSource(null, spec, HttpSourceSettings.defaults());
    SourceException e = refused(source);
    assertThat(e)
        .hasMessage(
            "not connecting to http://169.254.169.254/latest/meta-data/iam/"
                + "security-credentials/: the host's address is a link-local address (e.g. a cloud "
                + "metadata endpoint) (only the operator's BLOOM_HTTP_ALLOW can admit it)");
    assertThat(
            refused(source("http://[fe80::a9fe:a9fe]/", HttpSourceSettings.defaults()))
                .getMessage())
        .contains("link-local");
    assertThat(
            refused(source("http://[fd00:ec2::254]/", HttpSourceSettings.defaults())).getMessage())
        .contains("metadata");
  }

  @Test
  void nameResolvingToLoopbackIsRefusedAfterResolution() {
    serveIds();
    AtomicInteger lookups = new AtomicInteger();
    EgressCheckedDns.Lookup resolver =
        host -> {
          lookups.incrementAndGet();
          assertThat(host).isEqualTo("exports.example.com");
          return new InetAddress[] {InetAddress.getLoopbackAddress()};
        };
    HttpSource source =
        new HttpSource(
            null,
            spec("http://exports.example.com:" + server.port() + "/ids", null),
            HttpSourceSettings.defaults(),
            resolver);
    SourceException e = refused(source, server);
    assertThat(lookups).as("the name was resolved, then refused").hasPositiveValue();
    assertThat(e.getMessage())
        .startsWith("not connecting to http://exports.example.com:" + server.port() + "/ids: ")
        .contains("loopback");
  }

  @Test
  void nameWithOneRefusedAddressAmongAllowedOnesIsRefused() throws IOException {
    HttpTestServer allowed = serverOn("127.0.0.2");
    allowed.on("/ids", ex -> send(ex, 200, text(List.of("a"))));
    EgressCheckedDns.Lookup resolver =
        host ->
            new InetAddress[] {
              InetAddress.getByName("127.0.0.2"), InetAddress.getByName("127.0.0.1")
            };
    HttpSource source =
        new HttpSource(
            null,
            spec("http://exports.example.com:" + allowed.port() + "/ids", null),
            allowing("127.0.0.2", null),
            resolver);
    refused(source, allowed, server);
  }

  @Test
  void connectionGoesToTheAddressThatWasChecked() throws Exception {
    // DNS rebinding: a checker that resolved the name itself would see the first answer (allowed)
    // while the connection used the second (refused). Here there is one resolution per
    // connection, and the connection goes where it points.
    HttpTestServer allowed = serverOn("127.0.0.2");
    allowed.on("/ids", ex -> send(ex, 200, text(List.of("a"))));
    server.on("/ids", ex -> send(ex, 200, text(List.of("rebound"))));
    List<InetAddress> answers =
        Collections.synchronizedList(
            new ArrayList<>(
                List.of(InetAddress.getByName("127.0.0.2"), InetAddress.getByName("127.0.0.1"))));
    EgressCheckedDns.Lookup resolver =
        host ->
            new InetAddress[] {
              answers.isEmpty() ? InetAddress.getByName("127.0.0.1") : answers.remove(0)
            };
    HttpSource source =
        new HttpSource(
            null,
            spec("http://rebinding.example.com:" + allowed.port() + "/ids", null),
            allowing("127.0.0.2", null),
            resolver);
    assertThat(read(source)).containsExactly("a");
    assertThat(allowed.requests).hasSize(1);
    assertThat(server.requests).isEmpty();
  }

  @Test
  void redirectToLoopbackIsNotFollowed() throws IOException {
    HttpTestServer target = serverOn("127.0.0.2");
    target.on("/ids", ex -> send(ex, 200, text(List.of("internal"))));
    server.on(
        "/literal",
        ex -> {
          ex.getResponseHeaders().add("Location", target.url("/ids"));
          send(ex, 302, new byte[0]);
        });
    server.on(
        "/name",
        ex -> {
          ex.getResponseHeaders()
              .add("Location", "http://internal.example.com:" + target.port() + "/ids");
          send(ex, 307, new byte[0]);
        });
    server.on(
        "/metadata",
        ex -> {
          ex.getResponseHeaders().add("Location", "http://169.254.169.254/latest/meta-data/");
          send(ex, 301, new byte[0]);
        });
    // Only the first server's address is allowed.
    HttpSourceSettings settings = allowing("127.0.0.1", null);
    SourceException literal = refused(source(server.url("/literal"), settings), target);
    assertThat(literal)
        .hasMessage(
            "not following the redirect from "
                + server.url("/literal")
                + ": the target's address is a loopback address (only the operator's BLOOM_HTTP_ALLOW "
                + "can admit it)");
    assertThat(refused(source(server.url("/metadata"), settings), target).getMessage())
        .contains("link-local");
    // A redirect to a name is judged on what the name resolves to.
    EgressCheckedDns.Lookup resolver =
        host -> new InetAddress[] {InetAddress.getByName("127.0.0.2")};
    HttpSource byName = new HttpSource(null, spec(server.url("/name"), null), settings, resolver);
    assertThat(refused(byName, target).getMessage())
        .startsWith("not following the redirect")
        .contains("loopback");
    assertThat(server.requests)
        .extracting(HttpTestServer.Request::path)
        .contains("/literal", "/metadata", "/name");
  }

  @Test
  void operatorsOwnAddressIsRefused() throws IOException {
    Optional<InetAddress> own =
        Collections.list(NetworkInterface.getNetworkInterfaces()).stream()
            .flatMap(i -> Collections.list(i.getInetAddresses()).stream())
            .filter(
                a -> a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress())
            .findFirst();
    assumeTrue(own.isPresent(), "no non-loopback IPv4 interface");
    // Refused before connecting, so nothing is sent to the address (a free port besides).
    int port;
    try (ServerSocket free = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = free.getLocalPort();
    }
    SourceException e =
        refused(
            source(
                "http://" + own.get().getHostAddress() + ":" + port + "/ids",
                HttpSourceSettings.defaults()));
    assertThat(e.getMessage()).contains("is an address of the operator itself");
  }

  @Test
  void allowedLoopbackWorksEndToEnd() throws Exception {
    server.on(
        "/ids",
        ex -> {
          ex.getResponseHeaders().add("ETag", "\"1\"");
          send(ex, 200, text(List.of("a", "b")));
        });
    HttpSource source = source(server.url("/ids"), allowing("127.0.0.1/32", null));
    assertThat(source.changeToken()).startsWith("etag:");
    assertThat(read(source)).containsExactly("a", "b");
    HttpSource byName =
        source("http://localhost:" + server.port() + "/ids", allowing("127.0.0.0/8, ::1", null));
    keys.clear();
    assertThat(read(byName)).containsExactly("a", "b");
  }

  @Test
  void denyRulesBeatAllowRules() {
    serveIds();
    SourceException e =
        refused(source(server.url("/ids"), allowing("127.0.0.0/8", "127.0.0.1/32")), server);
    assertThat(e)
        .hasMessage(
            "not connecting to "
                + server.url("/ids")
                + ": the host's address "
                + "is denied by BLOOM_HTTP_DENY");
    SourceException byName =
        refused(
            source(
                "http://localhost:" + server.port() + "/ids", allowing("127.0.0.0/8", "localhost")),
            server);
    assertThat(byName.getMessage()).contains("denied by BLOOM_HTTP_DENY");
  }
}
