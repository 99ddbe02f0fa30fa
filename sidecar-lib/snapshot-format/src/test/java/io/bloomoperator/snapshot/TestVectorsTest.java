package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The checked-in reader test vectors are exactly what the writer produces today: a wire-format
 * change that forgets to regenerate them fails here. To regenerate after an intended change: {@code
 * mvn -B -o -pl sidecar-lib/snapshot-format test -Dtest=TestVectorsTest -Dvectors.write=true
 * -DskipTestPrereqs}, then review the diff.
 */
class TestVectorsTest {

  private static final Path DIR = Path.of("..", "test-vectors");

  @Test
  void checkedInVectorsAreWhatTheWriterProduces() throws IOException {
    SortedMap<String, byte[]> expected = TestVectors.files();
    if (Boolean.getBoolean("vectors.write")) {
      write(expected);
    }
    SortedMap<String, byte[]> actual = read();
    assertThat(actual.keySet())
        .as("files under sidecar-lib/test-vectors (README.md aside)")
        .containsExactlyElementsOf(expected.keySet());
    for (Map.Entry<String, byte[]> file : expected.entrySet()) {
      assertThat(new String(actual.get(file.getKey()), java.nio.charset.StandardCharsets.UTF_8))
          .as(file.getKey() + " (regenerate with -Dvectors.write=true if the change is intended)")
          .isEqualTo(new String(file.getValue(), java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  /** Guava itself, reading each Guava-layout payload, gives the probe answers the vectors state. */
  @Test
  void guavaAgreesWithEveryGuavaLayoutProbe() {
    int checked = 0;
    for (TestVectors.Case c : TestVectors.cases()) {
      Map<String, byte[]> chunks = new TreeMap<>(); // a refused step serves an earlier one's
      for (TestVectors.Step step : c.steps()) {
        collectChunks(step, chunks);
        Manifest served = step.expect().served();
        if (served == null || served.filterFormat() != FilterFormat.GUAVA) {
          continue;
        }
        byte[] payload = payloadOf(c, served, chunks);
        for (TestVectors.Probe probe : step.expect().probes()) {
          boolean guava =
              c.keyType() == KeyType.LONG
                  ? GuavaOracle.readFrom(payload, GuavaOracle.LONG_FUNNEL)
                      .mightContain(Long.parseLong(probe.key()))
                  : GuavaOracle.readFrom(payload, GuavaOracle.STRING_FUNNEL)
                      .mightContain(probe.key());
          assertThat(guava).as(c.name() + " / " + probe.key()).isEqualTo(probe.present());
          checked++;
        }
      }
    }
    assertThat(checked).isGreaterThan(500);
  }

  private static void collectChunks(TestVectors.Step step, Map<String, byte[]> chunks) {
    for (var cm : step.configMaps()) {
      String data =
          cm.getBinaryData() == null ? null : cm.getBinaryData().get(SnapshotNames.CHUNK_DATA_KEY);
      if (data != null) {
        chunks.put(cm.getMetadata().getName(), java.util.Base64.getDecoder().decode(data));
      }
    }
  }

  /** The payload {@code served} announces, decoded by this library from {@code chunks}. */
  private static byte[] payloadOf(TestVectors.Case c, Manifest served, Map<String, byte[]> chunks) {
    try {
      BloomFilterBits bits = SnapshotDecoder.decode(served, (i, ref) -> chunks.get(ref.name()));
      assertThat(bits.keyType()).isEqualTo(c.keyType());
      return SnapshotEncoder.toByteArray(bits);
    } catch (SnapshotVerificationException | IOException e) {
      throw new AssertionError(c.name() + ": " + e, e);
    }
  }

  private static SortedMap<String, byte[]> read() throws IOException {
    SortedMap<String, byte[]> files = new TreeMap<>();
    try (Stream<Path> walk = Files.walk(DIR)) {
      for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
        String relative = DIR.relativize(p).toString().replace('\\', '/');
        if (!relative.equals("README.md")) {
          files.put(relative, Files.readAllBytes(p));
        }
      }
    }
    return files;
  }

  private static void write(SortedMap<String, byte[]> files) throws IOException {
    List<String> keep = List.copyOf(files.keySet());
    if (Files.isDirectory(DIR)) {
      try (Stream<Path> walk = Files.walk(DIR)) {
        for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)::iterator) {
          String relative = DIR.relativize(p).toString().replace('\\', '/');
          if (!relative.equals("README.md") && !keep.contains(relative)) {
            Files.delete(p);
          }
        }
      }
    }
    for (Map.Entry<String, byte[]> file : files.entrySet()) {
      Path path = DIR.resolve(file.getKey());
      Files.createDirectories(path.getParent());
      Files.write(path, file.getValue());
    }
  }
}
