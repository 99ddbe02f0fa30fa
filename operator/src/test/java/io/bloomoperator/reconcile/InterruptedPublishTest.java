package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.chunkNames;
import static io.bloomoperator.reconcile.SnapshotFixtures.manifest;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.publish.BuildRecord;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Found by the fault suite (operator-kill, seed 6383658090753): an operator killed twice in a row
 * left a manifest its status does not record (killed between the manifest write and the status
 * write) and the chunks of a later publish killed before its manifest. The restarted operator
 * refuses the manifest, so its janitor keeps away, and it numbered the next version above the
 * refused manifest only: that version's chunk names were the stray chunks' names, every publish
 * failed with NameConflict, and the filter never served new keys again. It is numbered above the
 * stray chunks too.
 */
@RealKubernetes(crdDirs = "crds")
class InterruptedPublishTest {

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")));

  @Test
  void strayChunksOfAnInterruptedPublishDoNotBlockTheNextVersion(
      KubernetesClient client, TestNamespace ns) throws Exception {
    sourceConfigMap(client, ns.name(), "ids", "ids", keys("a"));
    apply(
        client,
        ns.name(),
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source: {configMap: {name: ids, key: ids}}
        """);
    awaitStatus(client, ns.name(), "ids", f -> Long.valueOf(1).equals(f.getStatus().getVersion()));
    OPERATOR.stop();
    try {
      BloomFilter filter =
          client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").get();
      SnapshotStore store = new SnapshotStore(client, filter, null);
      // Killed after its manifest write, before its status write: version 2 is not in the status.
      store.publish(
          TestKeys.stringFilter(500, keys("b")),
          500,
          2,
          1_000_000,
          store.read(),
          new BuildRecord("killed", filter.getMetadata().getGeneration(), Instant.now()),
          Instant.now());
      // Killed after a chunk of version 3, before its manifest.
      byte[] stray = "chunk of an interrupted publish".getBytes(StandardCharsets.UTF_8);
      store
          .chunks()
          .create(
              Part.base(3),
              0,
              stray,
              stray.length,
              HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(stray)));
      sourceConfigMap(client, ns.name(), "ids", "ids", keys("c"));
    } finally {
      OPERATOR.start();
    }

    BloomFilter published =
        awaitStatus(
            client,
            ns.name(),
            "ids",
            f ->
                f.getStatus().getVersion() != null
                    && f.getStatus().getVersion() > 1
                    && ready(f, "True", "Published"));
    assertThat(published.getStatus().getVersion()).isEqualTo(4L);
    Manifest now = manifest(client, ns.name(), "ids");
    assertThat(now.version()).isEqualTo(4);
    assertThat(
            client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .map(e -> e.getReason())
                .toList())
        .doesNotContain(Reasons.NAME_CONFLICT);
    // Once the new version is trusted, the janitor removes what the interrupted publish left.
    SnapshotFixtures.awaitStatus(
        client,
        ns.name(),
        "ids",
        f -> !chunkNames(client, ns.name(), "ids").contains(SnapshotNames.chunkName("ids", 3, 0)));
  }

  private static List<String> keys(String prefix) {
    return IntStream.range(0, 500).mapToObj(i -> prefix + i).toList();
  }
}
