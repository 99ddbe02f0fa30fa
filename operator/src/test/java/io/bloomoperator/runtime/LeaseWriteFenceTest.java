package io.bloomoperator.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.publish.PublicationFixtures;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.publish.WriteFence;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import org.junit.jupiter.api.Test;

/**
 * The write fence of a replica that may have lost the leader Lease while frozen (found by the fault
 * suite's leader-pause run): it lets writes through only while the Lease names this replica and has
 * not expired, and a publish it refuses leaves nothing behind. Against the real API server, with
 * Leases written the way fabric8's leader elector writes them.
 */
@RealKubernetes(crdDirs = "crds")
class LeaseWriteFenceTest {

  private static final String LEASE = RuntimeOptions.LEASE_NAME;
  private static final Instant NOW = Instant.parse("2026-11-30T12:00:00Z");

  @Test
  void allowsOnlyTheHolderOfAnUnexpiredLease(KubernetesClient client, TestNamespace ns) {
    WriteFence fence = fence(client, ns, "replica-a", NOW);
    assertThatThrownBy(fence::check)
        .isInstanceOf(WriteFence.NotLeaderException.class)
        .hasMessageContaining("does not exist");

    lease(client, ns, "replica-a", NOW.minusSeconds(5));
    assertThatCode(fence::check).doesNotThrowAnyException();

    // Renewed 15 s ago with a 15 s lease: another replica may take it now.
    assertThatThrownBy(fence(client, ns, "replica-a", NOW.plusSeconds(10))::check)
        .isInstanceOf(WriteFence.NotLeaderException.class)
        .hasMessageContaining("expired");

    lease(client, ns, "replica-b", NOW);
    assertThatThrownBy(fence::check)
        .isInstanceOf(WriteFence.NotLeaderException.class)
        .hasMessageContaining("another replica");
    assertThatCode(fence(client, ns, "replica-b", NOW)::check).doesNotThrowAnyException();
  }

  @Test
  void aPublishTheFenceRefusesLeavesNoChunkAndTheManifestAsItWas(
      KubernetesClient client, TestNamespace ns) throws Exception {
    BloomFilter owner =
        SnapshotFixtures.apply(
            client,
            ns.name(),
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: fenced}
            spec:
              falsePositiveRate: 0.01
              source: {configMap: {name: unused, key: ids}}
            """);
    lease(client, ns, "replica-a", Instant.now());
    PublishedSnapshot v1 =
        publish(client, owner, fence(client, ns, "replica-a", Instant.now()), bits("a"), null);
    assertThat(v1.manifest().version()).isEqualTo(1);
    var chunksOfV1 = SnapshotFixtures.chunkNames(client, ns.name(), "fenced");

    lease(client, ns, "replica-b", Instant.now()); // replica-a was frozen; replica-b took over
    WriteFence stale = fence(client, ns, "replica-a", Instant.now());
    assertThatThrownBy(() -> publish(client, owner, stale, bits("b"), v1))
        .isInstanceOf(WriteFence.NotLeaderException.class);

    PublishedSnapshot after = new SnapshotStore(client, owner, null).read();
    assertThat(after.configMap().getMetadata().getResourceVersion())
        .isEqualTo(v1.configMap().getMetadata().getResourceVersion());
    assertThat(SnapshotFixtures.chunkNames(client, ns.name(), "fenced")).isEqualTo(chunksOfV1);
  }

  private static WriteFence fence(
      KubernetesClient client, TestNamespace ns, String identity, Instant now) {
    return new LeaseWriteFence(
        client, ns.name(), LEASE, identity, Clock.fixed(now, ZoneOffset.UTC));
  }

  /** Creates or replaces the Lease as held by {@code holder}, renewed at {@code renewed}. */
  private static void lease(
      KubernetesClient client, TestNamespace ns, String holder, Instant renewed) {
    Lease lease =
        new LeaseBuilder()
            .withNewMetadata()
            .withName(LEASE)
            .withNamespace(ns.name())
            .endMetadata()
            .withNewSpec()
            .withHolderIdentity(holder)
            .withLeaseDurationSeconds(15)
            .withAcquireTime(ZonedDateTime.ofInstant(renewed, ZoneOffset.UTC))
            .withRenewTime(ZonedDateTime.ofInstant(renewed, ZoneOffset.UTC))
            .endSpec()
            .build();
    client.leases().inNamespace(ns.name()).resource(lease).forceConflicts().serverSideApply();
  }

  private static PublishedSnapshot publish(
      KubernetesClient client,
      BloomFilter owner,
      WriteFence fence,
      BloomFilterBits bits,
      PublishedSnapshot current)
      throws Exception {
    return PublicationFixtures.publish(client, owner, "replica", fence, bits, current);
  }

  private static BloomFilterBits bits(String prefix) {
    return PublicationFixtures.bits(prefix);
  }
}
