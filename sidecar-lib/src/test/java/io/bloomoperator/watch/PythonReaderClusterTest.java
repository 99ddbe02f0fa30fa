package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python reader's watcher and reader report ({@code sidecar-lib/python}, {@code
 * bloomoperator_reader.watch}) on the real API server: {@code tests/test_cluster.py} follows a
 * base, a delta and a tampered version this side publishes (answers equal to Java's, the delta
 * loaded, the tampered version refused while the delta keeps serving), and its report Lease is read
 * back with the operator's parser after each step (see {@link
 * ForeignReaderTurns#followBaseDeltaAndTamperedChunk}).
 */
@RealKubernetes
class PythonReaderClusterTest {

  private static final Duration STEP = Duration.ofSeconds(90);

  @Test
  void pythonWatcherFollowsBaseDeltaRefusesTamperedChunkAndReports(
      KubernetesClient client, TestNamespace ns, @TempDir Path dir) throws Exception {
    Path python = RealKubernetesExtension.repoRoot().resolve("sidecar-lib/python");
    ensureVenv(python, dir);
    ForeignReaderTurns.followBaseDeltaAndTamperedChunk(
        client,
        ns.name(),
        "py-ids",
        dir,
        KubeCluster.shared(),
        STEP,
        (env, log) ->
            new ProcessBuilder(
                    python.resolve(".venv/bin/python").toString(),
                    "-m",
                    "pytest",
                    "-q",
                    "-rs",
                    "tests/test_cluster.py")
                .directory(python.toFile()));
    String output = Files.readString(dir.resolve("reader.log"));
    // A skip would also exit 0: the test must have run.
    assertThat(output).as(output).contains("1 passed").doesNotContain("skipped");
  }

  /**
   * The venv test.sh makes (pinned requirements-dev.txt), without running the offline suite; also
   * used by the operator's tests of the foreign readers ({@code ForeignReaderProcesses}).
   */
  static void ensureVenv(Path python, Path dir) throws Exception {
    Path log = dir.resolve("venv.log");
    Process venv =
        new ProcessBuilder("bash", python.resolve("test.sh").toString(), "--co", "-q")
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertThat(venv.waitFor(10, TimeUnit.MINUTES)).isTrue();
    assertThat(venv.exitValue()).as(Files.readString(log)).isZero();
  }
}
