package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static io.bloomoperator.reconcile.SnapshotFixtures.sourceConfigMap;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The etcd-churn attack of the isolation audit, on a real API server: a tenant alternates {@code
 * expectedInsertions} so that every publish is a whole new snapshot (the geometry changes) and
 * etcd's history grows with each. Between close values the operator keeps the published size, so
 * nothing new is written; between values far apart the write budgets bound what it writes.
 */
@RealKubernetes(crdDirs = "crds")
class EtcdWriteBudgetTest {

  private static final long NAMESPACE_BYTES_PER_HOUR = 1536 * 1024;
  private static final long FILTER_BYTES_PER_HOUR = 1024 * 1024;
  private static final Duration ATTACK = Duration.ofSeconds(40);

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
          OperatorSettings.fromEnvironment(
              Map.of(
                  "BLOOM_MIN_PUBLISH_INTERVAL", "1s",
                  "BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR",
                      Long.toString(NAMESPACE_BYTES_PER_HOUR),
                  "BLOOM_MAX_FILTER_WRITE_BYTES_PER_HOUR", Long.toString(FILTER_BYTES_PER_HOUR))));

  private static String filter(String name, long expected) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: %s}
        spec:
          falsePositiveRate: 0.001
          expectedInsertions: %d
          source:
            configMap: {name: ids, key: ids.txt}
        """
        .formatted(name, expected);
  }

  @Test
  void alternatingTheGeometryWritesNoMoreThanTheBudget(KubernetesClient client, TestNamespace ns)
      throws Exception {
    TestNamespace other = new TestNamespace(ns.name() + "-other");
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(other.name()).endMetadata().build())
        .create();
    try {
      attack(client, ns, other);
    } finally {
      client.namespaces().withName(other.name()).delete();
    }
  }

  @Test
  void alternatingCloseSizesWritesNoNewVersions(KubernetesClient client, TestNamespace ns)
      throws Exception {
    sourceConfigMap(
        client,
        ns.name(),
        "ids",
        "ids.txt",
        IntStream.range(0, 20_000).mapToObj(i -> "id-" + i).toList());
    apply(client, ns.name(), filter("close", 200_000));
    awaitStatus(client, ns.name(), "close", f -> ready(f, "True", null));
    ChunkWrites written = new ChunkWrites();
    try (Watch watch = ChunkWrites.watch(client, ns.name(), written)) {
      for (int round = 1; round <= 8; round++) {
        long expected = round % 2 == 0 ? 200_000 : 200_100;
        client
            .resources(BloomFilter.class)
            .inNamespace(ns.name())
            .withName("close")
            .edit(
                f -> {
                  f.getSpec().setExpectedInsertions(expected);
                  return f;
                });
        // Ready for the edited generation: the edit was reconciled.
        awaitStatus(client, ns.name(), "close", f -> ready(f, "True", null));
      }
      // At most one resize (200,100 keys may not fit the first size, 360 KB: resized with 25 %
      // headroom, 450 KB); every other edit finds the same payload and writes no chunk. Before,
      // each of the 8 edits wrote a whole version.
      assertThat(written.bytes()).isLessThan(600_000);
    }
  }

  private static void attack(KubernetesClient client, TestNamespace ns, TestNamespace other)
      throws Exception {
    var keys = IntStream.range(0, 20_000).mapToObj(i -> "id-" + i).toList();
    sourceConfigMap(client, ns.name(), "ids", "ids.txt", keys);
    sourceConfigMap(client, other.name(), "ids", "ids.txt", keys);

    ChunkWrites written = new ChunkWrites();
    try (Watch watch = ChunkWrites.watch(client, ns.name(), written)) {
      // Two filters of one tenant, about 180 KB and 560 KB a version.
      apply(client, ns.name(), filter("churn-a", 100_000));
      apply(client, ns.name(), filter("churn-b", 100_000));
      awaitStatus(client, ns.name(), "churn-a", f -> ready(f, "True", null));
      awaitStatus(client, ns.name(), "churn-b", f -> ready(f, "True", null));

      Set<String> reasons = ConcurrentHashMap.newKeySet();
      long end = System.nanoTime() + ATTACK.toNanos();
      for (int round = 1; System.nanoTime() < end; round++) {
        // More than twice apart, so the size cannot be kept.
        long expected = round % 2 == 0 ? 100_000 : 250_000;
        for (String name : new String[] {"churn-a", "churn-b"}) {
          client
              .resources(BloomFilter.class)
              .inNamespace(ns.name())
              .withName(name)
              .edit(
                  f -> {
                    f.getSpec().setExpectedInsertions(expected);
                    return f;
                  });
          BloomFilter now =
              client.resources(BloomFilter.class).inNamespace(ns.name()).withName(name).get();
          ReadyCondition.of(now).ifPresent(c -> reasons.add(c.getReason()));
        }
        Thread.sleep(1500);
      }

      // Another tenant is not held back by this one's spent budget.
      apply(client, other.name(), filter("honest", 100_000));
      awaitStatus(client, other.name(), "honest", f -> ready(f, "True", null));

      assertThat(written.bytes())
          .as("chunk bytes written by the namespace in %s (%d chunks)", ATTACK, written.chunks())
          .isLessThanOrEqualTo(NAMESPACE_BYTES_PER_HOUR)
          .isGreaterThan(FILTER_BYTES_PER_HOUR / 2);
      assertThat(reasons).as("the filters were told why").contains(Reasons.WRITE_BUDGET_EXCEEDED);
      // The refusal's Warning event says which budget and when the next publish fits.
      assertThat(client.v1().events().inNamespace(ns.name()).list().getItems())
          .filteredOn(e -> Reasons.WRITE_BUDGET_EXCEEDED.equals(e.getReason()))
          .isNotEmpty()
          .allSatisfy(
              e ->
                  assertThat(e.getMessage())
                      .contains("BLOOM_MAX_")
                      .contains("the next publish is possible at")
                      .contains("keeps serving"));
      // The last published version is still whole and served.
      assertThat(SnapshotFixtures.manifest(client, ns.name(), "churn-a")).isNotNull();
    }
  }
}
