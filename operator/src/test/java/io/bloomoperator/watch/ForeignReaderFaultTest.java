package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Ed25519Keys;
import io.bloomoperator.snapshot.ManifestSigner;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.cluster.RestartableCluster;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Go and Python readers' watches through the faults the Java reader is tested for, on real
 * processes: kube-apiserver and etcd of a {@link RestartableCluster} (two API servers on one etcd:
 * the readers use the first, this side the second). Both readers trust the publisher's Ed25519 key.
 *
 * <ol>
 *   <li>A signed v1; both readers answer as Java does.
 *   <li>The readers' API server is killed; meanwhile v2 is published through the other, other
 *       ConfigMaps change, and etcd's history is compacted past everything the readers saw. The API
 *       server comes back on the same port; the readers' watches broke, and both resume them from
 *       the resourceVersion they held (client-go's reflector retries the watch while the connection
 *       is refused; the Python watcher resumes after any failure), which is compacted away: each
 *       reader must count a watch answered 410 Gone ({@code Watcher.WatchExpirations}, {@code
 *       FilterWatcher.watch_expirations}, exported as {@code bloomreader_watch_expirations_total})
 *       and then list again and load v2. A reader that listed without a 410 fails its test.
 *   <li>The genuinely signed v1 manifest is written back (a restore, a lower version): both refuse
 *       it as {@code ROLLBACK} and keep answering from v2.
 * </ol>
 *
 * The readers' side is {@code TestClusterFaults} (sidecar-lib/go/kube) and {@code
 * tests/test_faults.py} (sidecar-lib/python), run by {@link ForeignReaderProcesses}.
 */
class ForeignReaderFaultTest {

  private static final String NS = "foreign-faults";
  private static final String FILTER = "ids";
  private static final Duration STEP = Duration.ofSeconds(120);

  @Test
  void readersRelistAfterAnApiServerRestartPastCompactionAndRefuseARollback(@TempDir Path dir)
      throws Exception {
    KeyPair key = Ed25519Keys.generate();
    ManifestSigner signer = new ManifestSigner(key.getPrivate());
    Path trusted = dir.resolve("trusted.pem");
    Files.writeString(trusted, Ed25519Keys.toPem(key.getPublic()));
    List<String> common = TestKeys.strings("common", 3_000);
    List<String> onlyV1 = TestKeys.strings("v1", 1_000);
    List<String> onlyV2 = TestKeys.strings("v2", 1_000);
    List<String> absent = TestKeys.strings("absent", 2_000);
    List<String> asked = new ArrayList<>(common);
    asked.addAll(onlyV1);
    asked.addAll(onlyV2);
    asked.addAll(absent);
    BloomFilterBits v1 = TestKeys.stringFilter(10_000, common, onlyV1);
    BloomFilterBits v2 = TestKeys.stringFilter(10_000, common, onlyV2);

    try (RestartableCluster cluster = RestartableCluster.start(2, 0);
        KubernetesClient admin = cluster.newClient(1)) {
      admin
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
          .create();
      SnapshotPublisher publisher = new SnapshotPublisher(admin, NS, FILTER);
      SnapshotPublisher.Published p1 =
          publisher.createChunks(v1, 4_000, 1, 3_001, SnapshotPublisher.Tamper.NONE);
      publisher.writeSignedManifest(p1.manifest(), signer, NS);
      String v1Signature = SnapshotConfigMaps.signatureData(publisher.manifestConfigMap());

      Map<String, String> env =
          Map.of(
              "KUBECONFIG",
              cluster.kubeconfig(0).toString(),
              "BLOOM_CLUSTER_NAMESPACE",
              NS,
              "BLOOM_CLUSTER_FILTER",
              FILTER,
              "BLOOM_TRUSTED_KEY_FILE",
              trusted.toString());
      try (ForeignReaderProcesses readers =
          ForeignReaderProcesses.start(dir, "^TestClusterFaults$", "tests/test_faults.py", env)) {
        readers.publishStep(1, 1, asked, answers(v1, asked));
        readers.awaitSeen(1, ForeignReaderProcesses.FIRST_STEP);
        // client-go lists again, without resuming, after a watch that ended within a second of
        // its start having received nothing ("very short watch"): the readers' watches get an
        // event (an annotation on the manifest, which changes nothing they serve) and outlive
        // that second before their API server goes away, so they resume from what they held.
        admin
            .configMaps()
            .inNamespace(NS)
            .withName(SnapshotNames.manifestName(FILTER))
            .edit(
                cm -> {
                  Map<String, String> annotations = new HashMap<>();
                  if (cm.getMetadata().getAnnotations() != null) {
                    annotations.putAll(cm.getMetadata().getAnnotations());
                  }
                  annotations.put("foreign-faults/touched", "1");
                  cm.getMetadata().setAnnotations(annotations);
                  return cm;
                });
        Thread.sleep(2_000);

        // The readers' API server goes away; v2 and other changes land through the other one,
        // and etcd forgets the history the readers' watches would resume from.
        cluster.killApiServer(0);
        publisher.writeSignedManifest(
            publisher.createChunks(v2, 4_000, 2, 3_001, SnapshotPublisher.Tamper.NONE).manifest(),
            signer,
            NS);
        for (int i = 0; i < 20; i++) {
          admin
              .configMaps()
              .inNamespace(NS)
              .resource(
                  new ConfigMapBuilder()
                      .withNewMetadata()
                      .withName("churn-" + i)
                      .endMetadata()
                      .withData(Map.of("i", Integer.toString(i)))
                      .build())
              .create();
        }
        cluster.compactEtcd();
        cluster.startApiServer(0);
        readers.publishStep(2, 2, asked, answers(v2, asked));
        readers.awaitSeen(2, STEP);

        // A genuinely signed older version written back: a rollback, refused; v2 stays.
        publisher.writeManifestData(p1.manifest().toJson(), v1Signature);
        readers.publishStep(3, 2, asked, answers(v2, asked));
        readers.awaitSeen(3, STEP);
        readers.finish(STEP);
        // Each test asserted its own count; the Go watcher's line is in its output as well
        // (pytest keeps the Python watcher's log lines to itself when the test passes).
        assertThat(readers.log("go")).contains("relist after 410");
      }
    }
  }

  private static List<Boolean> answers(BloomFilterBits bits, List<String> keys) {
    return keys.stream().map(bits::mightContainString).toList();
  }
}
