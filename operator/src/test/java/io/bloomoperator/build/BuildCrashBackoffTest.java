package io.bloomoperator.build;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.mergePatch;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BuildAttempt;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 17 item 2, second half: a filter whose build made the operator die (an out-of-memory exit
 * on a huge value) must not be built again right after the restart, or the operator crash-loops for
 * every tenant. The test leaves in the status exactly what a process that died mid-build leaves
 * (the record written before the source was read, without a finish), restarts the operator and
 * checks the backoff: Ready=False/BuildCrashed, no build for a minute, two minutes after a second
 * crash in a row.
 */
@RealKubernetes(crdDirs = "crds")
@Timeout(180)
class BuildCrashBackoffTest {

  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  @Test
  void aBuildDuringWhichTheOperatorDiedIsBackedOffAfterTheRestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    apply(client, ns.name(), filter(List.of("a", "b", "c")));
    BloomFilter published = awaitStatus(client, ns.name(), "f", f -> ready(f, "True", null));
    long version = published.getStatus().getVersion();

    OPERATOR.stop();
    // What a process killed during a build leaves: the record of a build it started and never
    // finished. A spec change waits too: without the backoff the restarted operator would build
    // it at once.
    dieDuringABuild(client, ns.name(), 0);
    mergePatch(
        client,
        ns.name(),
        "f",
        Map.of("spec", Map.of("source", source(List.of("a", "b", "c", "d")))));
    OPERATOR.start();
    Instant restarted = Instant.now();

    BloomFilter crashed =
        awaitStatus(client, ns.name(), "f", f -> ready(f, "False", Reasons.BUILD_CRASHED));
    BuildAttempt first = crashed.getStatus().getBuildAttempt();
    assertThat(first.getCrashes()).isEqualTo(1);
    assertThat(Duration.between(restarted, Instant.parse(first.getRetryAfter())).toSeconds())
        .as("first crash: one minute")
        .isCloseTo(60, within(10L));
    assertThat(ReadyCondition.of(crashed).orElseThrow().getMessage())
        .contains("the operator stopped during the build")
        .contains("1 such build(s) in a row");
    // No build during the backoff, although the spec asks for one.
    Thread.sleep(10_000);
    BloomFilter waiting =
        client.resources(BloomFilter.class).inNamespace(ns.name()).withName("f").get();
    assertThat(waiting.getStatus().getVersion()).isEqualTo(version);
    assertThat(ready(waiting, "False", Reasons.BUILD_CRASHED)).isTrue();

    // The build after the backoff dies too: the wait doubles.
    OPERATOR.stop();
    dieDuringABuild(client, ns.name(), 1);
    OPERATOR.start();
    Instant restartedAgain = Instant.now();
    BloomFilter again =
        awaitStatus(
            client,
            ns.name(),
            "f",
            f ->
                f.getStatus().getBuildAttempt() != null
                    && Integer.valueOf(2).equals(f.getStatus().getBuildAttempt().getCrashes()));
    assertThat(ready(again, "False", Reasons.BUILD_CRASHED)).isTrue();
    assertThat(
            Duration.between(
                    restartedAgain,
                    Instant.parse(again.getStatus().getBuildAttempt().getRetryAfter()))
                .toSeconds())
        .as("second crash in a row: two minutes")
        .isCloseTo(120, within(10L));
    assertThat(again.getStatus().getVersion()).isEqualTo(version);
    // The operator records every build before reading its source, and finishes the record.
    BuildAttempt recorded = published.getStatus().getBuildAttempt();
    assertThat(recorded).as("every build is recorded").isNotNull();
    assertThat(Instant.parse(recorded.getFinishedAt()))
        .as("a build that ended is finished")
        .isAfterOrEqualTo(Instant.parse(recorded.getStartedAt()));
    assertThat(recorded.getCrashes()).isZero();
    System.out.printf(
        "crash backoff: %s then %s after restarts%n",
        first.getRetryAfter(), again.getStatus().getBuildAttempt().getRetryAfter());
  }

  /** Writes the start of a build, as the operator does before reading the source, and no finish. */
  private static void dieDuringABuild(KubernetesClient client, String namespace, int crashes) {
    client
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .withName("f")
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            Serialization.asJson(
                Map.of(
                    "status",
                    Map.of(
                        "phase",
                        Reasons.PHASE_BUILDING,
                        "buildAttempt",
                        Map.of(
                            "startedAt",
                            Instant.now().truncatedTo(ChronoUnit.MILLIS).toString(),
                            "crashes",
                            crashes)))));
  }

  private static Map<String, Object> source(List<String> keys) {
    return Map.of("inline", keys);
  }

  private static String filter(List<String> keys) {
    return """
    apiVersion: bloomoperator.io/v1alpha1
    kind: BloomFilter
    metadata: {name: f}
    spec:
      falsePositiveRate: 0.01
      source: {inline: %s}
    """
        .formatted(keys);
  }
}
