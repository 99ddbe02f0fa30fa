package io.bloomoperator.source;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A source that accepts the download and then sends nothing must not take a build slot while it
 * stalls: with one slot (BLOOM_MAX_CONCURRENT_BUILDS=1), another filter publishes while the stalled
 * one waits for its readTimeout (60 s). Before the fix the slot was taken before the source was
 * opened, and every other filter waited the full readTimeout (fault 7 of docs/reliability.md
 * measured 31 s p50 with 30 s timeouts).
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(90)
class StalledSourceBuildSlotTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(Map.of("BLOOM_MAX_CONCURRENT_BUILDS", "1")).toBuilder()
              .http(HttpSourceOperatorTest.SETTINGS)
              .build());

  private final HttpTestServer server = new HttpTestServer();
  private final CountDownLatch release = new CountDownLatch(1);

  @AfterEach
  void stopServer() {
    release.countDown();
    server.close();
  }

  /** Both paths of a build: keys counted first (no expectedInsertions), or filled at once. */
  @ParameterizedTest(name = "expectedInsertions: {0}")
  @ValueSource(strings = {"", "expectedInsertions: 1000"})
  void aStalledDownloadDoesNotHoldTheOnlyBuildSlot(
      String sizing, KubernetesClient client, TestNamespace ns) throws Exception {
    server.on(
        "/stalled.txt",
        exchange -> {
          if (exchange.getRequestMethod().equals("HEAD")) {
            HttpTestServer.send(exchange, 200, new byte[0]);
            return;
          }
          try {
            release.await(5, TimeUnit.MINUTES); // accepted, and nothing is ever sent
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: stalled}
        spec:
          falsePositiveRate: 0.01
          %s
          source: {http: {url: "%s", readTimeout: 60s}}
        """
            .formatted(sizing, server.url("/stalled.txt")));
    await().atMost(Duration.ofSeconds(30)).until(() -> server.count("GET", "/stalled.txt") == 1);

    long created = System.nanoTime();
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: healthy}
        spec:
          falsePositiveRate: 0.01
          source: {inline: [a, b, c]}
        """);
    await()
        .atMost(Duration.ofSeconds(20)) // a third of the stalled source's readTimeout
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                client
                    .resources(BloomFilter.class)
                    .inNamespace(ns.name())
                    .withName("healthy")
                    .get(),
            f -> f != null && f.getStatus() != null && ready(f, "True", "Published"));
    long took = Duration.ofNanos(System.nanoTime() - created).toMillis();
    // The stalled download is still open: the healthy filter did not wait for it to time out.
    assertThat(server.count("GET", "/stalled.txt")).isEqualTo(1);
    BloomFilter stalled =
        client.resources(BloomFilter.class).inNamespace(ns.name()).withName("stalled").get();
    assertThat(stalled.getStatus() == null || !ready(stalled, "False", null))
        .as("the stalled filter has not failed yet")
        .isTrue();
    System.out.printf("healthy filter Ready %d ms after creation, beside a stalled source%n", took);
  }
}
