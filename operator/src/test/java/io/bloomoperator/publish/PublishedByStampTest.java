package io.bloomoperator.publish;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Every snapshot ConfigMap an operator replica writes names it in {@value
 * ManifestWriter.ANNOTATION_PUBLISHED_BY} (the fault suite's failover test attributes each manifest
 * write to a replica with it): chunks and manifest of a publish, a later publish by another
 * replica, and the janitor's retiring update. Against the real API server: the stamp must survive
 * the server's handling of a create and of a resourceVersion-guarded update.
 */
@RealKubernetes(crdDirs = "crds")
class PublishedByStampTest {

  private static final String FILTER = "stamped";

  @Test
  void everyWriteNamesTheReplicaThatMadeIt(KubernetesClient client, TestNamespace ns)
      throws Exception {
    String namespace = ns.name();
    BloomFilter owner =
        SnapshotFixtures.apply(
            client,
            namespace,
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: %s}
            spec:
              falsePositiveRate: 0.01
              source: {configMap: {name: unused, key: ids}}
            """
                .formatted(FILTER));

    PublishedSnapshot v1 = publish(client, owner, "replica-a", bits("a"), null);
    assertThat(publishedBy(v1.configMap())).isEqualTo("replica-a");
    assertThat(chunksOf(client, namespace, 1))
        .isNotEmpty()
        .allSatisfy(c -> assertThat(publishedBy(c)).isEqualTo("replica-a"));

    PublishedSnapshot v2 = publish(client, owner, "replica-b", bits("b"), v1);
    assertThat(v2.manifest().version()).isEqualTo(2);
    assertThat(publishedBy(v2.configMap())).isEqualTo("replica-b");
    assertThat(chunksOf(client, namespace, 2))
        .isNotEmpty()
        .allSatisfy(c -> assertThat(publishedBy(c)).isEqualTo("replica-b"));

    // The grace period of version 1 is over: the janitor rewrites the manifest's annotations.
    SnapshotJanitor.Cleaned cleaned =
        SnapshotJanitor.clean(
            new SnapshotStore(client, owner, null).writingAs("replica-c", WriteFence.NONE),
            v2,
            Duration.ZERO,
            Instant.now().plusSeconds(1));
    assertThat(cleaned.state()).isNotSameAs(v2);
    PublishedSnapshot retired = new SnapshotStore(client, owner, null).read();
    assertThat(retired.previousVersions()).isEmpty();
    assertThat(publishedBy(retired.configMap())).isEqualTo("replica-c");

    // An identity is a pod name; anything longer is cut to what an annotation value may hold.
    String overlong = "r".repeat(10_000);
    PublishedSnapshot v3 = publish(client, owner, overlong, bits("c"), retired);
    assertThat(publishedBy(v3.configMap())).hasSize(253);

    // No identity, no stamp: the previous one is not carried over to a write it did not make.
    PublishedSnapshot v4 = publish(client, owner, null, bits("d"), v3);
    assertThat(v4.manifest().version()).isEqualTo(4);
    assertThat(publishedBy(v4.configMap())).isNull();
  }

  private static PublishedSnapshot publish(
      KubernetesClient client,
      BloomFilter owner,
      String publisher,
      BloomFilterBits bits,
      PublishedSnapshot current)
      throws PublishException {
    return PublicationFixtures.publish(client, owner, publisher, WriteFence.NONE, bits, current);
  }

  private static BloomFilterBits bits(String prefix) {
    return PublicationFixtures.bits(prefix);
  }

  private static List<ConfigMap> chunksOf(KubernetesClient client, String namespace, long version) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withLabelSelector(SnapshotNames.chunkSelector(FILTER, version))
        .list()
        .getItems();
  }

  private static String publishedBy(ConfigMap configMap) {
    var annotations = configMap.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(ManifestWriter.ANNOTATION_PUBLISHED_BY);
  }
}
