package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.chunkNames;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.payload;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.snapshotConfigMaps;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The operator end to end on a real API server (and kube-controller-manager for GC). */
@RealKubernetes(crdDirs = "crds", controllerManager = true)
class BloomFilterOperatorTest {

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  private static List<String> keys(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  @Test
  void publishesSnapshotThatGuavaReadsBack(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    List<String> ids = keys("product", 20_000);
    sourceConfigMap(client, ns.name(), "product-id-list", "ids.txt", ids);
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: product-ids}
        spec:
          falsePositiveRate: 0.01
          source:
            configMap: {name: product-id-list, key: ids.txt}
        """);

    var filter = awaitStatus(client, ns.name(), "product-ids", f -> ready(f, "True", "Published"));
    var status = filter.getStatus();
    assertThat(status.getVersion()).isEqualTo(1L);
    assertThat(status.getKeys()).isEqualTo(20_000L);
    assertThat(status.getExpectedFpp()).isLessThanOrEqualTo(0.01);
    assertThat(status.getChunks()).isEqualTo(1);
    assertThat(status.getObservedGeneration()).isEqualTo(1L);

    Manifest manifest = manifest(client, ns.name(), "product-ids");
    assertThat(manifest.version()).isEqualTo(1L);
    assertThat(manifest.sha256()).isEqualTo(status.getSha256());
    byte[] payload = payload(client, ns.name(), manifest);
    assertThat((long) payload.length).isEqualTo(status.getSizeBytes());

    BloomFilter<CharSequence> published =
        BloomFilter.readFrom(
            new ByteArrayInputStream(payload), Funnels.stringFunnel(StandardCharsets.UTF_8));
    BloomFilter<CharSequence> guava = SnapshotFixtures.emptyGuavaFilter(manifest);
    ids.forEach(guava::put);
    assertThat(published).as("equal to Guava's own filter of the same keys").isEqualTo(guava);
    assertThat(ids).allMatch(published::mightContain);
    long falsePositives =
        IntStream.range(0, 100_000)
            .mapToObj(i -> "absent-" + i)
            .filter(published::mightContain)
            .count();
    assertThat(falsePositives / 100_000.0).as("measured FPP").isLessThanOrEqualTo(0.015);

    // Every snapshot object is controlled by the resource.
    ConfigMap manifestMap =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("product-ids"))
            .get();
    assertThat(manifestMap.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getUid()).isEqualTo(filter.getMetadata().getUid());
              assertThat(o.getController()).isTrue();
            });
    ConfigMap chunk =
        client.configMaps().inNamespace(ns.name()).withName(manifest.chunks().get(0).name()).get();
    assertThat(chunk.getImmutable()).isTrue();
    assertThat(chunk.getMetadata().getAnnotations())
        .as("no last-applied copy of the chunk")
        .doesNotContainKey("kubectl.kubernetes.io/last-applied-configuration");

    assertThat(cluster.kubectl("get", "bf", "-n", ns.name()))
        .contains("product-ids")
        .contains("True")
        .contains("20000");
    assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
        .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("Published"));
  }

  @Test
  void largeFilterIsSplitIntoMillionByteChunks(KubernetesClient client, TestNamespace ns)
      throws Exception {
    // Sized for 5M keys at 0.1%: about 9 MB, so the default 1,000,000-byte chunks are exercised
    // against the API server's object size limit.
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("k", 1000));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: big}
        spec:
          falsePositiveRate: 0.001
          expectedInsertions: 5000000
          source:
            configMap: {name: ids, key: ids}
        """);
    var filter = awaitStatus(client, ns.name(), "big", f -> ready(f, "True", "Published"));
    Manifest manifest = manifest(client, ns.name(), "big");
    long size = filter.getStatus().getSizeBytes();
    assertThat(size).isBetween(8_900_000L, 9_100_000L);
    assertThat(manifest.chunks()).hasSize((int) ((size + 999_999) / 1_000_000));
    assertThat(manifest.chunks().subList(0, manifest.chunks().size() - 1))
        .allSatisfy(c -> assertThat(c.bytes()).isEqualTo(1_000_000));
    assertThat(payload(client, ns.name(), manifest)).hasSize((int) size);
  }

  @Test
  void changedSourcePublishesNewVersionAndRetiresTheOldOne(
      KubernetesClient client, TestNamespace ns) throws Exception {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("a", 5000));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 10000
          source:
            configMap: {name: ids, key: ids}
          refreshInterval: 10s
          snapshot: {chunkSizeBytes: 4096, retainPreviousFor: 3s}
        """);
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    Manifest v1 = manifest(client, ns.name(), "ids");
    assertThat(v1.chunks()).hasSizeGreaterThan(1);

    List<String> more = new ArrayList<>(keys("a", 5000));
    more.add("brand-new-product");
    sourceConfigMap(client, ns.name(), "ids", "ids", more);
    var v2Filter = awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == 2L);
    Manifest v2 = manifest(client, ns.name(), "ids");
    assertThat(v2.version()).isEqualTo(2L);
    assertThat(v2Filter.getStatus().getKeys()).isEqualTo(5001L);
    BloomFilter<CharSequence> published =
        BloomFilter.readFrom(
            new ByteArrayInputStream(payload(client, ns.name(), v2)),
            Funnels.stringFunnel(StandardCharsets.UTF_8));
    assertThat(published.mightContain("brand-new-product")).isTrue();

    // One key more is a delta on version 1, which stays as its base (DeltaSnapshotOperatorTest
    // covers chains, compaction and retirement); nothing else is left.
    assertThat(v2.chained()).isTrue();
    assertThat(v2.baseVersion()).isEqualTo(1L);
    assertThat(v2Filter.getStatus().getDeltas()).isEqualTo(1);
    assertThat(v2Filter.getStatus().getLastPublishBytes()).isLessThan(100L);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(chunkNames(client, ns.name(), "ids"))
                    .containsExactlyInAnyOrderElementsOf(SnapshotFixtures.namedChunks(v2)));

    // Same content under a new resourceVersion: rebuilt, but nothing new is published.
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName("ids")
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .editMetadata()
                    .addToLabels("touched", "yes")
                    .endMetadata()
                    .build());
    awaitStatus(
        client,
        ns.name(),
        "ids",
        f -> !f.getStatus().getSourceToken().equals(v2Filter.getStatus().getSourceToken()));
    assertThat(manifest(client, ns.name(), "ids").version()).isEqualTo(2L);
    assertThat(
            client
                .resources(io.bloomoperator.api.BloomFilter.class)
                .inNamespace(ns.name())
                .withName("ids")
                .get()
                .getStatus()
                .getVersion())
        .isEqualTo(2L);
  }

  @Test
  void deletingTheResourceRemovesEveryConfigMap(KubernetesClient client, TestNamespace ns) {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("d", 3000));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: doomed}
        spec:
          falsePositiveRate: 0.01
          source:
            configMap: {name: ids, key: ids}
          snapshot: {chunkSizeBytes: 1024}
        """);
    awaitStatus(client, ns.name(), "doomed", f -> ready(f, "True", "Published"));
    assertThat(chunkNames(client, ns.name(), "doomed")).hasSizeGreaterThan(1);

    client
        .resources(io.bloomoperator.api.BloomFilter.class)
        .inNamespace(ns.name())
        .withName("doomed")
        .delete();

    // kube-controller-manager's garbage collector follows the ownerReferences.
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> assertThat(snapshotConfigMaps(client, ns.name(), "doomed")).isEmpty());
    assertThat(client.configMaps().inNamespace(ns.name()).withName("ids").get())
        .as("the source is not owned")
        .isNotNull();
  }

  @Test
  void missingSourceIsReportedAndRecoversWhenItAppears(KubernetesClient client, TestNamespace ns) {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: early}
        spec:
          falsePositiveRate: 0.01
          keyType: Long
          source:
            configMap: {name: not-yet, key: ids}
        """);
    var failed = awaitStatus(client, ns.name(), "early", f -> ready(f, "False", "SourceNotFound"));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("not-yet")
        .contains("not found");
    assertThat(failed.getStatus().getVersion()).isNull();
    assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
        .anySatisfy(
            e -> {
              assertThat(e.getReason()).isEqualTo("SourceNotFound");
              assertThat(e.getType()).isEqualTo("Warning");
            });

    sourceConfigMap(
        client,
        ns.name(),
        "not-yet",
        "ids",
        IntStream.range(0, 1000).mapToObj(Integer::toString).toList());

    var recovered = awaitStatus(client, ns.name(), "early", f -> ready(f, "True", "Published"));
    assertThat(recovered.getStatus().getKeys()).isEqualTo(1000L);
    assertThat(recovered.getMetadata().getGeneration()).as("resource untouched").isEqualTo(1L);
  }

  @Test
  void sourceErrorKeepsTheLastGoodSnapshot(KubernetesClient client, TestNamespace ns)
      throws Exception {
    sourceConfigMap(client, ns.name(), "ids", "ids", List.of("1", "2", "3"));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: numbers}
        spec:
          falsePositiveRate: 0.01
          keyType: Long
          source:
            configMap: {name: ids, key: ids}
          refreshInterval: 10s
        """);
    awaitStatus(client, ns.name(), "numbers", f -> ready(f, "True", "Published"));
    Manifest before = manifest(client, ns.name(), "numbers");

    sourceConfigMap(client, ns.name(), "ids", "ids", List.of("1", "two", "3"));
    var failed = awaitStatus(client, ns.name(), "numbers", f -> ready(f, "False", "MalformedKeys"));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("line 2")
        .doesNotContain("two");
    assertThat(failed.getStatus().getVersion()).isEqualTo(1L);
    assertThat(manifest(client, ns.name(), "numbers")).isEqualTo(before);
    assertThat(payload(client, ns.name(), before)).hasSize((int) before.totalBytes());
  }

  @Test
  void rebuildAnnotationForcesARebuildOnDemand(KubernetesClient client, TestNamespace ns) {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: on-demand}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a, b, c]
        """);
    var first = awaitStatus(client, ns.name(), "on-demand", f -> ready(f, "True", "Published"));
    assertThat(first.getStatus().getRebuildRequest()).isNull();

    SnapshotFixtures.mergePatch(
        client,
        ns.name(),
        "on-demand",
        Map.of(
            "metadata",
            Map.of("annotations", Map.of("bloomoperator.io/rebuild", "2026-11-29T12:00"))));

    var rebuilt =
        awaitStatus(
            client,
            ns.name(),
            "on-demand",
            f -> "2026-11-29T12:00".equals(f.getStatus().getRebuildRequest()));
    assertThat(rebuilt.getStatus().getVersion()).as("same content: no new version").isEqualTo(1L);
    var settled =
        awaitStatus(client, ns.name(), "on-demand", f -> "Idle".equals(f.getStatus().getPhase()));
    assertThat(settled.getStatus().getKeysRead())
        .as("progress values replaced by the result")
        .isEqualTo(3L);
    assertThat(rebuilt.getMetadata().getGeneration()).isEqualTo(1L);
    assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
        .extracting(e -> e.getReason())
        .contains("BuildStarted", "Published", "Unchanged");
  }

  @Test
  void handEditedBookkeepingOnTheManifestDoesNotWedgeTheFilter(
      KubernetesClient client, TestNamespace ns) throws Exception {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: edited}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a, b]
        """);
    awaitStatus(client, ns.name(), "edited", f -> ready(f, "True", "Published"));
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("edited"))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .editMetadata()
                    .addToAnnotations("bloomoperator.io/built-at", "yesterday")
                    .addToAnnotations("bloomoperator.io/spec-generation", "x")
                    .addToAnnotations("bloomoperator.io/previous-version", "")
                    .endMetadata()
                    .build());

    // Unreadable bookkeeping counts as absent: a rebuild repairs it, no error loop.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              var annotations =
                  client
                      .configMaps()
                      .inNamespace(ns.name())
                      .withName(SnapshotNames.manifestName("edited"))
                      .get()
                      .getMetadata()
                      .getAnnotations();
              assertThat(annotations).containsEntry("bloomoperator.io/spec-generation", "1");
            });
    var filter = awaitStatus(client, ns.name(), "edited", f -> ready(f, "True", "Published"));
    assertThat(filter.getStatus().getVersion()).isEqualTo(1L);
  }

  @Test
  void filterBeyondTheLimitsIsRefusedWithoutWritingAnything(
      KubernetesClient client, TestNamespace ns) {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("z", 10));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: huge}
        spec:
          falsePositiveRate: 0.0001
          expectedInsertions: 1000000000
          source:
            configMap: {name: ids, key: ids}
        """);
    var failed = awaitStatus(client, ns.name(), "huge", f -> ready(f, "False", "SnapshotTooLarge"));
    assertThat(ReadyCondition.of(failed).orElseThrow().getMessage())
        .contains("1000000000 keys")
        .contains("nothing was published");
    assertThat(snapshotConfigMaps(client, ns.name(), "huge")).isEmpty();
  }

  @Test
  void leftoversOfAnInterruptedPublishAreRemoved(KubernetesClient client, TestNamespace ns)
      throws Exception {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("x", 2000));
    var created =
        apply(
            client,
            ns.name(),
            """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: crashy}
        spec:
          falsePositiveRate: 0.01
          source:
            configMap: {name: ids, key: ids}
        """);
    awaitStatus(client, ns.name(), "crashy", f -> ready(f, "True", "Published"));

    // What an operator killed between chunk writes leaves behind: some chunks of the next
    // version (including the very name the next publish will use) and no manifest for them.
    OPERATOR.stop();
    try {
      for (int i = 0; i < 2; i++) {
        ConfigMap leftover =
            SnapshotConfigMaps.chunk(ns.name(), "crashy", 2, i, new byte[] {1, 2, 3}, 3);
        leftover
            .getMetadata()
            .setOwnerReferences(
                List.of(
                    new OwnerReferenceBuilder()
                        .withApiVersion("bloomoperator.io/v1alpha1")
                        .withKind("BloomFilter")
                        .withName("crashy")
                        .withUid(created.getMetadata().getUid())
                        .withController(true)
                        .build()));
        client.configMaps().inNamespace(ns.name()).resource(leftover).create();
      }
      sourceConfigMap(client, ns.name(), "ids", "ids", keys("y", 2000));
    } finally {
      OPERATOR.start();
    }

    var republished =
        awaitStatus(
            client,
            ns.name(),
            "crashy",
            f -> f.getStatus().getVersion() == 2L && ready(f, "True", "Published"));
    Manifest v2 = manifest(client, ns.name(), "crashy");
    byte[] payload = payload(client, ns.name(), v2);
    assertThat(payload).hasSize((int) v2.totalBytes());
    BloomFilter<CharSequence> published =
        BloomFilter.readFrom(
            new ByteArrayInputStream(payload), Funnels.stringFunnel(StandardCharsets.UTF_8));
    assertThat(keys("y", 2000)).allMatch(published::mightContain);
    assertThat(republished.getStatus().getSha256()).isEqualTo(v2.sha256());
  }
}
