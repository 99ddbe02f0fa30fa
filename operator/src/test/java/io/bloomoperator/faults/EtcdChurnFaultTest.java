package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.reconcile.ChunkWrites;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.cluster.RestartableCluster;
import io.bloomoperator.testing.process.OperatorProcess;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Fault 10 of docs/reliability.md, the etcd-churn attack of the isolation audit, against the
 * packaged operator and an etcd of its own: one tenant alternates {@code expectedInsertions} of two
 * filters between two close values at the operator's minimum publish interval, so each publish is a
 * whole new snapshot. Measured: the chunk bytes the API server accepted in the namespace and the
 * growth of etcd's database over the attack; both must stay within the namespace's write budget
 * (plus etcd's own slack for the manifests, statuses and events).
 *
 * <p>Defaults: 2 minutes, {@code expectedInsertions} 5M and 12.5M (6 and 15 MB versions: too far
 * apart for the operator to keep the published size), a 96 MiB namespace budget. The audit's attack
 * is {@code -Dfaults.churnMinutes=10 -Dfaults.churnExpected=50000000 -Dfaults.churnSecond=50001000
 * -Dfaults.churnDefaultBudgets=true} (60 MB versions, the operator's default budgets).
 */
@Tag("fault")
class EtcdChurnFaultTest {

  private static final String NS = "churn";
  private static final List<String> FILTERS = List.of("churn-a", "churn-b");

  /** etcd's own growth beside the chunks: manifests, statuses, events, the Lease. */
  private static final long SLACK_BYTES = 32L * 1024 * 1024;

  @Test
  void geometryChurnGrowsEtcdNoMoreThanTheWriteBudget() throws Exception {
    int minutes = FaultParameters.integer("churnMinutes", 2);
    int expected = FaultParameters.integer("churnExpected", 5_000_000);
    // More than twice apart by default: close values keep the published size and write nothing.
    int second = FaultParameters.integer("churnSecond", expected * 5 / 2);
    boolean defaults = Boolean.getBoolean("faults.churnDefaultBudgets");
    long namespaceBudget = defaults ? 512L << 20 : 96L << 20;
    Map<String, String> env = new HashMap<>(Map.of("BLOOM_WATCH_NAMESPACES", NS));
    if (!defaults) {
      env.put("BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR", Long.toString(namespaceBudget));
      env.put("BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR", Long.toString(64L << 20));
    }
    // Room for what an unbounded attack would write, so the budget is what stops it, not etcd.
    try (RestartableCluster cluster = RestartableCluster.start(1, 8L << 30)) {
      cluster.installCrds("crds");
      try (KubernetesClient admin = cluster.newClient(0)) {
        admin
            .namespaces()
            .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
            .create();
        SnapshotFixtures.sourceConfigMap(
            admin,
            NS,
            "ids",
            "ids.txt",
            IntStream.range(0, 1000).mapToObj(i -> "id-" + i).toList());
        Path log = Files.createTempFile("etcd-churn-", ".log");
        ChunkWrites written = new ChunkWrites();
        try (OperatorProcess operator =
                new OperatorProcess(
                    cluster.kubeconfig(0), env, log, List.of("-Xmx768m", "-XX:+UseSerialGC"));
            Watch watch = ChunkWrites.watch(admin, NS, written)) {
          operator.start();
          operator.awaitStarted(Duration.ofSeconds(120));
          for (String name : FILTERS) {
            SnapshotFixtures.apply(admin, NS, filter(name, expected));
          }
          for (String name : FILTERS) {
            SnapshotFixtures.awaitStatus(
                admin, NS, name, f -> SnapshotFixtures.ready(f, "True", null));
          }
          long before = cluster.etcdDbSize();
          long writtenBefore = written.bytes();
          Set<String> reasons = ConcurrentHashMap.newKeySet();
          long end = System.nanoTime() + Duration.ofMinutes(minutes).toNanos();
          int edits = 0;
          for (int round = 1; System.nanoTime() < end; round++) {
            int value = round % 2 == 0 ? expected : second;
            for (String name : FILTERS) {
              admin
                  .resources(BloomFilter.class)
                  .inNamespace(NS)
                  .withName(name)
                  .edit(
                      f -> {
                        f.getSpec().setExpectedInsertions((long) value);
                        return f;
                      });
              edits++;
              ReadyCondition.of(
                      admin.resources(BloomFilter.class).inNamespace(NS).withName(name).get())
                  .ifPresent(c -> reasons.add(c.getReason()));
            }
            Thread.sleep(10_000); // the operator's default minimum publish interval
          }
          long growth = cluster.etcdDbSize() - before;
          long chunkBytes = written.bytes() - writtenBefore;
          FaultParameters.report(
              "etcd-churn",
              String.format(
                  "%d min, 2 filters alternating expectedInsertions %d and %d, %d spec edits: %d"
                      + " chunks of %.1f MB"
                      + " written, etcd db %.1f MB -> %.1f MB (+%.1f MB), namespace budget %.0f"
                      + " MiB/h, reasons seen %s",
                  minutes,
                  expected,
                  second,
                  edits,
                  written.chunks(),
                  chunkBytes / 1e6,
                  before / 1e6,
                  (before + growth) / 1e6,
                  growth / 1e6,
                  namespaceBudget / 1048576.0,
                  reasons));
          assertThat(chunkBytes).isLessThanOrEqualTo(namespaceBudget);
          assertThat(growth).isLessThanOrEqualTo(namespaceBudget + SLACK_BYTES);
          if (chunkBytes > namespaceBudget / 2) {
            assertThat(reasons).contains(Reasons.WRITE_BUDGET_EXCEEDED);
          }
        }
      }
    }
  }

  private static String filter(String name, int expected) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.01
          expectedInsertions: %d
          source:
            configMap: {name: ids, key: ids.txt}
        """
        .formatted(name, expected);
  }
}
