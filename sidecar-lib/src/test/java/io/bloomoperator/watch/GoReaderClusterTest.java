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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Go reader's watcher and reader report ({@code sidecar-lib/go/kube}) on the real API server:
 * {@code kube/cluster_test.go} follows a base, a delta and a tampered version this side publishes
 * (answers equal to Java's, the tampered version refused while the delta keeps serving), and its
 * report Lease is read back with the operator's parser after each step (see {@link
 * ForeignReaderTurns#followBaseDeltaAndTamperedChunk}).
 */
@RealKubernetes
class GoReaderClusterTest {

  private static final Duration STEP = Duration.ofSeconds(90);

  @Test
  void goWatcherFollowsBaseDeltaRefusesTamperedChunkAndReports(
      KubernetesClient client, TestNamespace ns, @TempDir Path dir) throws Exception {
    Path go = RealKubernetesExtension.repoRoot().resolve("sidecar-lib/go");
    ForeignReaderTurns.followBaseDeltaAndTamperedChunk(
        client,
        ns.name(),
        "go-ids",
        dir,
        KubeCluster.shared(),
        STEP,
        (env, log) ->
            new ProcessBuilder(
                    "go",
                    "test",
                    "-count=1",
                    "-v",
                    "-run",
                    "^TestClusterFollowsBaseDeltaRefusesTamperedChunkAndReports$",
                    "./kube/")
                .directory(go.toFile()));
    String output = Files.readString(dir.resolve("reader.log"));
    // A skip would also exit 0: the test must have run.
    assertThat(output).as(output).contains("--- PASS: TestCluster").doesNotContain("SKIP");
  }
}
