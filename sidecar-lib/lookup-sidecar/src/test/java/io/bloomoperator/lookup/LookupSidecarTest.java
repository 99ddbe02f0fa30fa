package io.bloomoperator.lookup;

import static io.bloomoperator.lookup.LookupClient.present;
import static io.bloomoperator.lookup.LookupClient.presentAll;
import static io.bloomoperator.lookup.LookupClient.version;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sidecar against a real kube-apiserver: snapshots published as the operator publishes them,
 * the sidecar started in-process on an ephemeral loopback port and asked over HTTP with the JDK
 * client, its answers compared with an in-process {@link LiveBloomFilter} of the same snapshot.
 */
@RealKubernetes
class LookupSidecarTest {

  private static final Duration READY = Duration.ofSeconds(20);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Settings of a test sidecar: an ephemeral port and a short request timeout. */
  static SidecarConfig config(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--port", "0", "--request-timeout", "2s", "--reader-reports", "false"));
    return SidecarConfig.parse(all.toArray(String[]::new), Map.of());
  }

  @Test
  void answersAsTheInProcessReaderAndServesEachNewVersionWithoutRestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    List<String> v1Keys = keys("v1", 3_000);
    List<String> v2Keys = keys("v2", 3_000);
    List<String> probes = new ArrayList<>(v1Keys);
    probes.addAll(v2Keys);
    probes.addAll(keys("absent", 3_000));
    // Keys whose encodings differ between the query string, a line and JSON.
    List<String> odd = List.of("", " ", "a b", "a+b", "x&key=y", "%41", "\u00e4\u20ac\ud834\udd1e");
    probes.addAll(odd);
    List<String> oddV1 = new ArrayList<>(v1Keys);
    oddV1.addAll(odd);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "ids");

    try (LookupSidecar sidecar =
        LookupSidecar.start(config("--filter", ns.name() + "/ids:String"), client, Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      assertThat(sidecar.address().getAddress().isLoopbackAddress()).isTrue();

      // Before the first snapshot: not ready, and the (default) fail-open answer is marked.
      assertThat(http.get("/readyz").statusCode()).isEqualTo(503);
      assertThat(http.get("/livez").statusCode()).isEqualTo(200);
      HttpResponse<String> early = http.contains("ids", "anything");
      assertThat(present(early)).isTrue();
      assertThat(version(early)).isEqualTo(LiveBloomFilter.NO_VERSION);
      assertThat(early.headers().firstValue(LookupServer.ANSWER_HEADER)).hasValue("fail-open");

      publisher.publish(TestKeys.stringFilter(10_000, oddV1), oddV1.size(), 1);
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);

      try (LiveBloomFilter<String> inProcess =
          BloomFilterWatcher.builder(client, ns.name(), "ids", LiveKeyType.STRING)
              .readerReports(false)
              .start()) {
        assertThat(inProcess.awaitReady(READY)).isTrue();
        assertSameAnswers(http, inProcess, probes, 1);
        assertThat(oddV1).allMatch(key -> present(http.contains("ids", key)));

        publisher.publish(TestKeys.stringFilter(10_000, v2Keys), v2Keys.size(), 2);
        await().atMost(READY).until(() -> version(http.contains("ids", "x")) == 2);
        await().atMost(READY).until(() -> inProcess.currentVersion() == 2);
        assertSameAnswers(http, inProcess, probes, 2);
        assertThat(v2Keys).allMatch(key -> present(http.contains("ids", key)));
      }

      String metrics = http.get("/metrics").body();
      assertThat(metrics)
          .contains(
              "bloomreader_snapshot_version{filter=\"ids\",namespace=\"" + ns.name() + "\"} 2.0")
          .contains("bloomreader_lookups_total{filter=\"ids\"")
          .contains("bloomlookup_requests_seconds_count");
      assertThat(http.get("/v1/filters").body())
          .isEqualTo(
              "{\"filters\":[{\"name\":\"ids\",\"namespace\":\""
                  + ns.name()
                  + "\",\"keyType\":\"String\",\"failMode\":\"fail-open\",\"ready\":true,"
                  + "\"version\":2}]}");
    }
  }

  /** Every probe asked singly (a sample), and all in one text and one JSON batch. */
  private static void assertSameAnswers(
      LookupClient http, LiveBloomFilter<String> inProcess, List<String> probes, long version)
      throws IOException {
    boolean[] expected = new boolean[probes.size()];
    inProcess.mightContainAll(probes.toArray(String[]::new), 0, probes.size(), expected);
    for (int i = 0; i < probes.size(); i += 17) {
      HttpResponse<String> single = http.contains("ids", probes.get(i));
      assertThat(present(single)).as("key %s", probes.get(i)).isEqualTo(expected[i]);
      assertThat(version(single)).isEqualTo(version);
    }
    for (int i = probes.size() - 7; i < probes.size(); i++) { // the odd keys, each
      assertThat(present(http.contains("ids", probes.get(i)))).isEqualTo(expected[i]);
    }
    HttpResponse<String> lines =
        http.post("/v1/filters/ids/contains", "text/plain", String.join("\n", probes) + "\n");
    assertThat(presentAll(lines)).isEqualTo(expected);
    assertThat(version(lines)).isEqualTo(version);
    HttpResponse<String> json =
        http.post(
            "/v1/filters/ids/contains",
            "application/json; charset=utf-8",
            JSON.writeValueAsString(probes));
    assertThat(presentAll(json)).isEqualTo(expected);
    assertThat(lines.headers().firstValue(LookupServer.ANSWER_HEADER)).isEmpty();
  }

  @Test
  void longFiltersTakeDecimalKeysOnlyAndFailClosedAnswers503UntilLoaded(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Random random = new Random(30);
    long[] present = LongStream.generate(random::nextLong).limit(2_000).toArray();
    long[] probes =
        LongStream.concat(
                LongStream.of(present),
                LongStream.concat(
                    LongStream.range(-500, 500), LongStream.of(Long.MIN_VALUE, Long.MAX_VALUE)))
            .toArray();
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config("--filter", ns.name() + "/nums:Long:fail-closed"), client, Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      HttpResponse<String> early = http.contains("nums", "1");
      assertThat(early.statusCode()).isEqualTo(503);
      assertThat(early.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(early.headers().firstValue(LookupServer.ANSWER_HEADER)).isEmpty();
      assertThat(http.post("/v1/filters/nums/contains", "text/plain", "1\n2").statusCode())
          .isEqualTo(503);
      assertThat(http.get("/readyz").statusCode()).isEqualTo(503);

      new SnapshotPublisher(client, ns.name(), "nums")
          .publish(TestKeys.longFilter(4_000, present), present.length, 1);
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);

      try (LiveBloomFilter<Long> inProcess =
          BloomFilterWatcher.builder(client, ns.name(), "nums", LiveKeyType.LONG)
              .readerReports(false)
              .start()) {
        assertThat(inProcess.awaitReady(READY)).isTrue();
        boolean[] expected = new boolean[probes.length];
        inProcess.mightContainAllLongs(probes, 0, probes.length, expected);
        for (int i = 0; i < probes.length; i += 13) {
          assertThat(present(http.contains("nums", Long.toString(probes[i]))))
              .isEqualTo(expected[i]);
        }
        String decimal =
            LongStream.of(probes).mapToObj(Long::toString).collect(Collectors.joining("\n"));
        assertThat(presentAll(http.post("/v1/filters/nums/contains", "text/plain", decimal)))
            .isEqualTo(expected);
        // JSON: numbers, or strings of decimals, mixed.
        List<Object> mixed = new ArrayList<>();
        for (int i = 0; i < probes.length; i++) {
          mixed.add(i % 2 == 0 ? probes[i] : Long.toString(probes[i]));
        }
        assertThat(
                presentAll(
                    http.post(
                        "/v1/filters/nums/contains",
                        "application/json",
                        JSON.writeValueAsString(mixed))))
            .isEqualTo(expected);
      }
      assertThat(present(http.contains("nums", Long.toString(present[0])))).isTrue();
      assertThat(present(http.contains("nums", "-0")))
          .isEqualTo(present(http.contains("nums", "0")));

      for (String bad :
          List.of(
              "+5",
              "1e3",
              "0x10",
              " 5",
              "5 ",
              "",
              "-",
              "1.0",
              "\u0661\u0662", // Arabic-Indic digits, which Long.parseLong would take
              "9223372036854775808",
              "-9223372036854775809")) {
        HttpResponse<String> answer = http.contains("nums", bad);
        assertThat(answer.statusCode()).as("key '%s'", bad).isEqualTo(400);
        assertThat(answer.body()).contains("decimal");
      }
      assertThat(http.post("/v1/filters/nums/contains", "text/plain", "1\n+2\n3").statusCode())
          .isEqualTo(400);
      for (String badJson :
          List.of(
              "[1.5]",
              "[1e3]",
              "[true]",
              "[null]",
              "[[1]]",
              "[\"0x1\"]",
              "[9223372036854775808]",
              "{\"keys\":[1]}",
              "[1",
              "[1] [2]")) {
        assertThat(http.post("/v1/filters/nums/contains", "application/json", badJson).statusCode())
            .as(badJson)
            .isEqualTo(400);
      }
    }
  }

  @Test
  void badInputGetsAClearAnswerWithinItsBounds(KubernetesClient client, TestNamespace ns)
      throws Exception {
    new SnapshotPublisher(client, ns.name(), "ids")
        .publish(TestKeys.stringFilter(100, List.of("a", "b")), 2, 1);
    try (LookupSidecar sidecar =
        LookupSidecar.start(config("--filter", ns.name() + "/ids"), client, Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);
      String contains = "/v1/filters/ids/contains";

      // Unknown filter, path and method; missing key; unsupported body type.
      assertThat(http.contains("other", "a").statusCode()).isEqualTo(404);
      assertThat(http.post("/v1/filters/other/contains", "text/plain", "a").statusCode())
          .isEqualTo(404);
      assertThat(http.get("/v1/nothing").statusCode()).isEqualTo(404);
      assertThat(http.get(contains).statusCode()).isEqualTo(400);
      assertThat(http.get(contains + "?k=a").statusCode()).isEqualTo(400);
      assertThat(http.get(contains + "?key=a&key=b").statusCode()).isEqualTo(400);
      // Malformed escapes: the JDK client refuses to send them, so they go over a socket.
      assertThat(rawStatus(sidecar, "GET " + contains + "?key=%4 HTTP/1.1")).isEqualTo(400);
      assertThat(rawStatus(sidecar, "GET " + contains + "?key=%4g HTTP/1.1")).isEqualTo(400);
      assertThat(http.get(contains + "?key=%ff").statusCode()).isEqualTo(400); // not UTF-8
      assertThat(http.post(contains, "application/x-www-form-urlencoded", "key=a").statusCode())
          .isEqualTo(415);
      assertThat(
              http.send(HttpRequest.newBuilder(URI.create(base(sidecar) + contains)).DELETE())
                  .statusCode())
          .isEqualTo(405);
      HttpResponse<String> invalidUtf8 =
          http.send(
              HttpRequest.newBuilder(URI.create(base(sidecar) + contains))
                  .header("Content-Type", "text/plain")
                  .POST(
                      HttpRequest.BodyPublishers.ofByteArray(new byte[] {'a', '\n', (byte) 0xc3})));
      assertThat(invalidUtf8.statusCode()).isEqualTo(400);
      assertThat(http.post(contains, "application/json", "[\"a\",").statusCode()).isEqualTo(400);
      assertThat(http.post(contains, "application/json", "[1]").statusCode()).isEqualTo(400);
      // An answer repeats nothing of the request: not a filter name, a key or a body's text.
      assertThat(http.contains("other-name-xyz", "a").body()).doesNotContain("other-name-xyz");
      assertThat(http.post(contains, "application/json", "[\"a\", secretish]").body())
          .doesNotContain("secretish");

      // Key length: 64 KiB in UTF-8 is the longest key, in a query, a line or JSON.
      String longest = "k".repeat(KeyBatch.MAX_KEY_BYTES);
      String tooLong = longest + "k";
      String tooLongUtf8 = "\u00e4".repeat(KeyBatch.MAX_KEY_BYTES / 2) + "k"; // 2 bytes a char
      assertThat(http.contains("ids", longest).statusCode()).isEqualTo(200);
      assertThat(http.contains("ids", tooLong).statusCode()).isEqualTo(400);
      assertThat(http.contains("ids", tooLongUtf8).statusCode()).isEqualTo(400);
      assertThat(http.post(contains, "text/plain", "a\n" + longest).statusCode()).isEqualTo(200);
      assertThat(http.post(contains, "text/plain", "a\n" + tooLong).statusCode()).isEqualTo(400);
      assertThat(http.post(contains, "text/plain", tooLongUtf8).statusCode()).isEqualTo(400);
      assertThat(
              http.post(contains, "application/json", JSON.writeValueAsString(List.of(tooLong)))
                  .statusCode())
          .isEqualTo(400);

      // Key count: 10,000 answered in order, one more is 413 (in both body types).
      List<String> most = keys("k", KeyBatch.MAX_KEYS - 2);
      most.add("a");
      most.add("b");
      boolean[] answers = presentAll(http.post(contains, "text/plain", String.join("\n", most)));
      assertThat(answers).hasSize(KeyBatch.MAX_KEYS);
      assertThat(answers[KeyBatch.MAX_KEYS - 1]).isTrue();
      assertThat(answers[KeyBatch.MAX_KEYS - 2]).isTrue();
      most.add("c");
      assertThat(http.post(contains, "text/plain", String.join("\n", most)).statusCode())
          .isEqualTo(413);
      assertThat(
              http.post(contains, "application/json", JSON.writeValueAsString(most)).statusCode())
          .isEqualTo(413);

      // Body size: 1 MiB at most, whether announced (Content-Length) or streamed (chunked).
      String big = String.join("\n", keys("x".repeat(200), 5_300)); // under 10,000 keys, > 1 MiB
      assertThat(big.length()).isGreaterThan(KeyBatch.MAX_BODY_BYTES);
      assertThat(http.post(contains, "text/plain", big).statusCode()).isEqualTo(413);
      HttpResponse<String> streamed =
          http.send(
              HttpRequest.newBuilder(URI.create(base(sidecar) + contains))
                  .header("Content-Type", "text/plain")
                  .POST(
                      HttpRequest.BodyPublishers.ofInputStream(
                          () -> new ByteArrayInputStream(big.getBytes(StandardCharsets.UTF_8)))));
      assertThat(streamed.statusCode()).isEqualTo(413);
      String bigJson = JSON.writeValueAsString(keys("x".repeat(200), 5_300));
      assertThat(http.post(contains, "application/json", bigJson).statusCode()).isEqualTo(413);

      // The server still answers after all of that.
      assertThat(present(http.contains("ids", "a"))).isTrue();
    }
  }

  @Test
  void withATrustedKeyFileOnlySignedSnapshotsAreServed(
      KubernetesClient client, TestNamespace ns, @TempDir Path dir) throws Exception {
    KeyPair operatorKey = Ed25519Keys.generate();
    Path keyFile = dir.resolve("operator.pem");
    Files.writeString(keyFile, Ed25519Keys.toPem(operatorKey.getPublic()));
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "ids");
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config(
                "--filter",
                ns.name() + "/ids:fail-closed",
                "--trusted-key-file",
                keyFile.toString(),
                "--resync",
                "200ms"),
            client,
            Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      SnapshotPublisher.Published unsigned =
          publisher.publish(TestKeys.stringFilter(100, List.of("a")), 1, 1);
      // Refused by sidecar-lib (UNSIGNED): still not loaded after several resyncs.
      await()
          .pollDelay(Duration.ofSeconds(2))
          .atMost(READY)
          .until(() -> sidecar.filters().get(0).failures() > 0);
      assertThat(http.get("/readyz").statusCode()).isEqualTo(503);
      assertThat(http.contains("ids", "a").statusCode()).isEqualTo(503);

      // The same version, now signed for this namespace by the trusted key.
      ConfigMap current =
          client
              .configMaps()
              .inNamespace(ns.name())
              .withName(SnapshotNames.manifestName("ids"))
              .get();
      ConfigMap signed =
          SnapshotConfigMaps.manifest(
              ns.name(),
              unsigned.manifest(),
              new ManifestSigner(operatorKey.getPrivate()),
              Map.of());
      signed.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
      client.configMaps().inNamespace(ns.name()).resource(signed).update();
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);
      assertThat(present(http.contains("ids", "a"))).isTrue();
    }
  }

  @Test
  void readinessWaitsForEveryConfiguredFilter(KubernetesClient client, TestNamespace ns)
      throws Exception {
    new SnapshotPublisher(client, ns.name(), "first")
        .publish(TestKeys.stringFilter(100, List.of("a")), 1, 1);
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config("--filter", "first", "--filter", "second:Long", "--namespace", ns.name()),
            client,
            Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      await().atMost(READY).until(() -> present(http.contains("first", "a")));
      assertThat(version(http.contains("first", "a"))).isEqualTo(1);
      HttpResponse<String> waiting = http.get("/readyz");
      assertThat(waiting.statusCode()).isEqualTo(503);
      assertThat(waiting.body()).contains("second").doesNotContain("first");

      new SnapshotPublisher(client, ns.name(), "second")
          .publish(TestKeys.longFilter(100, new long[] {7}), 1, 1);
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);
      assertThat(present(http.contains("second", "7"))).isTrue();
      assertThat(http.get("/v1/filters").body())
          .contains("\"name\":\"first\"", "\"name\":\"second\"", "\"keyType\":\"Long\"");
    }
  }

  @Test
  void theHealthListenerServesProbesAndMetricsButNoAnswers(
      KubernetesClient client, TestNamespace ns) throws Exception {
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config(
                "--filter",
                ns.name() + "/ids:fail-closed",
                "--health-port",
                "0",
                "--health-bind-address",
                "127.0.0.1"),
            client,
            Map.of())) {
      LookupClient health = new LookupClient(sidecar.healthAddress().orElseThrow());
      assertThat(sidecar.healthAddress().get().getPort()).isNotEqualTo(sidecar.address().getPort());
      assertThat(health.get("/livez").statusCode()).isEqualTo(200);
      assertThat(health.get("/readyz").statusCode()).isEqualTo(503);
      new SnapshotPublisher(client, ns.name(), "ids")
          .publish(TestKeys.stringFilter(100, List.of("a")), 1, 1);
      await().atMost(READY).until(() -> health.get("/readyz").statusCode() == 200);
      assertThat(health.get("/metrics").body()).contains("bloomreader_snapshot_version{");
      // No answer, no list, no add: nothing that tells which keys exist.
      assertThat(health.contains("ids", "a").statusCode()).isEqualTo(404);
      assertThat(health.get("/v1/filters").statusCode()).isEqualTo(404);
      assertThat(health.post("/v1/filters/ids/add", "text/plain", "x").statusCode()).isEqualTo(404);
      assertThat(present(new LookupClient(sidecar.address()).contains("ids", "a"))).isTrue();
    }
    assertThat(
            SidecarConfig.parse(new String[] {"--filter", "a/b", "--health-port", "8472"}, Map.of())
                .healthBindAddress())
        .as("probes and Prometheus come from outside the pod")
        .isEqualTo("0.0.0.0");
  }

  @Test
  void localAddsAreAnsweredAtOnceWithinTheirBounds(KubernetesClient client, TestNamespace ns)
      throws Exception {
    new SnapshotPublisher(client, ns.name(), "ids")
        .publish(TestKeys.stringFilter(100, List.of("a")), 1, 1);
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config(
                "--filter",
                ns.name() + "/ids",
                "--local-adds-max-entries",
                "3",
                "--local-adds-max-key-length",
                "10"),
            client,
            Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);
      String add = "/v1/filters/ids/add";
      assertThat(present(http.contains("ids", "new-1"))).isFalse();

      HttpResponse<String> added = http.post(add, "text/plain", "new-1\nnew-2\n");
      assertThat(added.body()).isEqualTo("{\"accepted\":2,\"refused\":0}");
      assertThat(present(http.contains("ids", "new-1"))).isTrue();
      assertThat(presentAll(http.post("/v1/filters/ids/contains", "text/plain", "new-2\nnew-9")))
          .containsExactly(true, false);

      // The bound refuses, never evicts: new-1 and new-2 stay.
      assertThat(http.post(add, "application/json", "[\"new-3\",\"new-4\"]").body())
          .isEqualTo("{\"accepted\":1,\"refused\":1}");
      assertThat(present(http.contains("ids", "new-4"))).isFalse();
      assertThat(present(http.contains("ids", "new-1"))).isTrue();

      // A key over the local-add key length is refused as a whole batch, before any is added.
      assertThat(http.post(add, "text/plain", "b\n" + "k".repeat(11)).statusCode()).isEqualTo(400);
      assertThat(http.get(add).statusCode()).isEqualTo(405);
      assertThat(http.post("/v1/filters/other/add", "text/plain", "x").statusCode()).isEqualTo(404);
      assertThat(sidecar.filters().get(0).localAdds()).isEqualTo(3);
    }
  }

  @Test
  void aNonLoopbackBindIsRefusedWithoutTheExplicitFlag(KubernetesClient client, TestNamespace ns) {
    for (String address : List.of("0.0.0.0", "10.1.2.3", "::")) {
      assertThatThrownBy(
              () ->
                  SidecarConfig.parse(
                      new String[] {"--filter", "a/b", "--bind-address", address}, Map.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("not a loopback address")
          .hasMessageContaining("--allow-non-loopback");
    }
    assertThatThrownBy(
            () ->
                SidecarConfig.parse(
                    new String[] {"--filter", "a/b"},
                    Map.of("BLOOM_LOOKUP_BIND_ADDRESS", "0.0.0.0")))
        .hasMessageContaining("not a loopback address");
    SidecarConfig allowed =
        SidecarConfig.parse(
            new String[] {"--filter", "a/b", "--bind-address", "0.0.0.0", "--allow-non-loopback"},
            Map.of());
    assertThat(allowed.bindAddress()).isEqualTo("0.0.0.0");
    assertThat(SidecarConfig.parse(new String[] {"--filter", "a/b"}, Map.of()).bindAddress())
        .isEqualTo("127.0.0.1");
    assertThat(
            SidecarConfig.parse(new String[] {"--filter", "a/b", "--bind-address", "::1"}, Map.of())
                .bindAddress())
        .isEqualTo("::1");

    // A config built in code, not parsed, is refused by start() too, before anything starts.
    SidecarConfig notParsed =
        new SidecarConfig(
            List.of(FilterSpec.parse(ns.name() + "/ids")),
            java.util.Optional.empty(),
            "0.0.0.0",
            0,
            false,
            io.bloomoperator.watch.BeforeFirstSnapshot.FAIL_OPEN,
            List.of(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            false,
            false,
            Duration.ZERO,
            java.util.Optional.empty(),
            false,
            2,
            2,
            Duration.ofSeconds(2),
            16,
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            java.util.Optional.empty(),
            "127.0.0.1",
            List.of());
    assertThatThrownBy(() -> LookupSidecar.start(notParsed, client, Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a loopback address");
  }

  /** The status code of one raw request line (with a Host header) sent over a socket. */
  static int rawStatus(LookupSidecar sidecar, String requestLine) throws IOException {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(sidecar.address(), 5_000);
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              (requestLine + "\r\nHost: x\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      String status =
          new java.io.BufferedReader(
                  new java.io.InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
              .readLine();
      return Integer.parseInt(status.split(" ")[1]);
    }
  }

  static String base(LookupSidecar sidecar) {
    return "http://" + sidecar.address().getHostString() + ":" + sidecar.address().getPort();
  }

  static List<String> keys(String prefix, int n) {
    List<String> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      keys.add(prefix + "-" + i);
    }
    return keys;
  }
}
