package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
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
 * Retained versions hold chunks in etcd, so they count against the namespace's snapshot budget
 * (BLOOM_MAX_NAMESPACE_BYTES): an author cannot keep ten whole versions where the budget pays for
 * two. The same sequence of whole versions publishes without retention.
 */
@RealKubernetes(crdDirs = "crds")
class RetainedVersionsBudgetTest {

  /**
   * About 1.2 KB of payload per version, 3.2 KB with its chunk object, 5.2 KB with its manifest: a
   * publish (new version plus the replaced one in its grace period) fits, three more retained
   * versions beside them do not.
   */
  private static final long NAMESPACE_BUDGET = 16 * 1024;

  private static final int VERSIONS = 6;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of(
                  "BLOOM_MAX_NAMESPACE_BYTES",
                  Long.toString(NAMESPACE_BUDGET),
                  "BLOOM_MIN_PUBLISH_INTERVAL",
                  "1s",
                  // Every version a whole snapshot of the same size: the figures stay simple.
                  "BLOOM_DELTA_MAX_CHAIN",
                  "0")));

  @Test
  void retainedVersionsAreRefusedOnceTheyWouldTakeTheNamespaceOverItsBudget(
      KubernetesClient client, TestNamespace ns) {
    create(client, ns.name(), 10);
    BloomFilter last = publishWholeVersions(client, ns.name());
    assertThat(ReadyCondition.of(last).orElseThrow().getReason())
        .as("the retained versions take the namespace over its budget")
        .isEqualTo(Reasons.NAMESPACE_QUOTA_EXCEEDED);
    assertThat(last.getStatus().getVersion()).isLessThan(VERSIONS);
    assertThat(
            RetainedVersions.of(
                    client
                        .configMaps()
                        .inNamespace(ns.name())
                        .withName(SnapshotNames.manifestName("ids"))
                        .get())
                .manifests())
        .as("versions are retained up to the budget")
        .isNotEmpty();
  }

  @Test
  void withoutRetentionTheSameVersionsFit(KubernetesClient client, TestNamespace ns) {
    create(client, ns.name(), 0);
    BloomFilter last = publishWholeVersions(client, ns.name());
    assertThat(ReadyCondition.of(last).orElseThrow().getReason()).isEqualTo(Reasons.PUBLISHED);
    assertThat(last.getStatus().getVersion()).isEqualTo((long) VERSIONS);
  }

  /**
   * Publishes versions 2.. {@link #VERSIONS}, each a whole snapshot of another 1,000 keys, until
   * one is refused; the last status.
   */
  private static BloomFilter publishWholeVersions(KubernetesClient client, String namespace) {
    BloomFilter filter =
        awaitStatus(client, namespace, "ids", f -> ready(f, "True", Reasons.PUBLISHED));
    for (int v = 2; v <= VERSIONS; v++) {
      long version = v;
      mergePatch(
          client,
          namespace,
          "ids",
          Map.of("spec", Map.of("source", Map.of("inline", keys("v" + v)))));
      filter =
          awaitStatus(
              client,
              namespace,
              "ids",
              f ->
                  (ready(f, "True", Reasons.PUBLISHED) && f.getStatus().getVersion() == version)
                      || ready(f, "False", Reasons.NAMESPACE_QUOTA_EXCEEDED));
      if (ready(filter, "False", null)) {
        return filter;
      }
    }
    return filter;
  }

  private static void create(KubernetesClient client, String namespace, int keepVersions) {
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [%s]
          snapshot: {keepVersions: %d}
        """
            .formatted(String.join(",", keys("v1")), keepVersions));
  }

  private static List<String> keys(String prefix) {
    return IntStream.range(0, 1000).mapToObj(i -> prefix + "-" + i).toList();
  }
}
