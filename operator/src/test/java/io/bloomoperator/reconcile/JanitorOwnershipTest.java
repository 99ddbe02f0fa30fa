package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.namedChunks;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.awaitility.core.ThrowingRunnable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One filter's janitor never deletes another's chunks, on a real API server: not when the other's
 * name is long and cut for its label value, and not when someone labels a ConfigMap as the filter's
 * chunk.
 */
@RealKubernetes(crdDirs = "crds")
class JanitorOwnershipTest {

  /** How long a failing filter is left to retry (backoff 2 s, 2 s, 4 s, 8 s: five attempts). */
  private static final Duration RETRIES = Duration.ofSeconds(20);

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  /** The label value a filter name over 63 characters had before cut values were marked. */
  private static String legacyCutLabelValue(String name) throws Exception {
    byte[] digest =
        MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
    String hashPart = "-" + HexFormat.of().formatHex(digest, 0, 4);
    int cut = 63 - hashPart.length();
    while (!Character.isLetterOrDigit(name.charAt(cut - 1))) {
      cut--;
    }
    return name.substring(0, cut) + hashPart;
  }

  private static String filter(String name, String source) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: %s}
    spec:
      falsePositiveRate: 0.01
      source: %s
    """
        .formatted(name, source);
  }

  private static String failingSource() {
    return "{configMap: {name: does-not-exist, key: ids}}";
  }

  private static List<String> existing(KubernetesClient client, String namespace, List<String> n) {
    return n.stream()
        .filter(name -> client.configMaps().inNamespace(namespace).withName(name).get() != null)
        .toList();
  }

  /** Asserts {@code assertion} all the time a failing filter retries. */
  private static void holdsWhileRetrying(ThrowingRunnable assertion) {
    await()
        .during(RETRIES)
        .atMost(RETRIES.plusSeconds(10))
        .pollInterval(Duration.ofMillis(500))
        .untilAsserted(assertion);
  }

  @Test
  void aFilterNamedLikeAnothersCutLabelLeavesItsChunksAlone(
      KubernetesClient client, TestNamespace ns) throws Exception {
    String victim = "payments-allowlist-of-customer-ids-for-the-checkout-service-eu-west";
    assertThat(victim).hasSizeGreaterThan(SnapshotNames.MAX_LABEL_VALUE_LENGTH);
    apply(client, ns.name(), filter(victim, "{inline: [cust-1, cust-2, cust-3]}"));
    awaitStatus(client, ns.name(), victim, f -> ready(f, "True", "Published"));
    Manifest published = SnapshotFixtures.manifest(client, ns.name(), victim);
    List<String> chunks = namedChunks(published);
    assertThat(chunks).isNotEmpty();

    // The attack as audited: a filter named exactly the victim's cut label value (a valid name),
    // whose source fails, so its janitor runs on every retry with no manifest to keep.
    String attacker = legacyCutLabelValue(victim);
    apply(client, ns.name(), filter(attacker, failingSource()));
    awaitStatus(client, ns.name(), attacker, f -> ready(f, "False", Reasons.SOURCE_NOT_FOUND));

    holdsWhileRetrying(
        () ->
            assertThat(existing(client, ns.name(), chunks))
                .as("the victim's chunks while the attacker retries")
                .containsExactlyElementsOf(chunks));
    assertThat(SnapshotFixtures.payload(client, ns.name(), published))
        .as("the published version still reads whole")
        .hasSize((int) published.totalBytes());
  }

  @Test
  void aConfigMapLabelledAsAFiltersChunkButNotControlledByItIsLeftAlone(
      KubernetesClient client, TestNamespace ns) {
    // Someone's copy of a chunk (or anything labelled alike): the labels say "chunk of filter
    // 'failing'", no ownerReference says so.
    client
        .configMaps()
        .inNamespace(ns.name())
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("backup-of-a-chunk")
                .withLabels(SnapshotNames.chunkLabels("failing", 1))
                .endMetadata()
                .withData(Map.of("note", "not the operator's"))
                .build())
        .create();
    apply(client, ns.name(), filter("failing", failingSource()));
    awaitStatus(client, ns.name(), "failing", f -> ready(f, "False", Reasons.SOURCE_NOT_FOUND));

    holdsWhileRetrying(
        () ->
            assertThat(
                    client.configMaps().inNamespace(ns.name()).withName("backup-of-a-chunk").get())
                .as("a ConfigMap the filter does not control")
                .isNotNull());
  }
}
