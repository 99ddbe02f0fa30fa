package io.bloomoperator.source;

import static io.bloomoperator.source.HttpSourceTest.LOOPBACK_ALLOWED;
import static io.bloomoperator.source.HttpSourceTest.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.KeyType;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The host check a URL list runs before any request, against a resolver that is slow or hangs (a
 * tenant's own DNS zone can answer as slowly as it likes): it ends at the read's deadline or a
 * cancel, at most one look-up later, and a list names few hosts, so its thread is not held for
 * minutes on every reconcile.
 */
@Timeout(30)
class HttpUrlsHostCheckTest {

  private static List<String> urlsOnHosts(int hosts) {
    return IntStream.range(0, hosts).mapToObj(i -> "http://h" + i + ".example/ids.txt").toList();
  }

  private static HttpUrlsSource source(
      List<String> urls, HttpSourceSettings settings, EgressCheckedDns.Lookup resolver) {
    return new HttpUrlsSource(null, HttpUrlsSourceTest.spec(urls), settings, resolver, "ns");
  }

  private static InetAddress[] loopback() throws java.net.UnknownHostException {
    return new InetAddress[] {InetAddress.getByAddress(new byte[] {127, 0, 0, 1})};
  }

  @Test
  void slowLookUpsEndAtTheReadsDeadline() {
    AtomicInteger lookUps = new AtomicInteger();
    EgressCheckedDns.Lookup slow =
        host -> {
          lookUps.incrementAndGet();
          try {
            Thread.sleep(400);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return loopback();
        };
    HttpUrlsSource source =
        source(
            urlsOnHosts(HttpSourceSpec.MAX_URL_HOSTS),
            LOOPBACK_ALLOWED.withLimits(64 * 1024, 1 << 20, Duration.ofMillis(900)),
            slow);

    long start = System.nanoTime();
    SourceException e = failure(source::changeToken);
    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);

    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_TIMEOUT);
    assertThat(e.getMessage()).contains("BLOOM_HTTP_MAX_READ_TIME").doesNotContain("example");
    assertThat(lookUps.get()).as("one look-up past the deadline at most").isLessThanOrEqualTo(4);
    assertThat(took).isLessThan(8 * 400);
  }

  @Test
  void aCancelEndsTheCheckAfterTheLookUpUnderWay() throws Exception {
    AtomicInteger lookUps = new AtomicInteger();
    CountDownLatch inLookUp = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    EgressCheckedDns.Lookup hanging =
        host -> {
          lookUps.incrementAndGet();
          inLookUp.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return loopback();
        };
    HttpUrlsSource source =
        source(urlsOnHosts(HttpSourceSpec.MAX_URL_HOSTS), LOOPBACK_ALLOWED, hanging);
    Thread canceller =
        new Thread(
            () -> {
              try {
                inLookUp.await();
                source.cancel();
                release.countDown();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    canceller.start();

    SourceException e =
        failure(
            () -> source.readKeys(HttpSourceTest.parser(KeyType.LONG, new ArrayList<>(), 1000)));
    canceller.join();

    assertThat(e.reason()).isEqualTo(Reasons.SOURCE_UNREADABLE);
    assertThat(e.getMessage()).contains("stopped");
    assertThat(lookUps.get()).as("no host looked up after the cancel").isEqualTo(1);
  }

  @Test
  void aListNamesAtMostEightHostsAndNoLongUrls() {
    EgressCheckedDns.Lookup never =
        host -> {
          throw new AssertionError("nothing is looked up while the spec is judged");
        };
    assertThat(source(urlsOnHosts(HttpSourceSpec.MAX_URL_HOSTS), LOOPBACK_ALLOWED, never))
        .isNotNull();
    assertThatThrownBy(
            () -> source(urlsOnHosts(HttpSourceSpec.MAX_URL_HOSTS + 1), LOOPBACK_ALLOWED, never))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spec.source.http.urls name 9 distinct hosts; at most 8 are allowed");

    String longUrl = "http://h0.example/" + "a".repeat(HttpSourceSpec.MAX_URL_LENGTH);
    assertThatThrownBy(() -> source(List.of(longUrl), LOOPBACK_ALLOWED, never))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("spec.source.http.urls[0] is longer than 2048 characters");
  }
}
