package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.status.ReadyCondition;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.util.Map;

/**
 * Every kind of API call the operator makes for its users, as BloomFilters that need them: a
 * ConfigMap source rebuilt into a second version (creates, manifest update, retirement of the old
 * chunks by label), a Secret source (get by name), status writes and events. An install's RBAC is
 * sufficient when all of it succeeds under it.
 */
final class OperatorWorkload {

  private final KubernetesClient admin;
  private final String configMapNamespace;
  private final String secretNamespace;

  /** The ConfigMap-sourced filter lives in one namespace, the Secret-sourced one in another. */
  OperatorWorkload(KubernetesClient admin, String configMapNamespace, String secretNamespace) {
    this.admin = admin;
    this.configMapNamespace = configMapNamespace;
    this.secretNamespace = secretNamespace;
  }

  /** Creates the sources and the two BloomFilters. */
  void create() {
    admin
        .configMaps()
        .inNamespace(configMapNamespace)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("ids")
                .endMetadata()
                .withData(Map.of("ids", "a\nb\nc\n"))
                .build())
        .create();
    admin
        .secrets()
        .inNamespace(secretNamespace)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("secret-ids")
                .addToAnnotations("bloomoperator.io/allowed-filters", "from-secret")
                .endMetadata()
                .withStringData(Map.of("ids", "x\ny\n"))
                .build())
        .create();
    createFilter(
        admin,
        configMapNamespace,
        """
        metadata: {name: from-configmap}
        spec:
          falsePositiveRate: 0.01
          source: {configMap: {name: ids, key: ids}}
          refreshInterval: 10s
          snapshot: {chunkSizeBytes: 1024, retainPreviousFor: 1s}
        """);
    createFilter(
        admin,
        secretNamespace,
        """
        metadata: {name: from-secret}
        spec:
          falsePositiveRate: 0.01
          source: {secret: {name: secret-ids, key: ids}}
        """);
  }

  /** Waits until both are published, the ConfigMap one twice with version 1 retired. */
  void awaitDone() {
    awaitReady(admin, configMapNamespace, "from-configmap", 1);
    awaitReady(admin, secretNamespace, "from-secret", 1);
    admin
        .configMaps()
        .inNamespace(configMapNamespace)
        .withName("ids")
        .edit(cm -> new ConfigMapBuilder(cm).withData(Map.of("ids", "a\nb\nc\nd\n")).build());
    awaitReady(admin, configMapNamespace, "from-configmap", 2);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(
                        admin
                            .configMaps()
                            .inNamespace(configMapNamespace)
                            .withLabelSelector(SnapshotNames.chunkSelector("from-configmap", 1))
                            .list()
                            .getItems())
                    .isEmpty());
    assertThat(
            admin
                .configMaps()
                .inNamespace(secretNamespace)
                .withName(SnapshotNames.manifestName("from-secret"))
                .get())
        .isNotNull();
    for (String namespace : new String[] {configMapNamespace, secretNamespace}) {
      assertThat(admin.v1().events().inNamespace(namespace).list().getItems())
          .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Published"));
    }
  }

  /** Creates a BloomFilter from its metadata and spec. */
  static void createFilter(KubernetesClient admin, String namespace, String yaml) {
    admin
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .resource(
            Serialization.unmarshal(
                "apiVersion: bloomoperator.io/v1alpha1\nkind: BloomFilter\n" + yaml,
                BloomFilter.class))
        .create();
  }

  private static void awaitReady(
      KubernetesClient admin, String namespace, String name, long version) {
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              BloomFilter filter =
                  admin.resources(BloomFilter.class).inNamespace(namespace).withName(name).get();
              assertThat(ReadyCondition.of(filter))
                  .hasValueSatisfying(
                      c -> assertThat(c.getStatus()).as(c.getMessage()).isEqualTo("True"));
              assertThat(filter.getStatus().getVersion()).isEqualTo(version);
            });
  }
}
