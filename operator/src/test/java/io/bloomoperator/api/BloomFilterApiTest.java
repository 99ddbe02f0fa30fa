package io.bloomoperator.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The BloomFilter API as the real API server enforces it: schema, validation, status. */
@RealKubernetes(crdDirs = "crds")
class BloomFilterApiTest {

  private static final String VALID =
      """
      apiVersion: bloomoperator.io/v1alpha1
      kind: BloomFilter
      metadata: {name: product-ids}
      spec:
        falsePositiveRate: 0.01
        expectedInsertions: 10000000
        source:
          configMap: {name: product-id-list, key: ids.txt}
        refreshInterval: 10m
      """;

  @Test
  void committedCrdIsServedWithStatusSubresourceAndShortName(KubernetesClient client) {
    CustomResourceDefinition crd =
        client
            .apiextensions()
            .v1()
            .customResourceDefinitions()
            .withName("bloomfilters.bloomoperator.io")
            .get();
    assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
    assertThat(crd.getSpec().getNames().getShortNames()).containsExactly("bf");
    assertThat(crd.getSpec().getVersions())
        .singleElement()
        .satisfies(
            v -> {
              assertThat(v.getName()).isEqualTo("v1alpha1");
              assertThat(v.getSubresources().getStatus()).isNotNull();
              assertThat(v.getAdditionalPrinterColumns())
                  // the API server omits priority 0
                  .filteredOn(c -> c.getPriority() == null || c.getPriority() == 0)
                  .extracting(c -> c.getName())
                  .containsExactly(
                      "Ready", "Version", "Keys", "FPP", "Size", "Store", "Serving", "Age");
              // kubectl get -o wide only
              assertThat(v.getAdditionalPrinterColumns())
                  .filteredOn(c -> c.getPriority() != null && c.getPriority() == 1)
                  .extracting(c -> c.getName())
                  .containsExactly("Deltas", "Reason", "Phase", "Refresh", "Last Build");
            });
  }

  @Test
  void kubectlExplainShowsFieldDescriptions(KubeCluster cluster) {
    String explained = cluster.kubectl("explain", "bloomfilter.spec");
    assertThat(explained)
        .contains("The desired filter: where its keys come from")
        .contains("falsePositiveRate")
        .contains("Target false-positive probability")
        .contains("exactly one source kind")
        .contains("refreshInterval");
    assertThat(cluster.kubectl("explain", "bf.spec.source.configMap"))
        .contains("newline-separated");
  }

  @Test
  void validResourceIsAcceptedWithDefaults(KubernetesClient client, TestNamespace ns) {
    BloomFilter created =
        client
            .resources(BloomFilter.class)
            .inNamespace(ns.name())
            .resource(Serialization.unmarshal(VALID, BloomFilter.class))
            .create();

    assertThat(created.getMetadata().getGeneration()).isEqualTo(1L);
    assertThat(created.getSpec().getKeyType())
        .as("defaulted by the schema")
        .isEqualTo(KeyType.STRING);
    assertThat(created.getSpec().getSource().getConfigMap().getName()).isEqualTo("product-id-list");
    assertThat(client.resources(BloomFilter.class).inNamespace(ns.name()).list().getItems())
        .hasSize(1);
  }

  static Stream<Arguments> invalidResources() {
    return Stream.of(
        Arguments.of(
            "missing falsePositiveRate",
            "/spec/falsePositiveRate",
            null,
            "spec.falsePositiveRate: Required value"),
        Arguments.of(
            "falsePositiveRate of zero",
            "/spec/falsePositiveRate",
            0,
            "spec.falsePositiveRate: Invalid value"),
        Arguments.of(
            "falsePositiveRate above one",
            "/spec/falsePositiveRate",
            1.5,
            "spec.falsePositiveRate: Invalid value"),
        Arguments.of(
            "expectedInsertions of zero",
            "/spec/expectedInsertions",
            0,
            "spec.expectedInsertions: Invalid value"),
        Arguments.of(
            "splitBlockSize PowerOfTwo with the Guava layout",
            "/spec/splitBlockSize",
            "PowerOfTwo",
            "splitBlockSize PowerOfTwo applies to format SplitBlock only"),
        Arguments.of(
            "unknown splitBlockSize",
            "/spec/splitBlockSize",
            "Square",
            "spec.splitBlockSize: Unsupported value: \"Square\""),
        Arguments.of(
            "unknown keyType",
            "/spec/keyType",
            "Integer",
            "spec.keyType: Unsupported value: \"Integer\""),
        Arguments.of(
            "two sources",
            "/spec/source/inline",
            List.of("a", "b"),
            "exactly one of inline, configMap, secret, http or jdbc must be set"),
        Arguments.of(
            "no source kind",
            "/spec/source/configMap",
            null,
            "exactly one of inline, configMap, secret, http or jdbc must be set"),
        Arguments.of("missing source", "/spec/source", null, "spec.source: Required value"),
        Arguments.of(
            "jdbc url with two hosts",
            "/spec/source",
            jdbc("jdbc:mysql://db1,db2/shop", "select 1"),
            "spec.source.jdbc.url: Invalid value"),
        Arguments.of(
            "jdbc url with user info",
            "/spec/source",
            jdbc("jdbc:mariadb://app:pw@db/shop", "select 1"),
            "spec.source.jdbc.url: Invalid value"),
        Arguments.of(
            "jdbc url without a host",
            "/spec/source",
            jdbc("jdbc:postgresql:shop", "select 1"),
            "spec.source.jdbc.url: Invalid value"),
        Arguments.of(
            "empty jdbc query",
            "/spec/source",
            jdbc("jdbc:postgresql://db/shop", ""),
            "spec.source.jdbc.query: Invalid value"),
        Arguments.of(
            "credentialsSecret not a name",
            "/spec/source",
            java.util.Map.of(
                "jdbc",
                java.util.Map.of(
                    "url",
                    "jdbc:postgresql://db/shop",
                    "query",
                    "select 1",
                    "credentialsSecret",
                    "../other-namespace/creds")),
            "spec.source.jdbc.credentialsSecret: Invalid value"),
        Arguments.of(
            "headersSecret not a name",
            "/spec/source",
            java.util.Map.of(
                "http",
                java.util.Map.of(
                    "url",
                    "https://exports.shop.internal/ids.txt",
                    "headersSecret",
                    "Other_Namespace/token")),
            "spec.source.http.headersSecret: Invalid value"),
        Arguments.of(
            "http url and urls both",
            "/spec/source",
            java.util.Map.of(
                "http",
                java.util.Map.of(
                    "url",
                    "https://exports.shop.internal/ids.txt",
                    "urls",
                    List.of("https://exports.shop.internal/ids-0.txt"))),
            "exactly one of url and urls must be set"),
        Arguments.of(
            "http with neither url nor urls",
            "/spec/source",
            java.util.Map.of("http", java.util.Map.of("readTimeout", "30s")),
            "exactly one of url and urls must be set"),
        Arguments.of(
            "empty http urls",
            "/spec/source",
            java.util.Map.of("http", java.util.Map.of("urls", List.of())),
            "spec.source.http.urls: Invalid value"),
        Arguments.of(
            "65 http urls",
            "/spec/source",
            java.util.Map.of(
                "http",
                java.util.Map.of(
                    "urls",
                    java.util.Collections.nCopies(65, "https://exports.shop.internal/ids.txt"))),
            "spec.source.http.urls: Too many: 65: must have at most 64 items"),
        Arguments.of(
            "http urls item not an http(s) URL",
            "/spec/source",
            java.util.Map.of(
                "http",
                java.util.Map.of(
                    "urls",
                    List.of("https://exports.shop.internal/ids-0.txt", "ftp://exports/ids-1.txt"))),
            "spec.source.http.urls[1]: Invalid value"),
        Arguments.of(
            "refreshInterval not a duration",
            "/spec/refreshInterval",
            "ten minutes",
            "spec.refreshInterval: Invalid value"),
        Arguments.of(
            "chunk larger than a ConfigMap",
            "/spec/snapshot",
            java.util.Map.of("chunkSizeBytes", 2_000_000),
            "spec.snapshot.chunkSizeBytes: Invalid value"),
        Arguments.of(
            "configMap without key",
            "/spec/source/configMap",
            java.util.Map.of("name", "ids"),
            "spec.source.configMap.key: Required value"),
        Arguments.of(
            "configMap name not a DNS name",
            "/spec/source/configMap",
            java.util.Map.of("name", "Bad_Name", "key", "ids.txt"),
            "spec.source.configMap.name: Invalid value"),
        Arguments.of("missing spec", "/spec", null, "spec is required"),
        Arguments.of(
            "falsePositiveRate below 1e-9",
            "/spec/falsePositiveRate",
            1e-12,
            "spec.falsePositiveRate: Invalid value: 1e-12: must be at least 1e-9"),
        Arguments.of(
            "expectedInsertions above 2e9",
            "/spec/expectedInsertions",
            3_000_000_000L,
            "spec.expectedInsertions: Invalid value"),
        Arguments.of(
            "refreshInterval below 10s",
            "/spec/refreshInterval",
            "1s",
            "spec.refreshInterval: Invalid value: \"1s\": must be at least 10s"),
        Arguments.of(
            "refreshInterval of 9.5s", "/spec/refreshInterval", "9500ms", "must be at least 10s"),
        Arguments.of(
            "retainPreviousFor above 1h",
            "/spec/snapshot",
            java.util.Map.of("retainPreviousFor", "1h1s"),
            "spec.snapshot.retainPreviousFor: Invalid value: \"1h1s\": must be at most 1h"),
        Arguments.of(
            "canary share of 0 %",
            "/spec/rollout",
            java.util.Map.of("canary", java.util.Map.of("percent", 0, "holdFor", "30s")),
            "spec.rollout.canary.percent: Invalid value: 0"),
        Arguments.of(
            "canary share over 100 %",
            "/spec/rollout",
            java.util.Map.of("canary", java.util.Map.of("percent", 101, "holdFor", "30s")),
            "spec.rollout.canary.percent: Invalid value: 101"),
        Arguments.of(
            "canary holdFor not a duration",
            "/spec/rollout",
            java.util.Map.of("canary", java.util.Map.of("percent", 10, "holdFor", "a while")),
            "spec.rollout.canary.holdFor: Invalid value"),
        Arguments.of(
            "canary holdFor over a day",
            "/spec/rollout",
            java.util.Map.of("canary", java.util.Map.of("percent", 10, "holdFor", "48h")),
            "spec.rollout.canary.holdFor: Invalid value: \"48h\": must be between 1s and 24h"),
        Arguments.of(
            "canary without holdFor",
            "/spec/rollout",
            java.util.Map.of("canary", java.util.Map.of("percent", 10)),
            "spec.rollout.canary.holdFor: Required value"));
  }

  /** A {@code spec.source} with a jdbc source. */
  private static java.util.Map<String, Object> jdbc(String url, String query) {
    return java.util.Map.of("jdbc", java.util.Map.of("url", url, "query", query));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalidResources")
  void invalidResourceIsRejectedAtAdmission(
      String description,
      String path,
      Object value,
      String expectedMessage,
      KubernetesClient client,
      TestNamespace ns) {
    GenericKubernetesResource resource =
        Serialization.unmarshal(VALID, GenericKubernetesResource.class);
    setOrRemove(resource, path, value);

    assertThatThrownBy(() -> client.resource(resource).inNamespace(ns.name()).create())
        .as(description)
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(422))
        .hasMessageContaining(expectedMessage);
  }

  @Test
  void statusSubresourceIsSeparateFromSpec(KubernetesClient client, TestNamespace ns) {
    var filters = client.resources(BloomFilter.class).inNamespace(ns.name());
    BloomFilter created =
        filters.resource(Serialization.unmarshal(VALID, BloomFilter.class)).create();

    BloomFilterStatus status = new BloomFilterStatus();
    status.setObservedGeneration(1L);
    status.setVersion(3L);
    status.setKeys(42L);
    status
        .getConditions()
        .add(
            new ConditionBuilder()
                .withType("Ready")
                .withStatus("True")
                .withReason("Published")
                .withMessage("version 3 published")
                .withLastTransitionTime("2026-11-29T00:00:00Z")
                .build());
    created.setStatus(status);
    filters.resource(created).updateStatus();

    BloomFilter read = filters.withName("product-ids").get();
    assertThat(read.getStatus().getVersion()).isEqualTo(3L);
    assertThat(read.getStatus().getConditions())
        .extracting(c -> c.getReason())
        .containsExactly("Published");
    assertThat(read.getMetadata().getGeneration())
        .as("status writes do not bump generation")
        .isEqualTo(1L);

    // A spec write through the main resource cannot change the status.
    read.getSpec().setFalsePositiveRate(0.001);
    read.getStatus().setVersion(99L);
    BloomFilter updated = filters.resource(read).update();
    assertThat(updated.getMetadata().getGeneration()).isEqualTo(2L);
    assertThat(updated.getStatus().getVersion()).isEqualTo(3L);
  }

  @SuppressWarnings("unchecked")
  private static void setOrRemove(GenericKubernetesResource resource, String path, Object value) {
    String[] parts = path.substring(1).split("/");
    java.util.Map<String, Object> node = resource.getAdditionalProperties();
    for (int i = 0; i < parts.length - 1; i++) {
      node = (java.util.Map<String, Object>) node.get(parts[i]);
    }
    if (value == null) {
      node.remove(parts[parts.length - 1]);
    } else {
      node.put(parts[parts.length - 1], value);
    }
  }
}
