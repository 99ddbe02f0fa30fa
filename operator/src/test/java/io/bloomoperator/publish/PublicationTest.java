package io.bloomoperator.publish;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Publishing against the real API server, driven directly (no operator runs here). */
@RealKubernetes(crdDirs = "crds")
class PublicationTest {

  @Test
  void aVersionIsNeverStampedEarlierThanTheOneItReplaces(KubernetesClient client, TestNamespace ns)
      throws Exception {
    BloomFilter owner =
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
                inline: [a]
            """);
    Publication publication =
        new Publication(client, owner, null, Long.MAX_VALUE, DeltaPolicy.defaults());
    Instant first = Instant.parse("2026-11-30T12:00:00.250Z");

    Publication.Outcome v1 =
        publication.publish(bits("a", 100), 100, null, 0, record(first), 1024, first);
    // The next publish runs on a replica whose clock is 30 s behind (after a leader failover).
    Instant behind = first.minusSeconds(30);
    Publication.Outcome v2 =
        publication.publish(bits("b", 100), 100, v1.published(), 1, record(behind), 1024, behind);
    Instant later = first.plusSeconds(5);
    Publication.Outcome v3 =
        publication.publish(bits("c", 100), 100, v2.published(), 2, record(later), 1024, later);

    assertThat(v1.manifest().created()).isEqualTo(first);
    assertThat(v2.manifest().version()).isEqualTo(2);
    assertThat(v2.manifest().created()).isEqualTo(first);
    assertThat(v2.manifest().publishedAfter(v1.manifest()))
        .as("readers that trust signatures accept v2 after v1")
        .isTrue();
    assertThat(v3.manifest().created()).isEqualTo(later);
    assertThat(v3.manifest().publishedAfter(v2.manifest())).isTrue();
  }

  private static BloomFilterBits bits(String prefix, int keys) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 128, 3);
    for (int i = 0; i < keys; i++) {
      builder.putString(prefix + i);
    }
    return builder.build();
  }

  private static SnapshotStore.BuildRecord record(Instant at) {
    return new SnapshotStore.BuildRecord("test-" + at.toEpochMilli(), 1, at);
  }
}
