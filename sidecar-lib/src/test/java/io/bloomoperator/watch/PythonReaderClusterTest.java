package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python reader's watcher ({@code sidecar-lib/python}, {@code bloomoperator_reader.watch})
 * following a filter on the real API server: this side publishes a base, a delta on it and a
 * version with a tampered chunk, with the publisher the Java reader's tests use; {@code
 * tests/test_cluster.py} checks, per version, that the Python answers equal Java's for present and
 * absent keys, that the delta is loaded, and that the tampered version is refused while the delta
 * keeps serving. The two processes take turns through files in a shared directory.
 */
@RealKubernetes
class PythonReaderClusterTest {

  private static final String FILTER = "py-ids";
  private static final Duration STEP = Duration.ofSeconds(90);

  @Test
  void pythonWatcherFollowsBaseDeltaAndRefusesTamperedChunk(
      KubernetesClient client, TestNamespace ns, @TempDir Path dir) throws Exception {
    Path python = RealKubernetesExtension.repoRoot().resolve("sidecar-lib/python");
    ensureVenv(python, dir);

    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), FILTER);
    List<String> common = TestKeys.strings("common", 4_000);
    List<String> onlyV1 = TestKeys.strings("v1", 1_000);
    List<String> onlyV2 = TestKeys.strings("v2", 1_000);
    List<String> absent = TestKeys.strings("absent", 2_000);
    BloomFilterBits v1 = TestKeys.stringFilter(10_000, common, onlyV1);
    BloomFilterBits v2 = TestKeys.stringFilter(10_000, common, onlyV2);
    // Small chunks: several per version, with 64-bit words split across chunk boundaries.
    Manifest m1 = publisher.publish(v1, 5_000, 1, 3_001, SnapshotPublisher.Tamper.NONE).manifest();
    writeExpected(dir, 1, v1, common, onlyV1, onlyV2, absent);

    Path log = dir.resolve("pytest.log");
    Path kubeconfig = dir.resolve("kubeconfig.yaml");
    Files.copy(KubeCluster.shared().kubeconfig(), kubeconfig);
    ProcessBuilder pytest =
        new ProcessBuilder(
                python.resolve(".venv/bin/python").toString(),
                "-m",
                "pytest",
                "-q",
                "-rs",
                "tests/test_cluster.py")
            .directory(python.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    pytest.environment().put("KUBECONFIG", kubeconfig.toString());
    pytest.environment().put("BLOOM_CLUSTER_NAMESPACE", ns.name());
    pytest.environment().put("BLOOM_CLUSTER_FILTER", FILTER);
    pytest.environment().put("BLOOM_CLUSTER_DIR", dir.toString());
    Process process = pytest.start();
    try {
      awaitSeen(dir, 1, process, log);
      publisher.publishDelta(m1, v1, v2, 5_000, 2);
      writeExpected(dir, 2, v2, common, onlyV1, onlyV2, absent);
      awaitSeen(dir, 2, process, log);

      // v3: one byte of chunk 1 flipped after the manifest took its digest.
      publisher.publish(
          TestKeys.stringFilter(10_000, absent),
          absent.size(),
          3,
          3_001,
          (index, bytes) -> {
            if (index == 1) {
              bytes[17] ^= 0x40;
            }
            return bytes;
          });
      // The Python side expects v2's answers still.
      writeExpected(dir, 3, v2, common, onlyV1, onlyV2, absent);
      awaitSeen(dir, 3, process, log);

      assertThat(process.waitFor(STEP.toSeconds(), TimeUnit.SECONDS)).isTrue();
      String output = Files.readString(log);
      assertThat(process.exitValue()).as(output).isZero();
      // A skip would also exit 0: the test must have run.
      assertThat(output).as(output).contains("1 passed").doesNotContain("skipped");
    } finally {
      process.destroyForcibly();
    }
  }

  /** The venv test.sh makes (pinned requirements-dev.txt), without running the offline suite. */
  private static void ensureVenv(Path python, Path dir) throws Exception {
    Path log = dir.resolve("venv.log");
    Process venv =
        new ProcessBuilder("bash", python.resolve("test.sh").toString(), "--co", "-q")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertThat(venv.waitFor(10, TimeUnit.MINUTES)).isTrue();
    assertThat(venv.exitValue()).as(Files.readString(log)).isZero();
  }

  @SafeVarargs
  private static void writeExpected(
      Path dir, long version, BloomFilterBits served, List<String>... keySets) throws IOException {
    List<String> lines = new ArrayList<>();
    for (List<String> keys : keySets) {
      for (String key : keys) {
        lines.add(key + "\t" + (served.mightContainString(key) ? "1" : "0"));
      }
    }
    Files.write(dir.resolve("v" + version + ".keys"), lines, StandardCharsets.UTF_8);
    // Written after the keys: the Python side reads them once this exists.
    Files.createFile(dir.resolve("v" + version + ".published"));
  }

  private static void awaitSeen(Path dir, long version, Process process, Path log)
      throws Exception {
    Path seen = dir.resolve("v" + version + ".seen");
    long deadline = System.nanoTime() + STEP.toNanos();
    while (!Files.exists(seen)) {
      if (!process.isAlive()) {
        throw new AssertionError(
            "pytest exited with "
                + process.exitValue()
                + " before checking v"
                + version
                + ":\n"
                + Files.readString(log));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "pytest did not check v" + version + " in " + STEP + ":\n" + Files.readString(log));
      }
      Thread.sleep(50);
    }
  }
}
