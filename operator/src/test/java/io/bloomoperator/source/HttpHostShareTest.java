package io.bloomoperator.source;

import static io.bloomoperator.source.HttpSourceTest.LOOPBACK_ALLOWED;
import static io.bloomoperator.source.HttpSourceTest.failure;
import static io.bloomoperator.source.HttpSourceTest.parser;
import static io.bloomoperator.source.HttpSourceTest.spec;
import static io.bloomoperator.source.HttpTestServer.send;
import static io.bloomoperator.source.HttpTestServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Attack: one namespace's builds all download from one host, slowly, and hold its connections. The
 * shared pool has {@value HttpClients#MAX_PER_ROUTE} connections per host; without a share per
 * namespace, another tenant's source on the same host (a shared export service, an object store)
 * waits for the whole of {@code BLOOM_HTTP_MAX_READ_TIME}.
 */
@Timeout(60)
class HttpHostShareTest {

  private final HttpTestServer server = new HttpTestServer();
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger holding = new AtomicInteger();
  private final AtomicInteger mostHeld = new AtomicInteger();
  private final ExecutorService attackers = Executors.newFixedThreadPool(HttpClients.MAX_PER_ROUTE);

  @AfterEach
  void stop() throws InterruptedException {
    release.countDown();
    attackers.shutdown();
    attackers.awaitTermination(20, TimeUnit.SECONDS);
    server.close();
  }

  @Test
  void oneNamespaceCannotTakeEveryConnectionToAHost() throws Exception {
    server.on(
        "/hold",
        ex -> {
          mostHeld.accumulateAndGet(holding.incrementAndGet(), Math::max);
          try {
            ex.sendResponseHeaders(200, 0);
            OutputStream out = ex.getResponseBody();
            out.write("held\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            release.await(30, TimeUnit.SECONDS);
            out.close();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            holding.decrementAndGet();
          }
        });
    server.on("/ids", ex -> send(ex, 200, text(List.of("a", "b"))));
    // As many of the attacker's builds as the pool has connections to the host (at most
    // BLOOM_MAX_BUILDS_PER_NAMESPACE = 8 run at once).
    List<Future<?>> attacks = new ArrayList<>();
    for (int i = 0; i < HttpClients.MAX_PER_ROUTE; i++) {
      attacks.add(
          attackers.submit(
              () -> {
                source("attacker", "/hold").readKeys(parser(KeyType.STRING, new ArrayList<>()));
                return null;
              }));
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> holding.get() >= HostShares.PER_NAMESPACE);
    Thread.sleep(300); // any attacker still able to connect has done so

    List<Object> keys = new ArrayList<>();
    long start = System.nanoTime();
    source("victim", "/ids").readKeys(parser(KeyType.STRING, keys));
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(keys).containsExactly("a", "b");
    assertThat(took)
        .as("the victim did not wait for the attacker")
        .isLessThan(Duration.ofSeconds(3));
    assertThat(mostHeld.get())
        .as("connections the attacker held to the host at once")
        .isEqualTo(HostShares.PER_NAMESPACE);

    release.countDown();
    for (Future<?> attack : attacks) {
      attack.get(20, TimeUnit.SECONDS); // the waiting ones got their turn once the host answered
    }
  }

  @Test
  void aBuildWaitingForItsNamespacesShareEndsAtTheReadTime() throws Exception {
    server.on(
        "/hold",
        ex -> {
          holding.incrementAndGet();
          try {
            ex.sendResponseHeaders(200, 0);
            ex.getResponseBody().flush();
            release.await(30, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            holding.decrementAndGet();
          }
        });
    for (int i = 0; i < HostShares.PER_NAMESPACE; i++) {
      attackers.submit(
          () -> {
            source("busy", "/hold").readKeys(parser(KeyType.STRING, new ArrayList<>()));
            return null;
          });
    }
    await().atMost(Duration.ofSeconds(10)).until(() -> holding.get() == HostShares.PER_NAMESPACE);

    HttpSource waiting =
        new HttpSource(
            null,
            spec(server.url("/hold"), null),
            LOOPBACK_ALLOWED.withLimits(1024, 1 << 20, Duration.ofMillis(1500)),
            EgressCheckedDns.Lookup.SYSTEM,
            "busy");
    long start = System.nanoTime();
    SourceException e = failure(() -> waiting.readKeys(parser(KeyType.STRING, new ArrayList<>())));
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(e.getMessage())
        .isEqualTo(
            "no connection to "
                + server.url("/hold")
                + " within 1500 ms (the operator's BLOOM_HTTP_MAX_READ_TIME): this namespace's"
                + " sources already hold "
                + HostShares.PER_NAMESPACE
                + " connections to that host, its share of "
                + HttpClients.MAX_PER_ROUTE);
    assertThat(took).isLessThan(Duration.ofSeconds(5));
    assertThat(holding.get()).as("no fifth connection").isEqualTo(HostShares.PER_NAMESPACE);
  }

  private HttpSource source(String namespace, String path) {
    return new HttpSource(
        null,
        spec(server.url(path), "20s"),
        LOOPBACK_ALLOWED.withLimits(1024, 1 << 20, Duration.ofSeconds(25)),
        EgressCheckedDns.Lookup.SYSTEM,
        namespace);
  }
}
