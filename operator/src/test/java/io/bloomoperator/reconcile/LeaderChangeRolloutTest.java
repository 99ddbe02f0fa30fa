package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.publish.ManifestWriter;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.rollout.RolloutGate;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RequestLog;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The rollout state survives a leader change (issue 21: "state in the resource and the manifest,
 * not in memory"), on a real API server: two operator replicas elect a leader through the Lease as
 * two pods of the Deployment do; a filter has a version published through an approval, is pinned to
 * a retained version and paused with a newer build held. The leader stops (it does not release the
 * Lease, as java-operator-sdk's elector does not). The new leader must keep serving what the author
 * chose: the same version, still pinned, the same held build and approval, every retained version,
 * and not a single manifest write; releasing the pin keeps the build held (paused), and unpausing
 * publishes it, written by the new leader.
 */
@RealKubernetes(crdDirs = "crds")
class LeaderChangeRolloutTest {

  /** OperatorMain's lease duration, and the longest a follower sleeps between two tries. */
  private static final Duration TAKEOVER = Duration.ofSeconds(15 + 5);

  @Test
  void theNewLeaderKeepsThePinTheHeldBuildAndTheRetainedVersions(
      KubernetesClient client, TestNamespace ns) throws Exception {
    try (Replica a = new Replica("replica-a", ns.name());
        Replica b = new Replica("replica-b", ns.name())) {
      a.start();
      await().atMost(Duration.ofSeconds(30)).until(() -> "replica-a".equals(holder(client, ns)));
      b.start();

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
              inline: [%s]
            snapshot: {keepVersions: 2}
            rollout: {maxKeyCountDropPercent: 50}
          """
              .formatted(String.join(", ", keys("k", 10))));
      awaitStatus(client, ns.name(), "ids", f -> version(f) == 1);

      // Version 2 only through an approval: 10 keys to 4 is a drop of 60 %.
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("source", inline(keys("k", 4)))));
      String heldSha =
          awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getHeld() != null)
              .getStatus()
              .getHeld()
              .getSha256();
      mergePatch(
          client,
          ns.name(),
          "ids",
          Map.of(
              "metadata", Map.of("annotations", Map.of(RolloutGate.APPROVE_ANNOTATION, heldSha))));
      awaitStatus(client, ns.name(), "ids", f -> version(f) == 2);

      // Pinned to version 1 (served again as version 3), then paused with a new build held.
      mergePatch(
          client, ns.name(), "ids", Map.of("spec", Map.of("rollout", Map.of("pinVersion", 1))));
      awaitStatus(
          client, ns.name(), "ids", f -> version(f) == 3 && retained(f).equals(List.of(2L, 1L)));
      mergePatch(
          client,
          ns.name(),
          "ids",
          Map.of(
              "spec", Map.of("rollout", Map.of("paused", true), "source", inline(keys("n", 6)))));
      BloomFilter before =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> f.getStatus().getHeld() != null && f.getStatus().getHeld().getKeys() == 6L);
      ConfigMap manifestBefore = manifestConfigMap(client, ns);
      assertThat(before.getStatus().getHeld().getReason()).isEqualTo(Reasons.ROLLOUT_PINNED);
      assertThat(before.getStatus().getApproved()).isEqualTo(heldSha);
      assertThat(before.getStatus().getPinnedVersion()).isEqualTo(1L);
      assertThat(ready(before, "True", Reasons.ROLLOUT_PINNED)).isTrue();

      // The leader goes away; the follower takes the Lease once it expires.
      assertThat(holder(client, ns)).isEqualTo("replica-a");
      long stopped = System.nanoTime();
      a.stop();
      await().atMost(TAKEOVER.plusSeconds(10)).until(() -> "replica-b".equals(holder(client, ns)));
      long tookOver = System.nanoTime();
      // It has reconciled the filter once it writes its status (a merge patch that changes
      // nothing).
      await().atMost(Duration.ofSeconds(30)).until(() -> b.statusWrites(ns) > 0);
      System.out.printf(
          "LeaderChangeRolloutTest: leader stopped -> replica-b holds the Lease in %d ms, its"
              + " first status write of the filter after %d ms%n",
          (tookOver - stopped) / 1_000_000, (System.nanoTime() - stopped) / 1_000_000);
      Thread.sleep(1_000);

      BloomFilter after = get(client, ns);
      assertThat(version(after)).isEqualTo(3);
      assertThat(after.getStatus().getKeys()).isEqualTo(10L);
      assertThat(after.getStatus().getPinnedVersion()).isEqualTo(1L);
      assertThat(json(after.getStatus().getHeld())).isEqualTo(json(before.getStatus().getHeld()));
      assertThat(after.getStatus().getApproved()).isEqualTo(heldSha);
      assertThat(json(after.getStatus().getRetainedVersions()))
          .isEqualTo(json(before.getStatus().getRetainedVersions()));
      assertThat(ready(after, "True", Reasons.ROLLOUT_PINNED)).isTrue();
      ConfigMap manifestAfter = manifestConfigMap(client, ns);
      assertThat(manifestAfter.getMetadata().getResourceVersion())
          .as("the manifest ConfigMap is not written by the new leader")
          .isEqualTo(manifestBefore.getMetadata().getResourceVersion());
      assertThat(b.writes("configmaps")).as("ConfigMap writes by the new leader").isEmpty();
      assertThat(retainedInManifest(manifestAfter)).containsExactly(2L, 1L);

      // The pin released, still paused: the build stays held, version 3 keeps serving.
      Map<String, Object> unpin = new HashMap<>();
      unpin.put("pinVersion", null);
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("rollout", unpin)));
      BloomFilter paused =
          awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.ROLLOUT_PAUSED));
      assertThat(version(paused)).isEqualTo(3);
      assertThat(paused.getStatus().getPinnedVersion()).isNull();
      assertThat(paused.getStatus().getHeld().getReason()).isEqualTo(Reasons.ROLLOUT_PAUSED);
      assertThat(paused.getStatus().getHeld().getSha256())
          .isEqualTo(before.getStatus().getHeld().getSha256());
      assertThat(manifestConfigMap(client, ns).getMetadata().getResourceVersion())
          .isEqualTo(manifestBefore.getMetadata().getResourceVersion());

      // Unpaused: the held build is published, by the new leader.
      Map<String, Object> unpause = new HashMap<>();
      unpause.put("paused", null);
      mergePatch(client, ns.name(), "ids", Map.of("spec", Map.of("rollout", unpause)));
      BloomFilter published =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f -> version(f) == 4 && ready(f, "True", Reasons.PUBLISHED));
      assertThat(published.getStatus().getKeys()).isEqualTo(6L);
      assertThat(published.getStatus().getSha256())
          .isEqualTo(before.getStatus().getHeld().getSha256());
      assertThat(published.getStatus().getHeld()).isNull();
      assertThat(retained(published)).containsExactly(3L, 2L);
      assertThat(
              manifestConfigMap(client, ns)
                  .getMetadata()
                  .getAnnotations()
                  .get(ManifestWriter.ANNOTATION_PUBLISHED_BY))
          .isEqualTo("replica-b");
    }
  }

  /** One operator replica in this JVM, with leader election through the Lease in {@code ns}. */
  private static final class Replica implements AutoCloseable {

    private final String identity;
    private final String leaseNamespace;
    private final RequestLog requests = new RequestLog();
    private final KubernetesClient client;
    private Operator operator;

    Replica(String identity, String leaseNamespace) {
      this.identity = identity;
      this.leaseNamespace = leaseNamespace;
      this.client = requests.newClient(KubeCluster.shared());
    }

    void start() {
      operator =
          OperatorMain.start(
              client,
              OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")),
              StoreSettings.fromEnvironment(Map.of()),
              null,
              new RuntimeOptions(0, true, leaseNamespace, identity, false),
              ReaderSettings.defaults());
    }

    void stop() {
      if (operator != null) {
        operator.stop();
        operator = null;
      }
    }

    /** Status writes of this replica to the filter {@code ids} in {@code ns}. */
    long statusWrites(TestNamespace ns) {
      String path = "/namespaces/" + ns.name() + "/bloomfilters/ids/status";
      return requests.paths().stream()
          .filter(p -> p.startsWith("PATCH ") && p.endsWith(path))
          .count();
    }

    /** This replica's create, update, patch and delete requests on {@code resource}. */
    List<String> writes(String resource) {
      return requests.paths().stream()
          .filter(p -> !p.startsWith("GET ") && p.contains("/" + resource))
          .toList();
    }

    @Override
    public void close() {
      stop();
      client.close();
    }
  }

  private static String json(Object value) {
    return Serialization.asJson(value);
  }

  private static String holder(KubernetesClient client, TestNamespace ns) {
    Lease lease =
        client
            .resources(Lease.class)
            .inNamespace(ns.name())
            .withName(RuntimeOptions.LEASE_NAME)
            .get();
    return lease == null || lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
  }

  private static BloomFilter get(KubernetesClient client, TestNamespace ns) {
    return client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").get();
  }

  private static long version(BloomFilter filter) {
    BloomFilterStatus status = filter.getStatus();
    return status == null || status.getVersion() == null ? 0 : status.getVersion();
  }

  private static List<Long> retained(BloomFilter filter) {
    var records = filter.getStatus().getRetainedVersions();
    return records == null ? List.of() : records.stream().map(r -> r.getVersion()).toList();
  }

  private static ConfigMap manifestConfigMap(KubernetesClient client, TestNamespace ns) {
    return client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("ids"))
        .get();
  }

  private static List<Long> retainedInManifest(ConfigMap manifest) {
    return RetainedVersions.of(manifest).manifests().stream().map(Manifest::version).toList();
  }

  private static List<String> keys(String prefix, int count) {
    return IntStream.range(0, count).mapToObj(i -> prefix + "-" + i).toList();
  }

  private static Map<String, Object> inline(List<String> keys) {
    return Map.of("inline", keys);
  }
}
