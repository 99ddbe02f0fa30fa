package io.bloomoperator.publish;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayOutputStream;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Publishing against the real API server, driven directly (no operator runs here). */
@RealKubernetes(crdDirs = "crds")
class PublicationTest {

  @Test
  void aVersionIsNeverStampedEarlierThanTheOneItReplaces(KubernetesClient client, TestNamespace ns)
      throws Exception {
    BloomFilter owner = owner(client, ns);
    SnapshotStore publication = new SnapshotStore(client, owner, null);
    Instant first = Instant.parse("2026-11-30T12:00:00.250Z");

    PublishedSnapshot v1 =
        PublicationFixtures.publish(
            publication, DeltaPolicy.defaults(), bits("a", 100), 100, null, 0, first);
    // The next publish runs on a replica whose clock is 30 s behind (after a leader failover).
    Instant behind = first.minusSeconds(30);
    PublishedSnapshot v2 =
        PublicationFixtures.publish(
            publication, DeltaPolicy.defaults(), bits("b", 100), 100, v1, 1, behind);
    Instant later = first.plusSeconds(5);
    PublishedSnapshot v3 =
        PublicationFixtures.publish(
            publication, DeltaPolicy.defaults(), bits("c", 100), 100, v2, 2, later);

    assertThat(v1.manifest().created()).isEqualTo(first);
    assertThat(v2.manifest().version()).isEqualTo(2);
    assertThat(v2.manifest().created()).isEqualTo(first);
    assertThat(v2.manifest().publishedAfter(v1.manifest()))
        .as("readers that trust signatures accept v2 after v1")
        .isTrue();
    assertThat(v3.manifest().created()).isEqualTo(later);
    assertThat(v3.manifest().publishedAfter(v2.manifest())).isTrue();
  }

  @Test
  void aHostileChainThatDoesNotDecodeMeansAWholeNewBase(KubernetesClient client, TestNamespace ns)
      throws Exception {
    // Audit item 9: a delta whose positions continue past the last bit. The operator must not
    // fail on it at every reconcile (nor flip bits with it): it publishes a whole new base.
    BloomFilter owner = owner(client, ns);
    SnapshotStore publication = new SnapshotStore(client, owner, null);
    Instant now = Instant.now();
    Manifest v1 =
        PublicationFixtures.publish(
                publication, DeltaPolicy.defaults(), bits("a", 100), 100, null, 0, now)
            .manifest();

    // Whoever may write ConfigMaps: v2 as a delta on v1 whose chunk digest is right but whose
    // second position lies one past the last bit (8191, then a gap of 0).
    ByteArrayOutputStream delta = new ByteArrayOutputStream();
    delta.write(new byte[] {1, 3, 0, 0, 0, (byte) v1.numLongs(), 0, 0, 0, 0, 0, 0, 0, 2});
    delta.write(new byte[] {(byte) 0xFF, 0x3F, 0}); // 8191, then 0
    byte[] bytes = delta.toByteArray();
    String chunkSha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    ConfigMap chunk = SnapshotConfigMaps.deltaChunk(ns.name(), "ids", 2, 0, bytes, bytes.length);
    client.configMaps().inNamespace(ns.name()).resource(chunk).create();
    String resultSha = "ab".repeat(32);
    Manifest forged =
        new Manifest(
            Manifest.FORMAT_CHAIN,
            2,
            "ids",
            v1.keyType(),
            v1.numBits(),
            v1.numHashFunctions(),
            v1.keyCount(),
            v1.expectedFpp(),
            v1.totalBytes(),
            resultSha,
            v1.createdAt(),
            v1.chunks(),
            new Manifest.Chain(
                1,
                v1.sha256(),
                List.of(
                    new Manifest.Delta(
                        2,
                        bytes.length,
                        2,
                        resultSha,
                        List.of(
                            new Manifest.ChunkRef(
                                SnapshotNames.deltaChunkName("ids", 2, 0),
                                bytes.length,
                                chunkSha))))));
    forged.validate();
    client
        .configMaps()
        .inNamespace(ns.name())
        .withName(SnapshotNames.manifestName("ids"))
        .edit(
            cm ->
                new ConfigMapBuilder(cm)
                    .withData(
                        SnapshotConfigMaps.manifest(ns.name(), "ids", forged.toJson(), null, null)
                            .getData())
                    .build());
    PublishedSnapshot current = new SnapshotStore(client, owner, null).read();
    assertThat(current.manifest().chained()).isTrue();

    Instant later = now.plusSeconds(1);
    PublishedSnapshot v3 =
        PublicationFixtures.publish(
            publication, DeltaPolicy.defaults(), bits("c", 100), 100, current, 2, later);
    assertThat(v3.manifest().version()).isEqualTo(3);
    assertThat(v3.manifest().chained()).as("a whole new base").isFalse();
  }

  @Test
  void aCreatedAtFarAheadIsNeverCopied(KubernetesClient client, TestNamespace ns) throws Exception {
    BloomFilter owner = owner(client, ns);
    SnapshotStore publication = new SnapshotStore(client, owner, null);
    Instant future = Instant.parse("2999-01-01T00:00:00Z");
    PublishedSnapshot v1 =
        PublicationFixtures.publish(
            publication, DeltaPolicy.defaults(), bits("a", 100), 100, null, 0, future);
    Instant now = Instant.now();
    PublishedSnapshot v2 =
        PublicationFixtures.publish(
            publication, DeltaPolicy.defaults(), bits("b", 100), 100, v1, 1, now);
    assertThat(v2.manifest().created())
        .isBeforeOrEqualTo(now.plus(java.time.Duration.ofMinutes(2)))
        .isAfterOrEqualTo(now.truncatedTo(java.time.temporal.ChronoUnit.MILLIS));
  }

  private static BloomFilter owner(KubernetesClient client, TestNamespace ns) {
    return apply(
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
  }

  private static BloomFilterBits bits(String prefix, int keys) {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.STRING, 64 * 128, 3);
    for (int i = 0; i < keys; i++) {
      builder.putString(prefix + i);
    }
    return builder.build();
  }
}
