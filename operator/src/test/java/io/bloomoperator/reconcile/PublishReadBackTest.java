package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A delta publish does not read the published chain back from the API server when this operator
 * published that very version itself and still holds its payload; after a restart (nothing held) it
 * reads the chain back and verifies it as before. Counted on the operator's own client.
 */
@RealKubernetes(crdDirs = "crds")
class PublishReadBackTest {

  private static final RequestLog OPERATOR_REQUESTS = new RequestLog();

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")))
          .withRequestLog(OPERATOR_REQUESTS);

  private static final String FILTER_YAML =
      """
      apiVersion: bloomoperator.io/v1alpha1
      kind: BloomFilter
      metadata: {name: ids}
      spec:
        falsePositiveRate: 0.01
        expectedInsertions: 20000
        source:
          configMap: {name: ids, key: ids}
        refreshInterval: 10m
        snapshot: {chunkSizeBytes: 4096}
      """;

  @Test
  void aDeltaOnItsOwnVersionReadsNoChunkBackButAfterARestartItDoes(
      KubernetesClient client, TestNamespace ns) throws Exception {
    Set<String> keys = new LinkedHashSet<>(keys("k", 0, 5000));
    sourceConfigMap(client, ns.name(), "ids", "ids", List.copyOf(keys));
    apply(client, ns.name(), FILTER_YAML);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    Manifest v1 = manifest(client, ns.name(), "ids");
    assertThat(v1.chunks()).hasSizeGreaterThan(3);

    int before = chunkReads(ns).size();
    keys.addAll(keys("new", 0, 50));
    SnapshotFixtures.changeKeys(client, ns.name(), "ids", List.copyOf(keys));
    awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 2L);
    Manifest v2 = manifest(client, ns.name(), "ids");
    assertThat(v2.deltas()).as("v2 is a delta on v1").hasSize(1);
    assertThat(chunkReads(ns).subList(before, chunkReads(ns).size()))
        .as("chunks the operator read back to publish v2 on its own v1")
        .isEmpty();

    // A restarted operator holds nothing: it reads the chain back (v1's base, v2's delta) and
    // verifies it before building on it.
    OPERATOR.stop();
    OPERATOR.start();
    int restarted = chunkReads(ns).size();
    keys.addAll(keys("more", 0, 50));
    SnapshotFixtures.changeKeys(client, ns.name(), "ids", List.copyOf(keys));
    awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 3L);
    List<String> expected = new ArrayList<>();
    v2.chunks().forEach(c -> expected.add(c.name()));
    v2.deltas().get(0).chunks().forEach(c -> expected.add(c.name()));
    assertThat(chunkReads(ns).subList(restarted, chunkReads(ns).size()))
        .containsExactlyElementsOf(expected);
  }

  /** Chunk ConfigMaps of {@code ns} the operator read by name, in order. */
  private static List<String> chunkReads(TestNamespace ns) {
    String prefix = "GET /api/v1/namespaces/" + ns.name() + "/configmaps/ids-bloom-v";
    return OPERATOR_REQUESTS.paths().stream()
        .filter(p -> p.startsWith(prefix))
        .map(p -> p.substring(p.lastIndexOf('/') + 1))
        .toList();
  }

  private static List<String> keys(String prefix, int from, int to) {
    return IntStream.range(from, to).mapToObj(i -> prefix + "-" + i).toList();
  }
}
