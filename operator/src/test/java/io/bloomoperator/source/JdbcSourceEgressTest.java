package io.bloomoperator.source;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.bloomoperator.api.JdbcSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A jdbc source obeys the egress policy of http sources: a URL naming loopback (as an address, an
 * IPv4-mapped IPv6 address or a host name resolving to it), the metadata endpoint, the operator's
 * own address or a {@code BLOOM_HTTP_DENY} range fails with SourceAddressNotAllowed, and no
 * connection reaches the address: a listener on all of this machine's addresses counts the
 * connections it accepts. Each of the three drivers is tried, since each opens its sockets its own
 * way.
 */
class JdbcSourceEgressTest {

  private ServerSocket listener;
  private final AtomicInteger accepted = new AtomicInteger();
  private Thread acceptor;

  @BeforeEach
  void listen() throws IOException {
    // Every address of this machine: loopback and its own (pod) addresses alike.
    listener = new ServerSocket(0, 50);
    acceptor =
        new Thread(
            () -> {
              while (!listener.isClosed()) {
                try (Socket ignored = listener.accept()) {
                  accepted.incrementAndGet();
                } catch (IOException e) {
                  if (!listener.isClosed()) {
                    throw new UncheckedIOException(e);
                  }
                }
              }
            },
            "egress-test-listener");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  @AfterEach
  void close() throws Exception {
    listener.close();
    acceptor.join(5_000);
  }

  private static SourceException read(JdbcSourceSettings settings, String url) {
    JdbcSourceSpec spec = new JdbcSourceSpec();
    spec.setUrl(url);
    spec.setQuery("select 1");
    spec.setQueryTimeout("5s");
    JdbcSource source = new JdbcSource(spec, settings, () -> new JdbcCredentials("u", "p"));
    return catchThrowableOfType(
        SourceException.class,
        () -> source.readKeys(new LineParser(KeyType.LONG, new CollectedKeys(), 0)));
  }

  private void assertRefused(JdbcSourceSettings settings, String url, String because) {
    long start = System.nanoTime();
    SourceException e = read(settings, url);
    assertThat(e).as(url).isNotNull();
    assertThat(e.reason())
        .as(url + ": " + e.getMessage())
        .isEqualTo(Reasons.SOURCE_ADDRESS_NOT_ALLOWED);
    assertThat(e.getMessage()).as(url).contains(because);
    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .as(url + ": refused before any connect timeout")
        .isLessThan(Duration.ofSeconds(10));
    assertThat(accepted.get()).as(url + ": connections that reached the listener").isZero();
  }

  @Test
  void loopbackInEveryFormIsRefusedByEveryDriverBeforeAnythingConnects() {
    JdbcSourceSettings defaults = JdbcSourceSettings.defaults();
    int port = listener.getLocalPort();
    for (String scheme : List.of("jdbc:postgresql:", "jdbc:mysql:", "jdbc:mariadb:")) {
      assertRefused(defaults, scheme + "//127.0.0.1:" + port + "/db", "is a loopback address");
      assertRefused(
          defaults, scheme + "//[::ffff:127.0.0.1]:" + port + "/db", "is a loopback address");
      // A name: refused by the operator's socket, on the address the driver resolved.
      assertRefused(defaults, scheme + "//localhost:" + port + "/db", "is a loopback address");
    }
    assertRefused(defaults, "jdbc:postgresql://127.1:" + port + "/db", "dotted-quad");
  }

  @Test
  void theMetadataEndpointIsRefusedWithoutWaitingForIt() {
    for (String scheme : List.of("jdbc:postgresql:", "jdbc:mysql:", "jdbc:mariadb:")) {
      assertRefused(
          JdbcSourceSettings.defaults(),
          scheme + "//169.254.169.254:80/db",
          "is a link-local address");
    }
  }

  @Test
  void denyRangesBeatAllowRanges() {
    JdbcSourceSettings denied =
        JdbcSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.0/8", "127.0.0.1/32"));
    int port = listener.getLocalPort();
    for (String scheme : List.of("jdbc:postgresql:", "jdbc:mysql:", "jdbc:mariadb:")) {
      assertRefused(denied, scheme + "//localhost:" + port + "/db", "BLOOM_HTTP_DENY");
    }
  }

  /** Even where loopback is allowed, the operator's own address is not a database. */
  @Test
  void theOperatorsOwnAddressIsRefused() throws Exception {
    String own =
        NetworkInterface.networkInterfaces()
            .filter(i -> !isLoopback(i))
            .flatMap(NetworkInterface::inetAddresses)
            .filter(a -> a instanceof Inet4Address)
            .map(InetAddress::getHostAddress)
            .findFirst()
            .orElse(null);
    assumeTrue(own != null, "this machine has a non-loopback IPv4 address");
    assertRefused(
        JdbcTestSettings.LOOPBACK,
        "jdbc:postgresql://" + own + ":" + listener.getLocalPort() + "/db",
        "is an address of the operator itself");
  }

  private static boolean isLoopback(NetworkInterface i) {
    try {
      return i.isLoopback() || !i.isUp();
    } catch (SocketException e) {
      return true;
    }
  }

  /** The control: allowed, the same URL does reach the listener, so the counts above mean it. */
  @Test
  void anAllowedAddressIsConnectedTo() {
    int port = listener.getLocalPort();
    SourceException e =
        read(JdbcTestSettings.LOOPBACK, "jdbc:postgresql://127.0.0.1:" + port + "/db");
    assertThat(e).isNotNull();
    assertThat(e.reason()).isNotEqualTo(Reasons.SOURCE_ADDRESS_NOT_ALLOWED);
    assertThat(accepted.get()).isPositive();
  }
}
