package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI's output against a real API server: kubectl accepts it with server-side apply, the CLI
 * reads it back from the cluster, and sidecar-lib serves it.
 */
@RealKubernetes
class BloomCliRealApiTest {

  private static final String FILTER = "user-ids";

  @Test
  void serverSideApplyOfBuildOutputIsAValidSnapshot(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    List<String> keys = IntStream.range(0, 20_000).mapToObj(i -> "user-" + i).toList();
    Path input = Files.write(tmp.resolve("users.txt"), keys);
    Path out = tmp.resolve("snapshot");
    // ~9 MB at the default 1,000,000-byte chunks: several ConfigMaps near the size limit.
    Cli.Run build =
        Cli.run(
            "build",
            "--name",
            FILTER,
            "--input",
            input.toString(),
            "--expected-insertions",
            "5000000",
            "--fpp",
            "0.001",
            "--output",
            out.toString());
    assertThat(build.exit()).as("%s", build).isZero();
    BloomFilterSizing sizing = BloomFilterSizing.forKeys(5_000_000, 0.001);
    int chunks =
        (int) ((SnapshotEncoder.HEADER_BYTES + sizing.numBits() / 8 + 999_999) / 1_000_000);
    assertThat(chunks).isGreaterThanOrEqualTo(9);
    assertThat(build.out()).contains(chunks + " chunk(s)");

    cluster.kubectl("apply", "--server-side", "-n", ns.name(), "-f", out.toString());

    ConfigMap chunk =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.chunkName(FILTER, 1, 0))
            .get();
    assertThat(chunk.getImmutable()).isTrue();
    assertThat(chunk.getMetadata().getLabels()).isEqualTo(SnapshotNames.chunkLabels(FILTER, 1));
    assertThat(chunk.getMetadata().getAnnotations()).isNullOrEmpty(); // no last-applied copy
    assertThat(
            client
                .configMaps()
                .inNamespace(ns.name())
                .withLabelSelector(SnapshotNames.chunkSelector(FILTER, 1))
                .list()
                .getItems())
        .hasSize(chunks);

    String kubeconfig = cluster.kubeconfig().toString();
    Cli.Run inspect =
        Cli.run("inspect", "--namespace", ns.name(), "--name", FILTER, "--kubeconfig", kubeconfig);
    assertThat(inspect.exit()).as("%s", inspect).isZero();
    assertThat(inspect.out())
        .contains(
            "ConfigMap " + ns.name() + "/" + FILTER + "-bloom",
            "keyCount:         20000",
            "chunks:           " + chunks,
            "verified");

    Cli.Run query =
        Cli.run(
            "query",
            "-n",
            ns.name(),
            "--name",
            FILTER,
            "--kubeconfig",
            kubeconfig,
            "user-0",
            "user-19999",
            "somebody-else");
    assertThat(query.exit()).as("%s", query).isZero();
    assertThat(query.out().lines())
        .containsExactly(
            "user-0\tmaybe-present", "user-19999\tmaybe-present", "somebody-else\tabsent");

    Cli.Run missing =
        Cli.run("inspect", "-n", ns.name(), "--name", "no-such-filter", "--kubeconfig", kubeconfig);
    assertThat(missing.exit()).isEqualTo(1);
    assertThat(missing.err()).contains("no-such-filter-bloom", "not found");

    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.watch(client, ns.name(), FILTER, LiveKeyType.STRING)) {
      assertThat(live.awaitReady(Duration.ofSeconds(15))).isTrue();
      assertThat(live.currentVersion()).isEqualTo(1);
      assertThat(keys).allMatch(live::mightContain);
      assertThat(live.mightContain("somebody-else")).isFalse();
    }
  }
}
