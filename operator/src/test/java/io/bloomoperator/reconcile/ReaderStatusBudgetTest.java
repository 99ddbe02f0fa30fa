package io.bloomoperator.reconcile;

import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.api.SourceSpec;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Attack H1 of the 2026-12-02 security audit on a real API server: a tenant makes its BloomFilters
 * as large as the schema allows (10,000 inline keys of the longest length, ~200 KiB of
 * annotations), runs one pod, and changes the served version in that pod's reader reports every
 * second. Every change of the counts used to make the operator rewrite each whole object
 * (status.readers) every 5 s, outside any budget: 1 KB Lease edits became ~1 MB etcd writes. Now
 * every status write is charged to the namespace's write budget at the object's size, and reader
 * counts get a quarter of it: what the operator writes to the tenant's BloomFilters meanwhile stays
 * within the namespace's hourly budget, and a publish still fits afterwards.
 */
@RealKubernetes(crdDirs = "crds")
class ReaderStatusBudgetTest {

  private static final int FILTERS = 6;
  private static final long NAMESPACE_BYTES_PER_HOUR = 24L * 1024 * 1024;
  private static final Duration CHURN = Duration.ofSeconds(40);
  private static final int ANNOTATION_BYTES = 200 * 1024;

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      InProcessOperator.withSettings(
              OperatorSettings.fromEnvironment(
                  Map.of(
                      "BLOOM_MIN_PUBLISH_INTERVAL",
                      "0",
                      "BLOOM_MAX_NAMESPACE_WRITE_BYTES_PER_HOUR",
                      Long.toString(NAMESPACE_BYTES_PER_HOUR))))
          // The install's counting round: every 5 s.
          .withReaderSettings(ReaderSettings.defaults());

  @Test
  void leaseChurnWritesNoMoreThanTheNamespaceBudget(KubernetesClient client, TestNamespace ns)
      throws Exception {
    for (int i = 0; i < FILTERS; i++) {
      create(client, ns.name(), "big-" + i);
    }
    long objectBytes = 0;
    for (int i = 0; i < FILTERS; i++) {
      BloomFilter published =
          awaitStatus(client, ns.name(), "big-" + i, f -> ready(f, "True", Reasons.PUBLISHED));
      objectBytes = Math.max(objectBytes, jsonBytes(published));
    }
    Pod pod = ReaderPods.pod(client, ns.name(), "app");

    AtomicLong written = new AtomicLong();
    AtomicInteger writes = new AtomicInteger();
    AtomicBoolean counting = new AtomicBoolean(true);
    Set<String> seen = ConcurrentHashMap.newKeySet();
    int leaseUpdates = 0;
    try (Watch watch =
        client
            .resources(BloomFilter.class)
            .inNamespace(ns.name())
            .watch(
                new Watcher<>() {
                  @Override
                  public void eventReceived(Action action, BloomFilter filter) {
                    // One event per revision etcd stored; the tenant writes no BloomFilter now.
                    if (action == Action.MODIFIED
                        && counting.get()
                        && seen.add(filter.getMetadata().getResourceVersion())) {
                      written.addAndGet(jsonBytes(filter));
                      writes.incrementAndGet();
                    }
                  }

                  @Override
                  public void onClose(WatcherException cause) {}
                })) {
      long end = System.nanoTime() + CHURN.toNanos();
      for (long second = 0; System.nanoTime() < end; second++) {
        for (int i = 0; i < FILTERS; i++) {
          report(client, ns.name(), pod, "big-" + i, 1000 + second);
          leaseUpdates++;
        }
        Thread.sleep(1000);
      }
      // A round under way at the end writes what it counted.
      Thread.sleep(ReaderSettings.DEFAULT_STATUS_INTERVAL.toMillis() + 1000);
      counting.set(false);
    }
    double perHour = written.get() * (3600.0 / (CHURN.toSeconds() + 6));
    System.out.printf(
        "ReaderStatusBudgetTest: %d filters of %d B, 1 pod: %d Lease updates; operator wrote %d"
            + " BloomFilter revisions = %d B in %d s (%.0f MB/h if it went on at that rate;"
            + " namespace write budget %d B/h)%n",
        FILTERS,
        objectBytes,
        leaseUpdates,
        writes.get(),
        written.get(),
        CHURN.toSeconds() + 6,
        perHour / 1e6,
        NAMESPACE_BYTES_PER_HOUR);
    assertThat(written.get())
        .as("bytes the operator wrote to the namespace's BloomFilters under Lease churn")
        .isLessThanOrEqualTo(NAMESPACE_BYTES_PER_HOUR);

    // The counts got their share: at least one filter shows them.
    assertThat(
            IntStream.range(0, FILTERS)
                .mapToObj(
                    i ->
                        client
                            .resources(BloomFilter.class)
                            .inNamespace(ns.name())
                            .withName("big-" + i)
                            .get())
                .filter(f -> f.getStatus().getReaders() != null))
        .isNotEmpty();
    // And they left room for the namespace's publishes: a spec change is published.
    mergePatch(
        client,
        ns.name(),
        "big-0",
        Map.of("spec", Map.of("source", Map.of("inline", keys("changed")))));
    awaitStatus(
        client,
        ns.name(),
        "big-0",
        f ->
            ready(f, "True", Reasons.PUBLISHED)
                && Long.valueOf(2).equals(f.getStatus().getVersion()));
  }

  /** A BloomFilter as large as the schema lets a tenant make it. */
  private static void create(KubernetesClient client, String namespace, String name) {
    BloomFilter filter =
        Serialization.unmarshal(
            """
            apiVersion: bloomoperator.io/v1alpha1
            kind: BloomFilter
            metadata: {name: %s}
            spec:
              falsePositiveRate: 0.01
              source:
                inline: [a]
            """
                .formatted(name),
            BloomFilter.class);
    filter.getSpec().getSource().setInline(keys(name));
    filter
        .getMetadata()
        .setAnnotations(Map.of("example.com/padding", "p".repeat(ANNOTATION_BYTES)));
    client.resources(BloomFilter.class).inNamespace(namespace).resource(filter).create();
  }

  /** The most keys of the longest length the schema admits. */
  private static List<String> keys(String prefix) {
    return IntStream.range(0, SourceSpec.MAX_INLINE_KEYS)
        .mapToObj(i -> pad(prefix + "-" + i))
        .toList();
  }

  private static String pad(String key) {
    return key + "k".repeat(SourceSpec.MAX_INLINE_KEY_LENGTH - key.length());
  }

  /** A forged report of {@code pod}'s reader of {@code filter}, serving {@code version}. */
  private static void report(
      KubernetesClient client, String namespace, Pod pod, String filter, long version) {
    client
        .resource(
            ReaderPods.report(
                namespace,
                pod.getMetadata().getName(),
                pod.getMetadata().getUid(),
                filter,
                version))
        .forceConflicts()
        .serverSideApply();
  }

  private static long jsonBytes(BloomFilter filter) {
    return Serialization.asJson(filter).getBytes(StandardCharsets.UTF_8).length;
  }
}
