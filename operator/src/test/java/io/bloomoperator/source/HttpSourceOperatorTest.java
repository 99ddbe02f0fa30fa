package io.bloomoperator.source;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.source.HttpSourceTest.MARKER;
import static io.bloomoperator.source.HttpTestServer.gzip;
import static io.bloomoperator.source.HttpTestServer.send;
import static io.bloomoperator.source.HttpTestServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import com.google.common.hash.Funnels;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.HttpSourceSpec;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.LogCapture;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * BloomFilters with an http source, built by the operator running in-process. Its egress policy is
 * the default plus 127.0.0.1 and ::1, where the test servers listen; 127.0.0.2 stands for the
 * loopback and node-local services an author must not reach through the operator.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(90) // refreshes come every 10s, the shortest interval the CRD admits
class HttpSourceOperatorTest {

  static final HttpSourceSettings SETTINGS =
      HttpSourceSettings.defaults().withEgress(EgressPolicy.of("127.0.0.1/32, ::1/128", null));

  /** Everything logged while the operator runs, at the levels logback-test.xml lets through. */
  @RegisterExtension
  @Order(1)
  static final LogCapture LOGS = new LogCapture();

  @RegisterExtension
  @Order(2)
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(OperatorSettings.builder().http(SETTINGS).build());

  private final HttpTestServer server = new HttpTestServer();

  /** The export the test server hands out; tests change it while the operator runs. */
  private volatile byte[] export;

  private volatile String etag;
  private volatile int status = 200;

  @AfterEach
  void stopServer() {
    server.close();
  }

  private void serveExport(String path) {
    server.on(
        path,
        ex -> {
          if (status != 200) {
            ex.getResponseHeaders().add("Content-Type", "text/plain");
            send(
                ex,
                status,
                "export service is down for maintenance".getBytes(StandardCharsets.UTF_8));
            return;
          }
          if (etag != null) {
            ex.getResponseHeaders().add("ETag", etag);
          }
          ex.getResponseHeaders().add("Content-Type", "application/octet-stream");
          send(ex, 200, export);
        });
  }

  private static List<String> ids(String prefix, int n) {
    return IntStream.range(0, n).mapToObj(i -> prefix + "-" + i).toList();
  }

  @Test
  void gzipExportBecomesReadyAndTheSnapshotHoldsEveryKey(KubernetesClient client, TestNamespace ns)
      throws Exception {
    List<String> keys = ids("customer", 200_000);
    export = gzip(text(keys));
    etag = "\"v1\"";
    serveExport("/exports/customers.txt.gz");
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: customers}
        spec:
          falsePositiveRate: 0.01
          source:
            http: {url: "%s"}
        """
            .formatted(server.url("/exports/customers.txt.gz")));

    BloomFilter filter =
        awaitStatus(client, ns.name(), "customers", f -> ready(f, "True", "Published"));
    assertThat(filter.getStatus().getKeys()).isEqualTo(200_000L);
    assertThat(filter.getStatus().getSourceToken())
        .isEqualTo("etag:" + ChangeTokens.digest("\"v1\""));
    Manifest manifest = manifest(client, ns.name(), "customers");
    assertThat(manifest.version()).isEqualTo(1L);
    com.google.common.hash.BloomFilter<CharSequence> published =
        com.google.common.hash.BloomFilter.readFrom(
            new ByteArrayInputStream(payload(client, ns.name(), manifest)),
            Funnels.stringFunnel(StandardCharsets.UTF_8));
    assertThat(keys).allMatch(published::mightContain);
    assertThat(
            IntStream.range(0, 10_000).filter(i -> published.mightContain("absent-" + i)).count())
        .as("false positives among 10,000 absent keys")
        .isLessThan(200);
  }

  @Test
  void headersSecretIsSentOnlyWithTheSecretsConsentForThatHost(
      KubernetesClient client, TestNamespace ns) {
    server.on(
        "/private/ids.txt",
        ex -> {
          if (!"Bearer s3cret-token".equals(ex.getRequestHeaders().getFirst("Authorization"))) {
            send(ex, 401, "who are you?".getBytes(StandardCharsets.UTF_8));
            return;
          }
          ex.getResponseHeaders().add("ETag", "\"p1\"");
          send(ex, 200, text(ids("p", 1000)));
        });
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: private}
        spec:
          falsePositiveRate: 0.01
          source:
            http: {url: "%s", headersSecret: export-auth}
        """
            .formatted(server.url("/private/ids.txt")));

    BloomFilter missing =
        awaitStatus(client, ns.name(), "private", f -> ready(f, "False", Reasons.SOURCE_NOT_FOUND));
    assertThat(ReadyCondition.of(missing).orElseThrow().getMessage())
        .contains("Secret export-auth (source.http.headersSecret) not found");

    // The Secret exists but its owner has not allowed this host: nothing of it is sent.
    exportAuth(
        client,
        ns.name(),
        Map.of(
            SecretAccess.ALLOWED_FILTERS,
            "private",
            SecretAccess.ALLOWED_HOSTS,
            "exports.shop.internal"));
    BloomFilter refused =
        awaitStatus(
            client, ns.name(), "private", f -> ready(f, "False", Reasons.SECRET_NOT_ALLOWED));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains("may not be sent to 127.0.0.1:" + server.port());
    assertThat(server.requests)
        .as("requests that carried the Secret's header")
        .noneSatisfy(r -> assertThat(r.header("Authorization")).isNotNull());

    exportAuth(
        client,
        ns.name(),
        Map.of(
            SecretAccess.ALLOWED_FILTERS,
            "private",
            SecretAccess.ALLOWED_HOSTS,
            "exports.shop.internal, 127.0.0.1:" + server.port()));
    BloomFilter ready =
        awaitStatus(client, ns.name(), "private", f -> ready(f, "True", "Published"));
    assertThat(ready.getStatus().getKeys()).isEqualTo(1000L);
    assertThat(server.requests)
        .anySatisfy(r -> assertThat(r.header("Authorization")).isEqualTo("Bearer s3cret-token"));
    assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
        .noneSatisfy(e -> assertThat(e.getMessage()).contains("s3cret"));
  }

  /**
   * Three URLs, parts of one export: Ready with every key, and the very payload (sha256) of a
   * filter whose one URL serves the parts concatenated.
   */
  @Test
  void aUrlListPublishesTheFilterOfItsPartsConcatenated(KubernetesClient client, TestNamespace ns)
      throws Exception {
    byte[][] parts = {
      text(ids("order", 40_000)), gzip(text(ids("refund", 30_000))), text(ids("return", 20_000))
    };
    byte[] whole =
        (new String(text(ids("order", 40_000)), StandardCharsets.UTF_8)
                + new String(text(ids("refund", 30_000)), StandardCharsets.UTF_8)
                + new String(text(ids("return", 20_000)), StandardCharsets.UTF_8))
            .getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < parts.length; i++) {
      byte[] part = parts[i];
      server.on("/parts/" + i, ex -> send(ex, 200, part));
    }
    server.on("/whole", ex -> send(ex, 200, whole));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: orders-whole}
        spec:
          falsePositiveRate: 0.01
          source:
            http: {url: "%s"}
        """
            .formatted(server.url("/whole")));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: orders-parts}
        spec:
          falsePositiveRate: 0.01
          source:
            http:
              urls: ["%s", "%s", "%s"]
        """
            .formatted(server.url("/parts/0"), server.url("/parts/1"), server.url("/parts/2")));

    BloomFilter one =
        awaitStatus(client, ns.name(), "orders-whole", f -> ready(f, "True", "Published"));
    BloomFilter list =
        awaitStatus(client, ns.name(), "orders-parts", f -> ready(f, "True", "Published"));
    assertThat(list.getStatus().getKeys()).isEqualTo(90_000L).isEqualTo(one.getStatus().getKeys());
    assertThat(manifest(client, ns.name(), "orders-parts").sha256())
        .isEqualTo(manifest(client, ns.name(), "orders-whole").sha256());
    assertThat(server.count("GET", "/parts/1")).isPositive();
  }

  /**
   * A Secret that allows the host of only some of the URLs is refused before any URL is requested:
   * the header goes to none of them.
   */
  @Test
  void aUrlListsSecretMustAllowEveryUrlsHost(KubernetesClient client, TestNamespace ns)
      throws Exception {
    try (HttpTestServer other = new HttpTestServer()) {
      server.on("/ids.txt", ex -> send(ex, 200, text(ids("a", 10))));
      other.on("/ids.txt", ex -> send(ex, 200, text(ids("b", 10))));
      exportAuth(
          client,
          ns.name(),
          Map.of(
              SecretAccess.ALLOWED_FILTERS,
              "parts",
              SecretAccess.ALLOWED_HOSTS,
              "127.0.0.1:" + server.port()));
      apply(
          client,
          ns.name(),
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: parts}
          spec:
            falsePositiveRate: 0.01
            source:
              http:
                urls: ["%s", "%s"]
                headersSecret: export-auth
          """
              .formatted(server.url("/ids.txt"), other.url("/ids.txt")));
      BloomFilter refused =
          awaitStatus(
              client, ns.name(), "parts", f -> ready(f, "False", Reasons.SECRET_NOT_ALLOWED));
      assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
          .contains("may not be sent to 127.0.0.1:" + other.port());
      assertThat(server.requests).as("requests to the allowed host").isEmpty();
      assertThat(other.requests).as("requests to the other host").isEmpty();
    }
  }

  private static void exportAuth(
      KubernetesClient client, String namespace, Map<String, String> annotations) {
    client
        .secrets()
        .inNamespace(namespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("export-auth")
                .withAnnotations(annotations)
                .endMetadata()
                .addToData(
                    "Authorization",
                    Base64.getEncoder()
                        .encodeToString("Bearer s3cret-token\n".getBytes(StandardCharsets.UTF_8)))
                .build())
        .createOr(c -> c.update());
  }

  @Test
  void secretHeadersAreNotForwardedToAnotherOrigin(KubernetesClient client, TestNamespace ns)
      throws Exception {
    try (HttpTestServer other = new HttpTestServer()) {
      other.on("/cdn/ids.txt", ex -> send(ex, 200, text(ids("c", 10))));
      server.on(
          "/ids.txt",
          ex -> {
            // Another origin: other port, and "localhost" instead of 127.0.0.1.
            ex.getResponseHeaders()
                .add("Location", other.url("/cdn/ids.txt").replace("127.0.0.1", "localhost"));
            send(ex, 302, new byte[0]);
          });
      client
          .secrets()
          .inNamespace(ns.name())
          .resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName("auth")
                  .endMetadata()
                  .addToData(
                      "Authorization",
                      Base64.getEncoder()
                          .encodeToString("Bearer s3cret-token".getBytes(StandardCharsets.UTF_8)))
                  .addToData(
                      "X-Api-Key",
                      Base64.getEncoder().encodeToString("k3y".getBytes(StandardCharsets.UTF_8)))
                  .build())
          .create();
      HttpSourceSpec spec = new HttpSourceSpec();
      spec.setUrl(server.url("/ids.txt"));
      spec.setHeadersSecret("auth");
      HttpSource source =
          new HttpSource(
              new SecretAccess(client, ns.name(), "f", SecretAccess.Mode.NAMESPACE),
              spec,
              SETTINGS);
      List<String> keys = new java.util.ArrayList<>();
      source.readKeys(
          new LineParser(
              io.bloomoperator.snapshot.KeyType.STRING,
              new LineParser.KeyConsumer() {
                @Override
                public void putString(String key) {
                  keys.add(key);
                }

                @Override
                public void putLong(long key) {}
              },
              0));

      assertThat(keys).containsExactlyElementsOf(ids("c", 10));
      assertThat(server.requests)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.header("Authorization")).isEqualTo("Bearer s3cret-token");
                assertThat(r.header("X-Api-Key")).isEqualTo("k3y");
              });
      assertThat(other.requests)
          .singleElement()
          .satisfies(
              r -> {
                assertThat(r.header("Authorization")).isNull();
                assertThat(r.header("X-Api-Key")).isNull();
              });
    }
  }

  @Test
  void newEtagPublishesVersionTwoAndAnUnchangedOneIsNotDownloadedAgain(
      KubernetesClient client, TestNamespace ns) throws Exception {
    export = text(ids("a", 5000));
    etag = "\"a\"";
    serveExport("/ids.txt");
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: refreshed}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 10000
          refreshInterval: 10s
          source:
            http: {url: "%s"}
        """
            .formatted(server.url("/ids.txt")));
    awaitStatus(client, ns.name(), "refreshed", f -> ready(f, "True", "Published"));
    assertThat(manifest(client, ns.name(), "refreshed").version()).isEqualTo(1L);

    export = text(ids("b", 6000));
    etag = "\"b\"";
    BloomFilter v2 =
        awaitStatus(
            client,
            ns.name(),
            "refreshed",
            f -> Long.valueOf(2).equals(f.getStatus().getVersion()));
    assertThat(v2.getStatus().getKeys()).isEqualTo(6000L);
    assertThat(v2.getStatus().getSourceToken()).isEqualTo("etag:" + ChangeTokens.digest("\"b\""));
    assertThat(manifest(client, ns.name(), "refreshed").version()).isEqualTo(2L);

    // Same ETag from now on: each refresh is one HEAD, nothing is downloaded or rebuilt.
    long gets = server.count("GET", "/ids.txt");
    long heads = server.count("HEAD", "/ids.txt");
    String lastBuild = v2.getStatus().getLastBuildTime();
    await()
        .atMost(Duration.ofSeconds(35))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> server.count("HEAD", "/ids.txt") >= heads + 2);
    BloomFilter after = get(client, ns.name(), "refreshed");
    assertThat(after.getStatus().getLastBuildTime()).isEqualTo(lastBuild);
    assertThat(after.getStatus().getVersion()).isEqualTo(2L);
    assertThat(server.count("GET", "/ids.txt")).isEqualTo(gets);
  }

  @Test
  void serverErrorAfterAGoodBuildKeepsTheLastGoodSnapshot(KubernetesClient client, TestNamespace ns)
      throws Exception {
    export = text(ids("g", 3000));
    etag = "\"g\"";
    serveExport("/ids.txt");
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: flaky}
        spec:
          falsePositiveRate: 0.01
          refreshInterval: 10s
          source:
            http: {url: "%s"}
        """
            .formatted(server.url("/ids.txt")));
    awaitStatus(client, ns.name(), "flaky", f -> ready(f, "True", "Published"));
    Manifest good = manifest(client, ns.name(), "flaky");

    status = 500;
    BloomFilter failed =
        awaitStatus(client, ns.name(), "flaky", f -> ready(f, "False", Reasons.SOURCE_UNREADABLE));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("HTTP 500")
        .doesNotContain("maintenance");
    assertThat(failed.getStatus().getVersion()).isEqualTo(1L);
    assertThat(manifest(client, ns.name(), "flaky")).isEqualTo(good);

    status = 200;
    awaitStatus(client, ns.name(), "flaky", f -> ready(f, "True", "Published"));
    assertThat(manifest(client, ns.name(), "flaky").version())
        .as("same ETag: not rebuilt")
        .isEqualTo(1L);
  }

  @Test
  void nothingTheServerSendsReachesStatusEventsOrLogs(KubernetesClient client, TestNamespace ns) {
    // What the export server answers; each stage puts the marker somewhere else.
    java.util.concurrent.atomic.AtomicReference<String> stage =
        new java.util.concurrent.atomic.AtomicReference<>("etag");
    server.on(
        "/ids.txt",
        ex -> {
          switch (stage.get()) {
            case "etag" -> {
              ex.getResponseHeaders().add("ETag", "\"" + MARKER + "\"");
              send(ex, 200, text(ids("m", 100)));
            }
            case "body" -> {
              ex.getResponseHeaders().add("Content-Type", "text/plain");
              send(ex, 500, ("internal error; token=" + MARKER).getBytes(StandardCharsets.UTF_8));
            }
            case "encoding" -> {
              ex.getResponseHeaders().add("ETag", "\"v2\"");
              ex.getResponseHeaders().add("Content-Encoding", MARKER);
              send(ex, 200, text(ids("m", 100)));
            }
            default -> {
              ex.getResponseHeaders().add("Location", "http://" + MARKER + ".invalid/?" + MARKER);
              send(ex, 302, new byte[0]);
            }
          }
        });
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: echo}
        spec:
          falsePositiveRate: 0.01
          refreshInterval: 10s
          source:
            http: {url: "%s"}
        """
            .formatted(server.url("/ids.txt")));
    BloomFilter published =
        awaitStatus(client, ns.name(), "echo", f -> ready(f, "True", "Published"));
    assertThat(Serialization.asYaml(published.getStatus())).doesNotContain(MARKER);
    assertThat(manifestYaml(client, ns.name())).doesNotContain(MARKER);

    stage.set("body");
    assertNotEchoed(awaitStatus(client, ns.name(), "echo", f -> messageOf(f).contains("HTTP 500")));
    stage.set("encoding");
    assertNotEchoed(
        awaitStatus(
            client, ns.name(), "echo", f -> messageOf(f).contains("unsupported Content-Encoding")));
    stage.set("location");
    assertNotEchoed(
        awaitStatus(client, ns.name(), "echo", f -> messageOf(f).contains("after 1 redirect")));

    assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
        .isNotEmpty()
        .allSatisfy(e -> assertThat(Serialization.asYaml(e)).doesNotContain(MARKER));
    List<ILoggingEvent> logged = LOGS.events();
    assertThat(logged)
        .anySatisfy(
            e ->
                assertThat(e.getFormattedMessage())
                    .contains("echo")
                    .contains(Reasons.SOURCE_UNREADABLE));
    assertThat(logged).allSatisfy(HttpSourceOperatorTest::assertNoMarker);
  }

  @Test
  void addressesTheOperatorRefusesAreNeverContacted(KubernetesClient client, TestNamespace ns)
      throws Exception {
    try (HttpTestServer internal = new HttpTestServer(InetAddress.getByName("127.0.0.2"))) {
      internal.on("/", ex -> send(ex, 200, text(ids("internal", 10))));
      server.on(
          "/redirect",
          ex -> {
            ex.getResponseHeaders().add("Location", internal.url("/ids.txt"));
            send(ex, 302, new byte[0]);
          });
      String template =
          """
          apiVersion: bloomoperator.io/v1alpha1
          kind: BloomFilter
          metadata: {name: %s}
          spec:
            falsePositiveRate: 0.01
            source:
              http: {url: "%s"}
          """;
      apply(client, ns.name(), template.formatted("direct", internal.url("/ids.txt")));
      apply(client, ns.name(), template.formatted("redirected", server.url("/redirect")));
      apply(
          client,
          ns.name(),
          template.formatted("metadata", "http://169.254.169.254/latest/meta-data/"));

      for (String name : List.of("direct", "redirected", "metadata")) {
        BloomFilter refused =
            awaitStatus(
                client,
                ns.name(),
                name,
                f -> ready(f, "False", Reasons.SOURCE_ADDRESS_NOT_ALLOWED));
        assertThat(messageOf(refused)).as(name).contains("BLOOM_HTTP_ALLOW");
      }
      assertThat(messageOf(get(client, ns.name(), "direct")))
          .contains("not connecting to " + internal.url("/ids.txt"))
          .contains("loopback");
      assertThat(messageOf(get(client, ns.name(), "redirected")))
          .contains("not following the redirect from " + server.url("/redirect"))
          .doesNotContain("127.0.0.2");
      assertThat(messageOf(get(client, ns.name(), "metadata"))).contains("link-local");
      assertThat(internal.requests).isEmpty();
      assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
          .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("SourceAddressNotAllowed"));
    }
  }

  private static String messageOf(BloomFilter filter) {
    return ReadyCondition.of(filter).map(c -> c.getMessage()).orElse("");
  }

  private static void assertNotEchoed(BloomFilter filter) {
    assertThat(ready(filter, "False", Reasons.SOURCE_UNREADABLE)).isTrue();
    assertThat(Serialization.asYaml(filter.getStatus())).doesNotContain(MARKER);
  }

  private static void assertNoMarker(ILoggingEvent event) {
    assertThat(event.getFormattedMessage()).doesNotContain(MARKER);
    for (IThrowableProxy t = event.getThrowableProxy(); t != null; t = t.getCause()) {
      assertThat(String.valueOf(t.getMessage())).doesNotContain(MARKER);
    }
  }

  private static String manifestYaml(KubernetesClient client, String namespace) {
    ConfigMap manifest =
        client
            .configMaps()
            .inNamespace(namespace)
            .withName(SnapshotNames.manifestName("echo"))
            .get();
    return Serialization.asYaml(manifest);
  }

  private static BloomFilter get(KubernetesClient client, String namespace, String name) {
    return client.resources(BloomFilter.class).inNamespace(namespace).withName(name).get();
  }

  @Test
  void stoppingTheOperatorLetsAPublishUnderWayFinish(KubernetesClient client, TestNamespace ns)
      throws Exception {
    java.util.concurrent.CountDownLatch requested = new java.util.concurrent.CountDownLatch(1);
    server.on(
        "/slow/ids.txt",
        ex -> {
          requested.countDown();
          try {
            Thread.sleep(2_000);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          send(ex, 200, text(ids("slow", 1000)));
        });
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: slow}
        spec:
          falsePositiveRate: 0.01
          source:
            http: {url: "%s"}
        """
            .formatted(server.url("/slow/ids.txt")));
    assertThat(requested.await(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

    // A rolling update or a drained node stops the operator mid-build: the build under way ends
    // with its publish, not with a thread that goes on writing after the operator has stopped.
    OPERATOR.stop();
    try {
      assertThat(
              client
                  .configMaps()
                  .inNamespace(ns.name())
                  .withName(SnapshotNames.manifestName("slow"))
                  .get())
          .as("the manifest, right after stop() returned")
          .isNotNull();
      assertThat(manifest(client, ns.name(), "slow").keyCount()).isEqualTo(1000L);
    } finally {
      OPERATOR.start();
    }
  }
}
