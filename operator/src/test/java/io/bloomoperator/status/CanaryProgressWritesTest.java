package io.bloomoperator.status;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.events.EventRecorder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.StatusBudget;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.run.Outcome;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A running canary is judged every status interval and its reader counts move with every report:
 * that churn must not become status-write churn (the security review's first finding). While the
 * decision stays "running", a count change is a deferrable write (charged up front, spaced, skipped
 * when the share has no room); a decision change is always written.
 */
@RealKubernetes(crdDirs = "crds")
class CanaryProgressWritesTest {

  private static final Instant NOW = Instant.parse("2026-12-02T08:00:00Z");
  private static final Optional<Duration> NEXT = Optional.of(Duration.ofSeconds(5));

  @Test
  void readerCountsOfARunningCanaryAreWrittenOnlyAsTheDeferrableShareAllows(
      KubernetesClient client, TestNamespace ns) {
    apply(client, ns.name(), filterYaml());
    WriteBudget budget = new WriteBudget(WriteBudget.Limits.defaults());
    StatusBudget statusBudget = new StatusBudget(budget);
    report(client, ns, statusBudget).record(running("served by 0/4 readers"));
    long afterAnnounce = budget.writtenByNamespace(ns.name(), NOW);
    Set<String> revisions = new HashSet<>();
    revisions.add(get(client, ns).getMetadata().getResourceVersion());

    // 20 judgements in the same spacing period, every one with other counts.
    for (int i = 1; i <= 20; i++) {
      report(client, ns, statusBudget).record(progress("served by " + i % 5 + "/4 readers"));
      revisions.add(get(client, ns).getMetadata().getResourceVersion());
    }
    assertThat(revisions).as("status revisions: the announce and one deferrable write").hasSize(2);
    long charged = budget.writtenByNamespace(ns.name(), NOW) - afterAnnounce;
    long object =
        StatusBudget.storedBytes(get(client, ns)) + WriteBudget.Limits.OBJECT_OVERHEAD_BYTES;
    assertThat(charged)
        .as("the deferrable write is charged once, before it is sent, not again after")
        .isPositive()
        .isLessThan(object + object / 2);

    // A decision change is an outcome: always written, whatever the deferrable share says.
    report(client, ns, statusBudget)
        .record(new Outcome.Failed(Reasons.CANARY_HALTED, "halted", false, NEXT));
    assertThat(ReadyCondition.of(get(client, ns)).orElseThrow().getReason())
        .isEqualTo(Reasons.CANARY_HALTED);
  }

  @Test
  void withoutTheDeferrableKindEveryCountChangeIsAWrite(KubernetesClient client, TestNamespace ns) {
    apply(client, ns.name(), filterYaml());
    StatusBudget statusBudget = new StatusBudget(new WriteBudget(WriteBudget.Limits.defaults()));
    Set<String> revisions = new HashSet<>();
    for (int i = 0; i <= 20; i++) {
      report(client, ns, statusBudget).record(running("served by " + i % 5 + "/4 readers"));
      revisions.add(get(client, ns).getMetadata().getResourceVersion());
    }
    // What the canary step wrote before its waiting outcome became deferrable.
    assertThat(revisions).hasSizeGreaterThan(10);
  }

  private static Outcome running(String counts) {
    return new Outcome.Ready(Reasons.CANARY_RUNNING, "; canary " + counts, NEXT);
  }

  private static Outcome progress(String counts) {
    return new Outcome.Progress(Reasons.CANARY_RUNNING, "; canary " + counts, NEXT);
  }

  private static StatusReport report(
      KubernetesClient client, TestNamespace ns, StatusBudget budget) {
    return new StatusReport(
        get(client, ns),
        client,
        budget,
        new EventRecorder(client, Clock.systemUTC()),
        BuildMetrics.discarding(),
        new StorageFullFailures(),
        new OwnWrites(),
        NOW);
  }

  private static BloomFilter get(KubernetesClient client, TestNamespace ns) {
    return client.resources(BloomFilter.class).inNamespace(ns.name()).withName("ids").get();
  }

  private static String filterYaml() {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          source:
            inline: [a-1, a-2]
        """;
  }
}
