package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.RetainedVersion;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.objectstore.ObjectStores;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The reconciler handed a copy of its BloomFilter older than the status it last wrote, as
 * java-operator-sdk hands it when the operator's own manifest write triggers the next reconcile
 * ({@link ManifestEvents}) before the watch has delivered the status written after that manifest.
 * That reconcile writes its whole status back: without reading its own write first it brought back
 * the build an approval had just released, and after a pin it reported version 3 as retaining
 * version 1 only (what {@code KubectlPluginTest} found under the full suite's load). Driven
 * directly on a real API server, so the lagging copy is there every time.
 */
@RealKubernetes(crdDirs = "crds")
class StaleFilterCopyTest {

  @Test
  void aReconcileOnACopyFromBeforeAnApprovedPublishDoesNotHoldTheBuildAgain(
      KubernetesClient client, TestNamespace ns) {
    BloomFilterReconciler reconciler = reconciler();
    Context<BloomFilter> context = context(client);
    publishThenChangeTo(reconciler, context, client, ns, List.of("a-1", "a-2"));
    String held = get(client, ns).getStatus().getHeld().getSha256();

    mergePatch(
        client,
        ns.name(),
        "ids",
        Map.of("metadata", Map.of("annotations", Map.of(RolloutGate.APPROVE_ANNOTATION, held))));
    BloomFilter approvedBeforeV2 = get(client, ns);
    reconciler.reconcile(copy(approvedBeforeV2), context);
    assertThat(get(client, ns).getStatus().getVersion()).isEqualTo(2L);
    assertThat(get(client, ns).getStatus().getHeld()).isNull();
    // The manifest write of version 2 triggers the next reconcile before the informer has the
    // status that version 2 wrote.
    reconciler.reconcile(copy(approvedBeforeV2), context);

    BloomFilter second = get(client, ns);
    assertThat(second.getStatus().getVersion()).isEqualTo(2L);
    assertThat(second.getStatus().getApproved()).isEqualTo(held);
    assertThat(second.getStatus().getHeld())
        .as("status.held after a reconcile on the copy from before version 2")
        .isNull();
  }

  @Test
  void aReconcileOnACopyFromBeforeAPinKeepsBothRetainedVersions(
      KubernetesClient client, TestNamespace ns) {
    BloomFilterReconciler reconciler = reconciler();
    Context<BloomFilter> context = context(client);
    publishThenChangeTo(reconciler, context, client, ns, List.of("a-1", "a-2", "a-3"));
    assertThat(get(client, ns).getStatus().getVersion()).isEqualTo(2L);
    assertThat(retained(get(client, ns))).containsExactly(1L);

    mergePatch(
        client, ns.name(), "ids", Map.of("spec", Map.of("rollout", Map.of("pinVersion", 1))));
    BloomFilter pinnedBeforeV3 = get(client, ns);
    reconciler.reconcile(copy(pinnedBeforeV3), context);
    assertThat(get(client, ns).getStatus().getVersion()).isEqualTo(3L);
    assertThat(retained(get(client, ns))).containsExactly(2L, 1L);
    // As above: the manifest write of version 3 triggers a reconcile on the copy from before it.
    reconciler.reconcile(copy(pinnedBeforeV3), context);

    BloomFilter pinned = get(client, ns);
    assertThat(pinned.getStatus().getVersion()).isEqualTo(3L);
    assertThat(pinned.getStatus().getKeys()).isEqualTo(5L);
    assertThat(pinned.getStatus().getPinnedVersion()).isEqualTo(1L);
    assertThat(retainedInManifest(client, ns))
        .as("the manifest of version 3 retains both")
        .containsExactly(2L, 1L);
    assertThat(retained(pinned))
        .as("status.retainedVersions after a reconcile on the copy from before version 3")
        .containsExactly(2L, 1L);
  }

  private static BloomFilterReconciler reconciler() {
    OperatorSettings settings =
        OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0"));
    return new BloomFilterReconciler(
        settings,
        Clock.systemUTC(),
        BuildMetrics.discarding(),
        null,
        WriteFence.NONE,
        new ObjectStores(
            StoreSettings.fromEnvironment(Map.of()), settings.sources().http().egress()));
  }

  /**
   * Creates the filter and reconciles it (version 1), then changes its keys to {@code keys} and
   * reconciles it again, each time on the filter as the API server has it.
   */
  private static void publishThenChangeTo(
      BloomFilterReconciler reconciler,
      Context<BloomFilter> context,
      KubernetesClient client,
      TestNamespace ns,
      List<String> keys) {
    create(client, ns);
    reconciler.reconcile(get(client, ns), context);
    mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", Map.of("inline", keys))));
    reconciler.reconcile(get(client, ns), context);
  }

  /** 5 keys, 2 versions kept, a drop of more than half held for approval. */
  private static void create(KubernetesClient client, TestNamespace ns) {
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a-1, a-2, a-3, a-4, a-5]
          snapshot: {keepVersions: 2}
          rollout: {maxKeyCountDropPercent: 50}
        """);
  }

  /** What java-operator-sdk hands a reconcile: a copy of what its cache holds. */
  private static BloomFilter copy(BloomFilter cached) {
    return Serialization.clone(cached);
  }

  private static List<Long> retained(BloomFilter filter) {
    List<RetainedVersion> records = filter.getStatus().getRetainedVersions();
    return records == null ? List.of() : records.stream().map(RetainedVersion::getVersion).toList();
  }

  private static List<Long> retainedInManifest(KubernetesClient client, TestNamespace ns) {
    ConfigMap manifest =
        client
            .configMaps()
            .inNamespace(ns.name())
            .withName(SnapshotNames.manifestName("ids"))
            .get();
    return RetainedVersions.of(manifest).manifests().stream().map(Manifest::version).toList();
  }

  private static BloomFilter get(KubernetesClient client, TestNamespace ns) {
    return client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").get();
  }

  /** What the reconciler asks of its context outside object stores: the client, and liveness. */
  @SuppressWarnings("unchecked")
  private static Context<BloomFilter> context(KubernetesClient client) {
    return (Context<BloomFilter>)
        Proxy.newProxyInstance(
            Context.class.getClassLoader(),
            new Class<?>[] {Context.class},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "getClient" -> client;
                  case "isPrimaryResourceDeleted", "isPrimaryResourceFinalStateUnknown" -> false;
                  default -> throw new UnsupportedOperationException(method.getName());
                });
  }
}
