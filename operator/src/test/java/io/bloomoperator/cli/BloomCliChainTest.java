package io.bloomoperator.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI on a published delta chain: inspect shows it, and export writes the whole Guava payload
 * of the current version and of each earlier version the chain holds.
 */
@RealKubernetes(crdDirs = "crds")
class BloomCliChainTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")));

  @Test
  void inspectAndExportUnderstandChains(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path tmp)
      throws Exception {
    List<String> v1Keys = IntStream.range(0, 1000).mapToObj(i -> "k" + i).toList();
    SnapshotFixtures.apply(client, ns.name(), filterYaml(v1Keys));
    SnapshotFixtures.awaitStatus(
        client, ns.name(), "ids", f -> SnapshotFixtures.ready(f, "True", "Published"));
    List<String> v2Keys = new ArrayList<>(v1Keys);
    v2Keys.add("extra-2");
    setKeys(client, ns, v2Keys);
    SnapshotFixtures.awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 2L);
    List<String> v3Keys = new ArrayList<>(v2Keys);
    v3Keys.add("extra-3");
    setKeys(client, ns, v3Keys);
    SnapshotFixtures.awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 3L);
    Manifest v3 = SnapshotFixtures.manifest(client, ns.name(), "ids");
    assertThat(v3.deltas()).hasSize(2);

    String kubeconfig = cluster.kubeconfig().toString();
    Cli.Run inspect =
        Cli.run("inspect", "-n", ns.name(), "--name", "ids", "--kubeconfig", kubeconfig);
    assertThat(inspect.exit()).as("%s", inspect).isZero();
    assertThat(inspect.out())
        .contains(
            "version:          3",
            "format:           " + Manifest.FORMAT_CHAIN,
            "baseVersion:      1",
            "delta:            v2:",
            "delta:            v3:",
            "verified");

    List<List<String>> keysByVersion = List.of(v1Keys, v2Keys, v3Keys);
    for (int version = 1; version <= 3; version++) {
      Path out = tmp.resolve("v" + version + ".bin");
      Cli.Run export = export(ns, kubeconfig, "--version", Integer.toString(version), "-o", out);
      assertThat(export.exit()).as("%s", export).isZero();
      assertThat(export.out()).contains("wrote version " + version);
      BloomFilter<CharSequence> exported =
          BloomFilter.readFrom(
              new ByteArrayInputStream(Files.readAllBytes(out)),
              Funnels.stringFunnel(StandardCharsets.UTF_8));
      BloomFilter<CharSequence> guava = SnapshotFixtures.emptyGuavaFilter(v3);
      keysByVersion.get(version - 1).forEach(guava::put);
      assertThat(exported).as("version %d", version).isEqualTo(guava);
    }
    Cli.Run current = export(ns, kubeconfig, "-o", tmp.resolve("current.bin"));
    assertThat(current.exit()).as("%s", current).isZero();
    assertThat(Files.readAllBytes(tmp.resolve("current.bin")))
        .isEqualTo(Files.readAllBytes(tmp.resolve("v3.bin")));

    Cli.Run query =
        Cli.run(
            "query",
            "-n",
            ns.name(),
            "--name",
            "ids",
            "--kubeconfig",
            kubeconfig,
            "--version",
            "2",
            "extra-2");
    assertThat(query.exit()).as("%s", query).isZero();
    assertThat(query.out().lines()).containsExactly("extra-2\tmaybe-present");

    Cli.Run gone = export(ns, kubeconfig, "--version", "7", "-o", tmp.resolve("x.bin"));
    assertThat(gone.exit()).isEqualTo(1);
    assertThat(gone.err()).contains("version 7 is not in the published chain");
    assertThat(tmp.resolve("x.bin")).doesNotExist();
  }

  private static Cli.Run export(TestNamespace ns, String kubeconfig, Object... options) {
    List<String> args =
        new ArrayList<>(
            List.of("export", "-n", ns.name(), "--name", "ids", "--kubeconfig", kubeconfig));
    for (Object option : options) {
      args.add(option.toString());
    }
    return Cli.run(args.toArray(String[]::new));
  }

  private static void setKeys(KubernetesClient client, TestNamespace ns, List<String> keys) {
    SnapshotFixtures.mergePatch(
        client, ns.name(), "ids", Map.of("spec", Map.of("source", Map.of("inline", keys))));
  }

  private static String filterYaml(List<String> keys) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 5000
          source:
            inline: [%s]
          snapshot: {chunkSizeBytes: 2000}
        """
        .formatted(String.join(", ", keys));
  }
}
