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
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.RandomAccessFile;
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
 * File mode read by a process in another language: {@code file_mode_reader.py} (test resources,
 * standard library only) follows the README's reader contract, memory-maps the payload and answers
 * probe keys from the mapping, while the sidecar serves v1, applies an add-only delta in place (v2)
 * and swaps in a whole new version (v3). Every answer it accepted equals the Java answers of the
 * version it named; a payload changed under its mapping is refused, never answered from.
 */
@RealKubernetes
class FileModeForeignReaderTest {

  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aPythonReaderMappingTheFileAnswersAsJavaAcrossADeltaAndASwapAndRefusesATornFile(
      KubernetesClient client, TestNamespace ns, @TempDir Path shared, @TempDir Path work)
      throws Exception {
    List<String> v1 = keys("v1", 600);
    // A small delta: sidecar-lib sets a delta in place only if it changes at most one bit per
    // 64-bit word of the filter (a change stream's per-second deltas); this one changes ~140.
    List<String> added = keys("added", 20);
    List<String> v3 = keys("v3", 600);
    List<String> probes = new ArrayList<>(v1);
    probes.addAll(added);
    probes.addAll(v3);
    probes.addAll(keys("absent", 600));
    probes.addAll(List.of("", "a b", "\u00e4\u20ac\ud834\udd1e")); // UTF-8 of 2, 3 and 4 bytes
    BloomFilterBits bits1 = TestKeys.stringFilter(5_000, v1);
    BloomFilterBits bits2 = TestKeys.stringFilter(5_000, v1, added); // same size: a delta
    BloomFilterBits bits3 = TestKeys.stringFilter(5_000, v3);
    Map<Long, String> expected =
        Map.of(1L, answers(bits1, probes), 2L, answers(bits2, probes), 3L, answers(bits3, probes));

    Path probesFile = Files.writeString(work.resolve("probes.txt"), String.join("\n", probes));
    Path out = work.resolve("observed.jsonl");
    Path stop = work.resolve("stop");
    Path script =
        Path.of(getClass().getResource("/file-mode/file_mode_reader.py").toURI()).toAbsolutePath();

    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "ids");
    Manifest m1 = publisher.publish(bits1, v1.size(), 1).manifest();
    Process reader = null;
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config(
                "--filter",
                ns.name() + "/ids:String",
                "--local-cache-dir",
                shared.toString(),
                "--file-mode",
                "--file-interval",
                "0s"),
            client,
            Map.of())) {
      reader =
          new ProcessBuilder(
                  "python3",
                  script.toString(),
                  shared.toString(),
                  ns.name() + ".ids",
                  probesFile.toString(),
                  out.toString(),
                  stop.toString())
              .redirectErrorStream(true)
              .redirectOutput(work.resolve("reader.log").toFile())
              .start();
      LookupClient http = new LookupClient(sidecar.address());
      await().atMost(WAIT).until(() -> accepted(out).contains(1L));

      // v2: add-only, on the stable chain: set in the sidecar's bits in place, then written whole.
      publisher.publishDelta(m1, bits1, bits2, v1.size() + added.size(), 2);
      await().atMost(WAIT).until(() -> version(http.contains("ids", "x")) == 2);
      LiveBloomFilter<?> served = sidecar.filters().get(0);
      await().atMost(WAIT).until(() -> served.deltasAppliedInPlace() == 1);
      await().atMost(WAIT).until(() -> accepted(out).contains(2L));

      // v3: a whole new version, swapped in.
      publisher.publish(bits3, v3.size(), 3);
      await().atMost(WAIT).until(() -> accepted(out).contains(3L));

      // A payload changed under the reader's mapping (what a torn or tampered write would leave):
      // refused by the size and SHA-256 check, so no answer comes from it.
      JsonNode root = JSON.readTree(shared.resolve(ns.name() + ".ids.manifest.json").toFile());
      Path payload = shared.resolve(root.path("payloadFile").asText());
      try (RandomAccessFile file = new RandomAccessFile(payload.toFile(), "rw")) {
        long middle = file.length() / 2;
        file.seek(middle);
        int b = file.read();
        file.seek(middle);
        file.write(b ^ 0x10);
      }
      await().atMost(WAIT).until(() -> Files.readString(out).contains("\"why\": \"sha256\""));
    } finally {
      Files.writeString(stop, "");
      if (reader != null && !reader.waitFor(10, TimeUnit.SECONDS)) {
        reader.destroyForcibly();
      }
    }

    List<JsonNode> lines = new ArrayList<>();
    for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
      lines.add(JSON.readTree(line));
    }
    long lastVersion = 0;
    boolean refused = false;
    for (JsonNode line : lines) {
      long v = line.path("version").asLong();
      assertThat(v).as("versions only move forward").isGreaterThanOrEqualTo(lastVersion);
      lastVersion = v;
      if (line.path("accepted").asBoolean()) {
        assertThat(refused).as("nothing accepted after the torn file").isFalse();
        assertThat(line.path("answers").asText())
            .as("answers of v%d", v)
            .isEqualTo(expected.get(v));
      } else {
        assertThat(v).isEqualTo(3);
        refused = true;
      }
    }
    assertThat(refused).isTrue();
    assertThat(Files.readString(work.resolve("reader.log"))).isEmpty(); // no Python error
  }

  private static String answers(BloomFilterBits bits, List<String> probes) {
    StringBuilder s = new StringBuilder(probes.size());
    for (String probe : probes) {
      s.append(bits.mightContainString(probe) ? '1' : '0');
    }
    return s.toString();
  }

  /** The versions the reader accepted so far. */
  private static List<Long> accepted(Path out) throws Exception {
    if (!Files.exists(out)) {
      return List.of();
    }
    List<Long> versions = new ArrayList<>();
    for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
      JsonNode node = JSON.readTree(line);
      if (node.path("accepted").asBoolean()) {
        versions.add(node.path("version").asLong());
      }
    }
    return versions;
  }
}
