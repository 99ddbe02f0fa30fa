package io.bloomoperator.rollout;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.changeKeys;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.CanaryShare;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.ForeignReaderProcesses;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A canary the operator publishes ({@code spec.rollout.canary}, 50 %, held for an hour), followed
 * by the Go and Python readers on a real API server: each language runs a reader whose pod name
 * falls inside the share and one whose pod name falls outside ({@link CanaryShare}, the rule the
 * test vectors pin), both reporting as their own Pod. The share's readers must serve the canary and
 * answer exactly as a Java reader of the share does; the others stay on the stable version and
 * answer as a Java reader outside it does. The canary is then aborted by its annotation: the
 * share's readers report serving it, so the operator republishes the stable payload above it, and
 * every reader ends on that version with the stable answers. The readers' side is {@code
 * TestClusterCanary} (sidecar-lib/go/kube) and {@code tests/test_canary.py} (sidecar-lib/python),
 * run by {@link ForeignReaderProcesses}; this side writes {@code s<N>.canary.keys} (what the share
 * serves) and {@code s<N>.stable.keys} (what the others serve).
 */
@RealKubernetes(crdDirs = "crds")
class ForeignReaderCanaryTest {

  private static final int PERCENT = 50;
  private static final Duration WAIT = Duration.ofSeconds(60);

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.fromEnvironment(Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")))
          .withReaderSettings(
              new ReaderSettings(
                  Duration.ofSeconds(1), 200, Duration.ofMinutes(10), Duration.ofMinutes(1)));

  private static List<String> keys(String tag, int from, int to) {
    return IntStream.range(from, to).mapToObj(i -> tag + "-" + i).toList();
  }

  /** The first of {@code prefix-0, prefix-1, ...} inside (or outside) the share. */
  private static String podName(String prefix, boolean inShare) {
    return IntStream.range(0, 1000)
        .mapToObj(i -> prefix + "-" + i)
        .filter(name -> CanaryShare.contains(name, PERCENT) == inShare)
        .findFirst()
        .orElseThrow();
  }

  @Test
  void goAndPythonReadersInTheShareServeTheOperatorsCanaryAndComeBackWhenItIsWithdrawn(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster, @TempDir Path dir)
      throws Exception {
    String namespace = ns.name();
    sourceConfigMap(client, namespace, "ids", "ids", keys("k", 0, 3000));
    apply(
        client,
        namespace,
        """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: 10000
          source:
            configMap: {name: ids, key: ids}
          refreshInterval: 10m
          snapshot: {chunkSizeBytes: 4096}
          rollout:
            canary: {percent: %d, holdFor: 1h}
        """
            .formatted(PERCENT));
    long v1 =
        awaitStatus(client, namespace, "ids", f -> ready(f, "True", Reasons.PUBLISHED))
            .getStatus()
            .getVersion();

    Map<String, String> env = new HashMap<>();
    env.put("KUBECONFIG", cluster.kubeconfig().toString());
    env.put("BLOOM_CLUSTER_NAMESPACE", namespace);
    env.put("BLOOM_CLUSTER_FILTER", "ids");
    for (String language : List.of("go", "python")) {
      for (boolean inShare : List.of(true, false)) {
        String name = podName(language + (inShare ? "-in" : "-out"), inShare);
        Pod pod = ReaderPods.pod(client, namespace, name);
        env.put(
            "BLOOM_CANARY_" + language.toUpperCase() + (inShare ? "_IN" : "_OUT"),
            name + " " + pod.getMetadata().getUid());
      }
    }
    String javaName = podName("java-in", true);
    Pod javaPod = ReaderPods.pod(client, namespace, javaName);
    List<String> asked = new ArrayList<>(keys("k", 0, 3000));
    asked.addAll(keys("c", 0, 500));
    asked.addAll(keys("absent", 0, 3000));

    try (ForeignReaderProcesses readers =
            ForeignReaderProcesses.start(
                dir, "^TestClusterCanary$", "tests/test_canary.py", Map.copyOf(env));
        KubernetesClient javaInClient = KubeCluster.shared().newClient();
        LiveBloomFilter<String> javaIn =
            BloomFilterWatcher.builder(javaInClient, namespace, "ids", LiveKeyType.STRING)
                .podIdentity(javaName, javaPod.getMetadata().getUid())
                .readerReportInterval(Duration.ofSeconds(1))
                .start();
        LiveBloomFilter<String> javaOut =
            BloomFilterWatcher.builder(client, namespace, "ids", LiveKeyType.STRING).start()) {
      await()
          .atMost(WAIT)
          .until(() -> javaIn.currentVersion() == v1 && javaOut.currentVersion() == v1);
      publish(readers, 1, v1, answers(javaIn, asked), v1, answers(javaOut, asked), asked);
      readers.awaitSeen(1, ForeignReaderProcesses.FIRST_STEP);

      // New keys: a canary; the share (Java's, Go's and Python's readers inside it) serves it.
      List<String> next = new ArrayList<>(keys("k", 0, 2500));
      next.addAll(keys("c", 0, 500));
      changeKeys(client, namespace, "ids", next);
      long v2 =
          await()
              .atMost(WAIT)
              .until(
                  () -> canary(client, namespace),
                  c -> c != null && c.getVersion() != null && c.getVersion() > v1)
              .getVersion();
      assertThat(SnapshotFixtures.manifest(client, namespace, "ids").version())
          .as("the stable manifest stays")
          .isEqualTo(v1);
      await().atMost(WAIT).until(() -> javaIn.currentVersion() == v2);
      assertThat(javaOut.currentVersion()).isEqualTo(v1);
      List<Boolean> onCanary = answers(javaIn, asked);
      assertThat(onCanary).isNotEqualTo(answers(javaOut, asked));
      publish(readers, 2, v2, onCanary, v1, answers(javaOut, asked), asked);
      readers.awaitSeen(2, WAIT);
      // The share's three readers report serving it: counted by the operator from their Leases.
      CanaryStatus counted =
          await()
              .atMost(WAIT)
              .until(
                  () -> canary(client, namespace),
                  c -> c != null && Integer.valueOf(3).equals(c.getOnCanary()));
      assertThat(counted.getState()).isEqualTo(CanaryStatus.RUNNING);
      assertThat(counted.getReaders()).isEqualTo(3);

      // Withdrawn: readers of the share serve it, so the stable payload comes back above it.
      SnapshotFixtures.mergePatch(
          client,
          namespace,
          "ids",
          Map.of(
              "metadata",
              Map.of("annotations", Map.of(Canaries.ABORT_ANNOTATION, Long.toString(v2)))));
      BloomFilter back =
          awaitStatus(
              client,
              namespace,
              "ids",
              f -> f.getStatus().getVersion() > v2 && ready(f, "True", Reasons.CANARY_ABORTED));
      long v3 = back.getStatus().getVersion();
      await()
          .atMost(WAIT)
          .until(() -> javaIn.currentVersion() == v3 && javaOut.currentVersion() == v3);
      List<Boolean> stable = answers(javaOut, asked);
      assertThat(answers(javaIn, asked)).isEqualTo(stable);
      publish(readers, 3, v3, stable, v3, stable, asked);
      readers.awaitSeen(3, WAIT);
      readers.finish(WAIT);
    }
  }

  private static CanaryStatus canary(KubernetesClient client, String namespace) {
    BloomFilter f =
        client.resources(BloomFilter.class).inNamespace(namespace).withName("ids").get();
    return f == null || f.getStatus() == null ? null : f.getStatus().getCanary();
  }

  private static List<Boolean> answers(LiveBloomFilter<String> reader, List<String> keys) {
    return keys.stream().map(reader::mightContain).toList();
  }

  private static void publish(
      ForeignReaderProcesses readers,
      int step,
      long canaryVersion,
      List<Boolean> canaryAnswers,
      long stableVersion,
      List<Boolean> stableAnswers,
      List<String> keys)
      throws Exception {
    readers.writeStep(step, "canary", canaryVersion, keys, canaryAnswers);
    readers.writeStep(step, "stable", stableVersion, keys, stableAnswers);
    readers.published(step);
  }
}
