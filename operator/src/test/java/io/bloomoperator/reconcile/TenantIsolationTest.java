package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.snapshotConfigMaps;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.SecretAccess;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.LogCapture;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the author of a BloomFilter can reach through the operator, on a real API server: no Secret
 * that did not consent, no echo of source content, no adoption of someone else's ConfigMaps, no
 * more than the namespace's share of etcd.
 */
@RealKubernetes(crdDirs = "crds")
class TenantIsolationTest {

  /**
   * Fits a few small filters (about 130 bytes each, 4.2 KB with the 2 KiB each of their chunk and
   * manifest objects), not a 10,000-key one beside one of them (12 KB, 16.1 KB with its objects).
   */
  private static final long NAMESPACE_BUDGET = 16 * 1024;

  @RegisterExtension
  @Order(1)
  static final LogCapture LOGS = new LogCapture();

  @RegisterExtension
  @Order(2)
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of("BLOOM_MAX_NAMESPACE_BYTES", Long.toString(NAMESPACE_BUDGET))));

  private static void secret(
      KubernetesClient client,
      String namespace,
      String name,
      Map<String, String> annotations,
      String ids) {
    client
        .secrets()
        .inNamespace(namespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(name)
                .withAnnotations(annotations)
                .endMetadata()
                .withStringData(Map.of("ids", ids))
                .build())
        .createOr(c -> c.update());
  }

  private static String secretFilter(String name, String secret, String keyType) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          keyType: %s
          source:
            secret: {name: %s, key: ids}
        """
        .formatted(name, keyType, secret);
  }

  @Test
  void aSecretIsUsedOnlyByTheFiltersItNames(KubernetesClient client, TestNamespace ns) {
    secret(client, ns.name(), "vip", Map.of(), "cust-1\ncust-2\n");
    apply(client, ns.name(), secretFilter("vips", "vip", "String"));

    var refused =
        awaitStatus(client, ns.name(), "vips", f -> ready(f, "False", Reasons.SECRET_NOT_ALLOWED));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains("Secret vip")
        .contains(SecretAccess.ALLOWED_FILTERS);
    assertThat(snapshotConfigMaps(client, ns.name(), "vips"))
        .as("nothing of the Secret was published")
        .isEmpty();

    // The Secret's owner names the filter: it is built on the next retry.
    secret(
        client,
        ns.name(),
        "vip",
        Map.of(SecretAccess.ALLOWED_FILTERS, "someone-else, vips"),
        "cust-1\ncust-2\n");
    var published = awaitStatus(client, ns.name(), "vips", f -> ready(f, "True", "Published"));
    assertThat(published.getStatus().getKeys()).isEqualTo(2L);
  }

  @Test
  void malformedSecretContentIsNeverEchoed(KubernetesClient client, TestNamespace ns) {
    String marker = "tok-9f3a1c77e2";
    secret(
        client,
        ns.name(),
        "numbers",
        Map.of(SecretAccess.ALLOWED_FILTERS, "numbers"),
        "1\n2\n" + marker + "\n4\n");
    apply(client, ns.name(), secretFilter("numbers", "numbers", "Long"));

    var failed = awaitStatus(client, ns.name(), "numbers", f -> ready(f, "False", "MalformedKeys"));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("line 3")
        .contains(marker.length() + " characters");
    assertThat(Serialization.asJson(failed.getStatus())).doesNotContain(marker);
    assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
        .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("MalformedKeys"))
        .allSatisfy(e -> assertThat(e.getMessage()).doesNotContain(marker));
    assertThat(LOGS.events())
        .anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("MalformedKeys"));
    assertThat(LOGS.events())
        .noneSatisfy(
            e ->
                assertThat(
                        e.getFormattedMessage()
                            + String.valueOf(
                                e.getThrowableProxy() == null
                                    ? ""
                                    : e.getThrowableProxy().getMessage()))
                    .contains(marker));
  }

  private static io.bloomoperator.api.BloomFilter applyAndAwaitNameConflict(
      KubernetesClient client, String namespace, String name) {
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          source: {inline: [a, b]}
        """
            .formatted(name));
    return awaitStatus(client, namespace, name, f -> ready(f, "False", Reasons.NAME_CONFLICT));
  }

  @Test
  void aConfigMapOfSomeoneElseIsNeitherAdoptedNorOverwritten(
      KubernetesClient client, TestNamespace ns) {
    ConfigMap foreign =
        client
            .configMaps()
            .inNamespace(ns.name())
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName(SnapshotNames.manifestName("taken"))
                    .endMetadata()
                    .withData(Map.of("app.properties", "mine=true"))
                    .build())
            .create();
    var conflict = applyAndAwaitNameConflict(client, ns.name(), "taken");
    assertThat(ReadyCondition.of(conflict).orElseThrow().getMessage())
        .contains("ConfigMap taken-bloom exists and is not controlled by this BloomFilter");
    ConfigMap after =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("taken"))
            .get();
    assertThat(after.getMetadata().getResourceVersion())
        .isEqualTo(foreign.getMetadata().getResourceVersion());
    assertThat(after.getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(after.getData()).isEqualTo(Map.of("app.properties", "mine=true"));
  }

  @Test
  void aChunkNameTakenBySomeoneElseIsLeftAlone(KubernetesClient client, TestNamespace ns) {
    String chunk = SnapshotNames.chunkName("squatted", 1, 0);
    ConfigMap foreign =
        client
            .configMaps()
            .inNamespace(ns.name())
            .resource(
                new ConfigMapBuilder()
                    .withNewMetadata()
                    .withName(chunk)
                    .endMetadata()
                    .withData(Map.of("k", "v"))
                    .build())
            .create();
    var conflict = applyAndAwaitNameConflict(client, ns.name(), "squatted");
    assertThat(ReadyCondition.of(conflict).orElseThrow().getMessage()).contains(chunk);
    assertThat(
            client
                .configMaps()
                .inNamespace(ns.name())
                .withName(chunk)
                .get()
                .getMetadata()
                .getResourceVersion())
        .isEqualTo(foreign.getMetadata().getResourceVersion());
    assertThat(
            client
                .configMaps()
                .inNamespace(ns.name())
                .withName(SnapshotNames.manifestName("squatted"))
                .get())
        .isNull();

    client.configMaps().inNamespace(ns.name()).withName(chunk).delete();
    awaitStatus(client, ns.name(), "squatted", f -> ready(f, "True", "Published"));
  }

  @Test
  void aNamespaceCannotPublishBeyondItsBudget(KubernetesClient client, TestNamespace ns) {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: small}
        spec:
          falsePositiveRate: 0.01
          source: {inline: [a, b, c]}
        """);
    var small = awaitStatus(client, ns.name(), "small", f -> ready(f, "True", "Published"));
    assertThat(small.getStatus().getSizeBytes()).isLessThan(NAMESPACE_BUDGET / 4);

    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: big}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 10000
          source: {inline: [a]}
        """);
    var refused =
        awaitStatus(
            client, ns.name(), "big", f -> ready(f, "False", Reasons.NAMESPACE_QUOTA_EXCEEDED));
    assertThat(ReadyCondition.of(refused).orElseThrow().getMessage())
        .contains("BLOOM_MAX_NAMESPACE_BYTES")
        .contains("nothing was published");
    assertThat(snapshotConfigMaps(client, ns.name(), "big")).isEmpty();
    assertThat(
            client
                .resources(io.bloomoperator.api.BloomFilter.class)
                .inNamespace(ns.name())
                .withName("small")
                .get())
        .satisfies(
            f ->
                assertThat(ready(f, "True", "Published"))
                    .as("the filter already published is untouched")
                    .isTrue());
  }
}
