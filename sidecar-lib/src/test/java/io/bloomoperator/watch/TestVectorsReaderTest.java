package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.snapshot.AnnouncedCanary;
import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SnapshotVerificationException;
import io.bloomoperator.snapshot.TrustedKeys;
import io.fabric8.kubernetes.api.model.ConfigMap;
import java.io.IOException;
import java.nio.file.Path;
import java.security.InvalidKeyException;
import java.security.PublicKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The Java reader passes every language-neutral test vector in {@code sidecar-lib/test-vectors}
 * (see its README.md): each step's ConfigMaps are announced to the reader's own acceptance rule
 * ({@link Acceptance}) and fetcher ({@link SnapshotFetcher}), in the order {@link WatchLoop} uses
 * them (manifest, canary choice, verdict, fetch), and what it then serves and answers must be what
 * the vector states.
 */
class TestVectorsReaderTest {

  private static final Path DIR = Path.of("test-vectors");
  private static final ObjectMapper JSON = new ObjectMapper();

  @TestFactory
  Stream<DynamicTest> everyVector() throws IOException {
    JsonNode index = JSON.readTree(DIR.resolve("index.json").toFile());
    List<DynamicTest> tests = new ArrayList<>();
    for (JsonNode name : index.get("cases")) {
      Path file = DIR.resolve(name.asText()).resolve("case.json");
      tests.add(DynamicTest.dynamicTest(name.asText(), () -> run(JSON.readTree(file.toFile()))));
    }
    assertThat(tests).hasSizeGreaterThan(20);
    return tests.stream();
  }

  private static void run(JsonNode vector) throws Exception {
    JsonNode reader = vector.get("reader");
    String namespace = reader.get("namespace").asText();
    String filter = reader.get("filter").asText();
    String pod = reader.get("podName").asText();
    KeyType keyType = KeyType.fromCrdName(reader.get("keyType").asText());
    List<PublicKey> keys = new ArrayList<>();
    for (JsonNode pem : reader.get("trustedKeys")) {
      keys.add(publicKey(pem.asText()));
    }
    Acceptance acceptance =
        new Acceptance(
            namespace,
            filter,
            keyType,
            new SnapshotLimits(
                reader.get("limits").get("maxTotalBytes").asLong(),
                reader.get("limits").get("maxChunks").asInt()),
            keys.isEmpty() ? TrustedKeys.none() : TrustedKeys.of(keys),
            null);
    ServedSnapshot served = null;
    int stepNumber = 0;
    for (JsonNode step : vector.get("steps")) {
      String where =
          vector.get("name").asText()
              + " step "
              + stepNumber++
              + " ("
              + step.get("note").asText()
              + ")";
      Map<String, ConfigMap> maps = new HashMap<>();
      for (JsonNode cm : step.get("configMaps")) {
        ConfigMap configMap = JSON.treeToValue(cm, ConfigMap.class);
        maps.put(configMap.getMetadata().getName(), configMap);
      }
      Outcome outcome =
          announce(acceptance, pod, maps.get(SnapshotNames.manifestName(filter)), maps, served);
      if (outcome.served() != null) {
        served = outcome.served();
      }
      JsonNode expect = step.get("expect");
      assertThat(outcome.kind()).as(where + ": outcome").isEqualTo(expect.get("outcome").asText());
      assertThat(outcome.reason() == null ? null : outcome.reason().name())
          .as(where + ": reason")
          .isEqualTo(expect.hasNonNull("reason") ? expect.get("reason").asText() : null);
      JsonNode expected = expect.get("served");
      if (expected.isNull()) {
        assertThat(served).as(where + ": nothing served").isNull();
        continue;
      }
      assertThat(served).as(where + ": served").isNotNull();
      Manifest manifest = served.manifest();
      assertThat(manifest.version()).as(where).isEqualTo(expected.get("version").asLong());
      assertThat(manifest.sha256()).as(where).isEqualTo(expected.get("sha256").asText());
      assertThat(manifest.format()).as(where).isEqualTo(expected.get("format").asText());
      assertThat(served.bits().numBits()).as(where).isEqualTo(expected.get("numBits").asLong());
      for (JsonNode probe : expect.get("probes")) {
        String key = probe.get("key").asText();
        boolean answer =
            keyType == KeyType.LONG
                ? served.bits().mightContainLong(Long.parseLong(key))
                : served.bits().mightContainString(key);
        assertThat(answer)
            .as(where + ": key '" + key + "'")
            .isEqualTo(probe.get("present").asBoolean());
      }
    }
  }

  record Outcome(String kind, LoadFailureReason reason, ServedSnapshot served) {}

  /** What the reader does with {@code manifestMap} announced while serving {@code served}. */
  private static Outcome announce(
      Acceptance acceptance,
      String pod,
      ConfigMap manifestMap,
      Map<String, ConfigMap> maps,
      ServedSnapshot served) {
    AnnouncedManifest current = served == null ? null : served.announced();
    Instant now = Instant.now();
    AnnouncedManifest announced;
    try {
      announced = SnapshotConfigMaps.readManifest(manifestMap);
    } catch (SnapshotVerificationException e) {
      return new Outcome("refuse", LoadFailureReason.of(e), null);
    }
    AnnouncedCanary canary;
    try {
      canary = SnapshotConfigMaps.readCanary(manifestMap);
    } catch (SnapshotVerificationException e) {
      canary = null; // as WatchLoop.canaryFor: a malformed canary counts as none
    }
    if (canary != null
        && canary.includes(pod)
        && !(acceptance.judge(canary.announced(), current, now)
            instanceof Acceptance.Verdict.Refuse)) {
      announced = canary.announced();
    }
    Acceptance.Verdict verdict = acceptance.judge(announced, current, now);
    if (verdict instanceof Acceptance.Verdict.Refuse refused) {
      return new Outcome("refuse", LoadFailureReason.of(refused.reason()), null);
    }
    if (verdict instanceof Acceptance.Verdict.Same) {
      return new Outcome("keep", null, null);
    }
    SnapshotDecoder.ChunkSource chunks =
        (index, ref) -> {
          ConfigMap chunk = maps.get(ref.name());
          return chunk == null
              ? null
              : SnapshotConfigMaps.chunkBytes(chunk, ref.bytes(), "chunk " + ref.name());
        };
    try {
      return new Outcome("load", null, new SnapshotFetcher(chunks).fetch(announced, served));
    } catch (SnapshotVerificationException | IOException e) {
      return new Outcome("refuse", LoadFailureReason.of(e), null);
    }
  }

  private static PublicKey publicKey(String pem) {
    try {
      return Ed25519Keys.readPublicKey(pem);
    } catch (InvalidKeyException e) {
      throw new AssertionError("a vector's trusted key is not an Ed25519 PEM key", e);
    }
  }
}
