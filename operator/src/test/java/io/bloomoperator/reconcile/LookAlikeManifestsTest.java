package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ConfigMaps that look like the operator's manifests, made by someone who may create ConfigMaps but
 * not BloomFilters, on a real API server: they cost the operator no memory, take no filter's
 * namespace budget, and the real manifests are still repaired when deleted.
 */
@RealKubernetes(crdDirs = "crds")
class LookAlikeManifestsTest {

  private static final int LOOK_ALIKES = 40;
  private static final int LOOK_ALIKE_BYTES = 900_000;

  /**
   * Fits a few small filters (about 130 bytes each, 4.2 KB with the 2 KiB each of their chunk and
   * manifest objects).
   */
  private static final long NAMESPACE_BUDGET = 16 * 1024;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of("BLOOM_MAX_NAMESPACE_BYTES", Long.toString(NAMESPACE_BUDGET))));

  private static final Map<String, String> MANIFEST_LABELS =
      Map.of(
          SnapshotNames.LABEL_MANAGED_BY, SnapshotNames.MANAGED_BY,
          SnapshotNames.LABEL_ROLE, SnapshotNames.ROLE_MANIFEST);

  private static void lookAlike(
      KubernetesClient client, String namespace, String name, Map<String, String> data) {
    client
        .configMaps()
        .inNamespace(namespace)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(MANIFEST_LABELS)
                .endMetadata()
                .withData(data)
                .build())
        .create();
  }

  private static String inlineFilter(String name) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: %s}
    spec:
      falsePositiveRate: 0.01
      source: {inline: [a, b, c]}
    """
        .formatted(name);
  }

  /** Heap still in use after full collections: what the JVM retains. */
  private static long retainedHeap() {
    var memory = ManagementFactory.getMemoryMXBean();
    long least = Long.MAX_VALUE;
    for (int i = 0; i < 3; i++) {
      memory.gc();
      least = Math.min(least, memory.getHeapMemoryUsage().getUsed());
    }
    return least;
  }

  @Test
  void lookAlikesPresentAtStartUpCostTheOperatorNoMemory(
      KubernetesClient client, TestNamespace ns) {
    long baseline;
    // The attack as audited: the look-alikes exist when the operator starts.
    OPERATOR.stop();
    try {
      String filler = "x".repeat(LOOK_ALIKE_BYTES);
      for (int i = 0; i < LOOK_ALIKES; i++) {
        lookAlike(client, ns.name(), "decoy-" + i, Map.of("manifest.json", filler));
      }
      baseline = retainedHeap();
    } finally {
      OPERATOR.start();
    }
    apply(client, ns.name(), inlineFilter("honest"));
    awaitStatus(client, ns.name(), "honest", f -> ready(f, "True", "Published"));

    long grown = retainedHeap() - baseline;
    long lookAlikeBytes = (long) LOOK_ALIKES * LOOK_ALIKE_BYTES;
    System.out.printf(
        "retained heap after start with %d look-alikes (%d MB): %+.1f MB%n",
        LOOK_ALIKES, lookAlikeBytes >> 20, grown / 1e6);
    assertThat(grown)
        .as("heap the operator retains with %d MB of look-alikes present", lookAlikeBytes >> 20)
        .isLessThan(lookAlikeBytes / 3);

    // The manifest watch still repairs: a deleted manifest is published again promptly.
    var manifests = client.configMaps().inNamespace(ns.name());
    String manifest = SnapshotNames.manifestName("honest");
    String before = manifests.withName(manifest).get().getMetadata().getUid();
    manifests.withName(manifest).delete();
    ConfigMap repaired =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(
                () -> manifests.withName(manifest).get(),
                cm -> cm != null && !cm.getMetadata().getUid().equals(before));
    assertThat(repaired.getMetadata().getLabels()).containsAllEntriesOf(MANIFEST_LABELS);
  }

  @Test
  void lookAlikesTakeNoFiltersNamespaceBudget(KubernetesClient client, TestNamespace ns)
      throws Exception {
    apply(client, ns.name(), inlineFilter("first"));
    awaitStatus(client, ns.name(), "first", f -> ready(f, "True", "Published"));
    // Copies of a real manifest (it parses, it names real bytes) under other names and without
    // the operator's ownerReference: over the budget many times if they counted.
    Map<String, String> realData =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("first"))
            .get()
            .getData();
    long each =
        SnapshotFixtures.manifest(client, ns.name(), "first").storedBytes()
            + 2 * WriteBudget.Limits.OBJECT_OVERHEAD_BYTES;
    int copies = (int) (2 * NAMESPACE_BUDGET / each) + 1;
    for (int i = 0; i < copies; i++) {
      lookAlike(client, ns.name(), "copy-" + i + SnapshotNames.MANIFEST_SUFFIX, realData);
    }

    apply(client, ns.name(), inlineFilter("second"));
    var second =
        awaitStatus(
            client,
            ns.name(),
            "second",
            f ->
                ready(f, "True", "Published")
                    || ready(f, "False", Reasons.NAMESPACE_QUOTA_EXCEEDED));
    assertThat(ReadyCondition.of(second).orElseThrow().getReason())
        .as("%d look-alike manifests of %d bytes each", copies, each)
        .isEqualTo("Published");
  }
}
