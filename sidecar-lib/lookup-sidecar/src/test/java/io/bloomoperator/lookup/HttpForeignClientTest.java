package io.bloomoperator.lookup;

import static io.bloomoperator.lookup.LookupClient.version;
import static io.bloomoperator.lookup.LookupSidecarTest.config;
import static io.bloomoperator.lookup.LookupSidecarTest.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The HTTP API used from another language: {@code lookup_client.py} (test resources, standard
 * library only, written from the README) asks every probe key by GET, by a text/plain batch and by
 * a JSON batch, before and after an add-only delta; every way answers as Java does for the version
 * named, keys with spaces, reserved characters and non-ASCII UTF-8 included.
 */
@RealKubernetes
class HttpForeignClientTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aPythonClientGetsJavasAnswersByGetAndBothBatchesAcrossADelta(
      KubernetesClient client, TestNamespace ns, @TempDir Path work) throws Exception {
    List<String> v1 = keys("v1", 200);
    List<String> added = keys("added", 20);
    List<String> probes = new ArrayList<>(v1);
    probes.addAll(added);
    probes.addAll(keys("absent", 200));
    probes.addAll(List.of("a b", "a+b&c=d;e/f?g#h%20", "\u00e4\u20ac\ud834\udd1e"));
    BloomFilterBits bits1 = TestKeys.stringFilter(5_000, v1);
    BloomFilterBits bits2 = TestKeys.stringFilter(5_000, v1, added); // same size: a delta
    Path probesFile = Files.writeString(work.resolve("probes.txt"), String.join("\n", probes));
    Path script =
        Path.of(getClass().getResource("/http-client/lookup_client.py").toURI()).toAbsolutePath();

    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "ids");
    Manifest m1 = publisher.publish(bits1, v1.size(), 1).manifest();
    try (LookupSidecar sidecar =
        LookupSidecar.start(config("--filter", ns.name() + "/ids:String"), client, Map.of())) {
      LookupClient http = new LookupClient(sidecar.address());
      String base =
          "http://" + sidecar.address().getHostString() + ":" + sidecar.address().getPort();
      await().atMost(WAIT).until(() -> version(http.contains("ids", "x")) == 1);
      assertAnswers(run(script, base, probesFile, work), 1, answers(bits1, probes));

      publisher.publishDelta(m1, bits1, bits2, v1.size() + added.size(), 2);
      await().atMost(WAIT).until(() -> version(http.contains("ids", "x")) == 2);
      assertAnswers(run(script, base, probesFile, work), 2, answers(bits2, probes));
      assertThat(answers(bits2, added)).doesNotContain("0");
    }
  }

  private static void assertAnswers(List<JsonNode> lines, long version, String expected) {
    assertThat(lines)
        .extracting(l -> l.path("way").asText())
        .containsExactly("get", "text", "json");
    for (JsonNode line : lines) {
      String way = line.path("way").asText();
      assertThat(line.path("versions").toString()).as(way).isEqualTo("[" + version + "]");
      assertThat(line.path("answers").asText()).as(way).isEqualTo(expected);
    }
  }

  private static List<JsonNode> run(Path script, String base, Path probes, Path work)
      throws Exception {
    Path out = work.resolve("client.out");
    Path err = work.resolve("client.err");
    Process process =
        new ProcessBuilder("python3", script.toString(), base, "ids", probes.toString())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("the client finished").isTrue();
    assertThat(Files.readString(err)).as("the client's errors").isEmpty();
    assertThat(process.exitValue()).isZero();
    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
      lines.add(JSON.readTree(line));
    }
    return lines;
  }

  private static String answers(BloomFilterBits bits, List<String> probes) {
    StringBuilder s = new StringBuilder(probes.size());
    for (String probe : probes) {
      s.append(bits.mightContainString(probe) ? '1' : '0');
    }
    return s.toString();
  }
}
