package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A running canary's chunks are stored in etcd beside the stable version's, so they count against
 * the namespace's snapshot budget (BLOOM_MAX_NAMESPACE_BYTES) when another filter of the namespace
 * publishes: canaries must not let a namespace hold more than its budget.
 */
@RealKubernetes(crdDirs = "crds")
class CanaryBudgetTest {

  /**
   * One version of 1,000 keys: ~1.2 KB of payload + 2 KiB per object (chunk, manifest) ≈ 5.3 KB; a
   * canary's extra chunk ≈ 3.3 KB. Two filters of one version fit (≈ 10.6 KB), one with a running
   * canary beside another does not (≈ 13.9 KB).
   */
  private static final long NAMESPACE_BUDGET = 12 * 1024;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of(
                  "BLOOM_MAX_NAMESPACE_BYTES",
                  Long.toString(NAMESPACE_BUDGET),
                  "BLOOM_MIN_PUBLISH_INTERVAL",
                  "1s",
                  "BLOOM_DELTA_MAX_CHAIN",
                  "0")));

  @Test
  void twoFiltersOfOneVersionFitTheBudget(KubernetesClient client, TestNamespace ns) {
    create(client, ns.name(), "a", "a1");
    awaitStatus(client, ns.name(), "a", f -> ready(f, "True", Reasons.PUBLISHED));
    create(client, ns.name(), "b", "b1");
    BloomFilter b =
        awaitStatus(
            client,
            ns.name(),
            "b",
            f ->
                ready(f, "True", Reasons.PUBLISHED)
                    || ready(f, "False", Reasons.NAMESPACE_QUOTA_EXCEEDED));
    assertThat(ReadyCondition.of(b).orElseThrow().getReason()).isEqualTo(Reasons.PUBLISHED);
  }

  @Test
  void aRunningCanaryCountsAgainstTheNamespaceBudget(KubernetesClient client, TestNamespace ns) {
    create(client, ns.name(), "a", "a1");
    awaitStatus(client, ns.name(), "a", f -> ready(f, "True", Reasons.PUBLISHED));
    mergePatch(client, ns.name(), "a", Map.of("spec", Map.of("source", inline("a2"))));
    awaitStatus(
        client,
        ns.name(),
        "a",
        f -> f.getStatus().getCanary() != null && f.getStatus().getCanary().getVersion() == 2L);

    create(client, ns.name(), "b", "b1");
    BloomFilter b =
        awaitStatus(
            client,
            ns.name(),
            "b",
            f ->
                ready(f, "True", Reasons.PUBLISHED)
                    || ready(f, "False", Reasons.NAMESPACE_QUOTA_EXCEEDED));
    assertThat(ReadyCondition.of(b).orElseThrow().getReason())
        .as("filter a's canary chunks are counted with its stable version")
        .isEqualTo(Reasons.NAMESPACE_QUOTA_EXCEEDED);
  }

  private static void create(KubernetesClient client, String namespace, String name, String keys) {
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          rollout:
            canary: {percent: 10, holdFor: 1h}
          source:
            inline: [%s]
        """
            .formatted(name, String.join(",", keys(keys))));
  }

  private static Map<String, Object> inline(String prefix) {
    return Map.of("inline", keys(prefix));
  }

  private static List<String> keys(String prefix) {
    return IntStream.range(0, 1000).mapToObj(i -> prefix + "-" + i).toList();
  }
}
