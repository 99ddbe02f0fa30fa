package io.bloomoperator.rollout;

import static io.bloomoperator.reconcile.SnapshotFixtures.apply;
import static io.bloomoperator.reconcile.SnapshotFixtures.awaitStatus;
import static io.bloomoperator.reconcile.SnapshotFixtures.ready;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.Reasons;
import io.bloomoperator.cli.BloomCli;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.reconcile.SnapshotFixtures;
import io.bloomoperator.snapshot.CanaryShare;
import io.bloomoperator.snapshot.LoadFailureReason;
import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Canaries (spec.rollout.canary) on a real API server with 50 readers app-0..app-49, each with its
 * own client and Pod object: the 10 % share (app-0, app-8, app-23, app-29, app-38 by the pod-name
 * hash) serves a new version first, all 50 get it once the hold is over; a canary the share fails
 * to load is halted and the stable version keeps serving; promote and abort by the CLI the kubectl
 * plugin runs; an operator restart in the middle keeps the canary; a forged report from another
 * namespace neither halts nor advances it.
 */
@RealKubernetes(crdDirs = "crds")
class CanaryRolloutTest {

  private static final int READERS = 50;
  private static final int PERCENT = 10;
  private static final Duration STATUS_INTERVAL = Duration.ofSeconds(1);
  private static final List<String> SHARE = List.of("app-0", "app-8", "app-23", "app-29", "app-38");

  @RegisterExtension
  static final InProcessOperator OPERATOR =
      // No minimum time between publishes: the figure compares the canary with a plain publish,
      // not with the publish interval.
      InProcessOperator.withSettings(
              io.bloomoperator.settings.OperatorSettings.fromEnvironment(
                  Map.of("BLOOM_MIN_PUBLISH_INTERVAL", "0")))
          .withReaderSettings(
              new ReaderSettings(
                  STATUS_INTERVAL, 200, Duration.ofMinutes(10), Duration.ofMinutes(1)));

  private static String filter(String keys, String holdFor) {
    return """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: ids}
        spec:
          falsePositiveRate: 0.01
          rollout:
            canary: {percent: %d, holdFor: %s}
          source:
            inline: [%s]
        """
        .formatted(PERCENT, holdFor, keys);
  }

  /** One reader: its own client, its own pod identity. */
  private record Reader(String name, KubernetesClient client, LiveBloomFilter<String> filter)
      implements AutoCloseable {
    long version() {
      return filter.currentVersion();
    }

    @Override
    public void close() {
      filter.close();
      client.close();
    }
  }

  /** The 50 readers; the share's get {@code shareOptions} on top. */
  private static List<Reader> readers(
      KubernetesClient client,
      String namespace,
      UnaryOperator<BloomFilterWatcher.Builder<String>> shareOptions) {
    List<Reader> readers = new ArrayList<>();
    for (int i = 0; i < READERS; i++) {
      String name = "app-" + i;
      Pod pod = ReaderPods.pod(client, namespace, name);
      KubernetesClient own = KubeCluster.shared().newClient();
      BloomFilterWatcher.Builder<String> builder =
          BloomFilterWatcher.builder(own, namespace, "ids", LiveKeyType.STRING)
              .podIdentity(name, pod.getMetadata().getUid())
              .readerReportInterval(Duration.ofSeconds(1));
      if (SHARE.contains(name)) {
        builder = shareOptions.apply(builder);
      }
      readers.add(new Reader(name, own, builder.start()));
    }
    return readers;
  }

  private static BloomFilter get(KubernetesClient client, String namespace) {
    return client.resources(BloomFilter.class).inNamespace(namespace).withName("ids").get();
  }

  private static CanaryStatus awaitCanary(
      KubernetesClient client, String namespace, Predicate<CanaryStatus> condition) {
    return await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              BloomFilter f = get(client, namespace);
              return f == null || f.getStatus() == null ? null : f.getStatus().getCanary();
            },
            c -> c != null && condition.test(c));
  }

  private static void awaitVersions(
      List<Reader> readers, Predicate<Reader> condition, Duration atMost) {
    await()
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> readers.stream().allMatch(condition));
  }

  private static void changeKeys(KubernetesClient client, String namespace, List<String> keys) {
    SnapshotFixtures.mergePatch(
        client, namespace, "ids", Map.of("spec", Map.of("source", Map.of("inline", keys))));
  }

  private static boolean event(KubernetesClient client, String namespace, String reason) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .anyMatch(e -> reason.equals(e.getReason()));
  }

  private static String eventMessage(KubernetesClient client, String namespace, String reason) {
    return client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> reason.equals(e.getReason()))
        .map(e -> e.getMessage())
        .findFirst()
        .orElse(null);
  }

  private static String cli(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        BloomCli.commandLine(
                new ByteArrayInputStream(new byte[0]),
                new PrintWriter(out, true),
                new PrintWriter(err, true))
            .execute(args);
    assertThat(exit).as(out + "\n" + err).isZero();
    return out.toString();
  }

  @Test
  void theShareOfTenPercentServesTheCanaryFirstAndAllFiftyGetItAfterTheHold(
      KubernetesClient client, TestNamespace ns) throws Exception {
    assertThat(SHARE).allMatch(name -> CanaryShare.contains(name, PERCENT));
    Duration hold = Duration.ofSeconds(4);
    apply(client, ns.name(), filter("a, b", "4s"));
    long v1 =
        awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"))
            .getStatus()
            .getVersion();
    List<Reader> readers = readers(client, ns.name(), b -> b);
    try {
      awaitVersions(readers, r -> r.version() == v1, Duration.ofSeconds(30));

      Instant published = Instant.now();
      changeKeys(client, ns.name(), List.of("a", "b", "c"));
      CanaryStatus running = awaitCanary(client, ns.name(), c -> true);
      assertThat(running.getState()).isEqualTo(CanaryStatus.RUNNING);
      assertThat(running.getPercent()).isEqualTo(PERCENT);
      long v2 = running.getVersion();
      assertThat(v2).isGreaterThan(v1);
      awaitVersions(
          readers,
          r -> r.version() == (SHARE.contains(r.name()) ? v2 : v1),
          Duration.ofSeconds(20));
      // Still split while the hold runs: the 45 others stay on the stable version.
      BloomFilter during = get(client, ns.name());
      assertThat(during.getStatus().getVersion()).isEqualTo(v1);
      assertThat(ready(during, "True", Reasons.CANARY_RUNNING)).isTrue();
      assertThat(readers.stream().filter(r -> r.version() == v2).map(Reader::name))
          .containsExactlyInAnyOrderElementsOf(SHARE);
      CanaryStatus counted = awaitCanary(client, ns.name(), c -> c.getOnCanary() == SHARE.size());
      assertThat(counted.getReaders()).isEqualTo(SHARE.size());
      assertThat(counted.getFailing()).isZero();

      // Promoted once the hold is over: every reader on v2.
      awaitVersions(readers, r -> r.version() == v2, Duration.ofSeconds(30));
      Duration withCanary = Duration.between(published, Instant.now());
      BloomFilter promoted =
          awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == v2);
      assertThat(promoted.getStatus().getCanary()).isNull();
      assertThat(ready(promoted, "True", Reasons.PUBLISHED)).isTrue();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> event(client, ns.name(), "CanaryPromoted"));
      assertThat(SnapshotConfigMaps.readCanary(manifestConfigMap(client, ns.name()))).isNull();

      // The same change without a canary, for the figure.
      SnapshotFixtures.mergePatch(
          client,
          ns.name(),
          "ids",
          Map.of("spec", Map.of("rollout", java.util.Collections.singletonMap("canary", null))));
      awaitStatus(
          client,
          ns.name(),
          "ids",
          f -> f.getSpec().getRollout() == null || f.getSpec().getRollout().getCanary() == null);
      Instant plain = Instant.now();
      changeKeys(client, ns.name(), List.of("a", "b", "c", "d"));
      long v3 =
          awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() > v2)
              .getStatus()
              .getVersion();
      awaitVersions(readers, r -> r.version() == v3, Duration.ofSeconds(30));
      Duration withoutCanary = Duration.between(plain, Instant.now());
      System.out.printf(
          "CanaryRolloutTest: publish to all %d readers on the new version: %d ms without a"
              + " canary, %d ms with a canary of %d %% and holdFor %d s (status interval %d s):"
              + " %d ms added%n",
          READERS,
          withoutCanary.toMillis(),
          withCanary.toMillis(),
          PERCENT,
          hold.toSeconds(),
          STATUS_INTERVAL.toSeconds(),
          withCanary.minus(withoutCanary).toMillis());
      assertThat(withCanary).isGreaterThanOrEqualTo(hold);
    } finally {
      readers.forEach(Reader::close);
    }
  }

  @Test
  void aCanaryTheShareFailsToLoadIsHaltedAndTheStableVersionKeepsServing(
      KubernetesClient client, TestNamespace ns) throws Exception {
    apply(client, ns.name(), filter("a, b", "10m"));
    long v1 =
        awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"))
            .getStatus()
            .getVersion();
    // The share's readers refuse snapshots over 4 KiB: the canary below (5,000 keys) is 6 KB.
    List<Reader> readers = readers(client, ns.name(), b -> b.maxSnapshotBytes(4096));
    try {
      awaitVersions(readers, r -> r.version() == v1, Duration.ofSeconds(30));
      List<String> many = new ArrayList<>();
      for (int i = 0; i < 5_000; i++) {
        many.add("k" + i);
      }
      changeKeys(client, ns.name(), many);

      CanaryStatus halted =
          awaitCanary(client, ns.name(), c -> CanaryStatus.HALTED.equals(c.getState()));
      assertThat(halted.getFailing()).isPositive();
      assertThat(halted.getFailingReason()).isEqualTo(LoadFailureReason.TOO_LARGE.name());
      BloomFilter filter =
          awaitStatus(client, ns.name(), "ids", f -> ready(f, "False", Reasons.CANARY_HALTED));
      assertThat(filter.getStatus().getVersion()).isEqualTo(v1);
      String message =
          await()
              .atMost(Duration.ofSeconds(10))
              .until(() -> eventMessage(client, ns.name(), Reasons.CANARY_HALTED), m -> m != null);
      assertThat(message)
          .contains("canary version " + halted.getVersion() + " halted")
          .contains("failed to load it (TOO_LARGE)")
          .contains("version " + v1 + " serves every reader")
          .doesNotContain("k4999");
      assertThat(SnapshotConfigMaps.readCanary(manifestConfigMap(client, ns.name()))).isNull();
      // Every reader still serves v1; the same content is held, not announced again.
      assertThat(readers).allMatch(r -> r.version() == v1);
      awaitStatus(
          client,
          ns.name(),
          "ids",
          f ->
              f.getStatus().getHeld() != null
                  && Reasons.CANARY_HALTED.equals(f.getStatus().getHeld().getReason()));
      Thread.sleep(3_000);
      BloomFilter later = get(client, ns.name());
      assertThat(later.getStatus().getCanary().getState()).isEqualTo(CanaryStatus.HALTED);
      assertThat(later.getStatus().getCanary().getVersion()).isEqualTo(halted.getVersion());
      assertThat(later.getStatus().getVersion()).isEqualTo(v1);
      assertThat(readers).allMatch(r -> r.version() == v1);
    } finally {
      readers.forEach(Reader::close);
    }
  }

  @Test
  void promoteAndAbortByThePluginCommandsAndARestartKeepsTheCanary(
      KubernetesClient client, TestNamespace ns, KubeCluster cluster) throws Exception {
    String kubeconfig = cluster.kubeconfig().toString();
    apply(client, ns.name(), filter("a, b", "10m"));
    BloomFilter first = awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    long v1 = first.getStatus().getVersion();
    String v1Sha = first.getStatus().getSha256();
    List<Reader> readers = readers(client, ns.name(), b -> b);
    try {
      awaitVersions(readers, r -> r.version() == v1, Duration.ofSeconds(30));
      changeKeys(client, ns.name(), List.of("a", "b", "c"));
      CanaryStatus running = awaitCanary(client, ns.name(), c -> c.getOnCanary() == SHARE.size());
      long v2 = running.getVersion();
      awaitVersions(
          readers,
          r -> r.version() == (SHARE.contains(r.name()) ? v2 : v1),
          Duration.ofSeconds(20));

      // The operator restarts in the middle: the canary goes on from the status and the manifest.
      OPERATOR.stop();
      OPERATOR.start();
      Thread.sleep(3_000);
      CanaryStatus afterRestart =
          awaitCanary(client, ns.name(), c -> c.getOnCanary() == SHARE.size());
      assertThat(afterRestart.getState()).isEqualTo(CanaryStatus.RUNNING);
      assertThat(afterRestart.getVersion()).isEqualTo(v2);
      assertThat(afterRestart.getSince()).isEqualTo(running.getSince());
      assertThat(get(client, ns.name()).getStatus().getVersion()).isEqualTo(v1);
      assertThat(readers.stream().filter(r -> r.version() == v2).map(Reader::name))
          .containsExactlyInAnyOrderElementsOf(SHARE);

      // A forged report from another namespace, for a share pod's name, failing the canary:
      // not counted, the canary runs on.
      String other = ns.name() + "-other";
      client
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(other).endMetadata().build())
          .create();
      try {
        Pod elsewhere = ReaderPods.pod(client, other, "app-8");
        Lease forged =
            ReaderReports.toLease(
                new ReaderReport(
                    other,
                    "app-8",
                    elsewhere.getMetadata().getUid(),
                    "ids",
                    v1,
                    v2,
                    LoadFailureReason.UNSIGNED,
                    Instant.now(),
                    Instant.now(),
                    Duration.ofHours(1)));
        ReaderPods.create(client, forged);
        Thread.sleep(3_000);
        assertThat(get(client, ns.name()).getStatus().getCanary().getState())
            .isEqualTo(CanaryStatus.RUNNING);
      } finally {
        client.namespaces().withName(other).delete();
      }

      // Abort by the plugin's command: the share already serves v2, so the stable payload comes
      // back as a new version above it.
      String aborted = cli("abort", "ids", "-n", ns.name(), "--kubeconfig", kubeconfig);
      assertThat(aborted).contains("abort requested: " + ns.name() + "/ids canary version " + v2);
      BloomFilter back =
          awaitStatus(
              client,
              ns.name(),
              "ids",
              f ->
                  f.getStatus().getVersion() > v2
                      && f.getStatus().getCanary() != null
                      && CanaryStatus.ABORTED.equals(f.getStatus().getCanary().getState()));
      long v3 = back.getStatus().getVersion();
      awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", Reasons.CANARY_ABORTED));
      awaitVersions(readers, r -> r.version() == v3, Duration.ofSeconds(20));
      assertThat(back.getStatus().getSha256()).isEqualTo(v1Sha);
      assertThat(SnapshotFixtures.manifest(client, ns.name(), "ids").sha256()).isEqualTo(v1Sha);
      assertThat(SnapshotConfigMaps.readCanary(manifestConfigMap(client, ns.name()))).isNull();

      // A new content: a new canary, promoted by the plugin's command long before its hold.
      changeKeys(client, ns.name(), List.of("a", "b", "c", "d"));
      CanaryStatus next =
          awaitCanary(
              client,
              ns.name(),
              c -> CanaryStatus.RUNNING.equals(c.getState()) && c.getVersion() > v3);
      long v4 = next.getVersion();
      String promoted = cli("promote", "ids", "-n", ns.name(), "--kubeconfig", kubeconfig);
      assertThat(promoted)
          .contains("promotion requested: " + ns.name() + "/ids canary version " + v4);
      awaitVersions(readers, r -> r.version() == v4, Duration.ofSeconds(20));
      BloomFilter done =
          awaitStatus(client, ns.name(), "ids", f -> f.getStatus().getVersion() == v4);
      assertThat(done.getStatus().getCanary()).isNull();
    } finally {
      readers.forEach(Reader::close);
    }
  }

  @Test
  void aCanaryTheOperatorDidNotAnnounceIsWithdrawnNeverPromoted(
      KubernetesClient client, TestNamespace ns) throws Exception {
    apply(client, ns.name(), filter("a, b", "1s"));
    awaitStatus(client, ns.name(), "ids", f -> ready(f, "True", "Published"));
    ConfigMap manifest = manifestConfigMap(client, ns.name());
    io.bloomoperator.snapshot.Manifest stable = SnapshotFixtures.manifest(client, ns.name(), "ids");
    // Whoever may edit ConfigMaps announces "their" canary (here the stable manifest stamped
    // later), which a promotion would sign into manifest.json.
    String json = stable.withCreatedAt(Instant.now().plusSeconds(60)).toJson();
    ConfigMap forged = SnapshotConfigMaps.withCanary(manifest, json, null, 100);
    client.configMaps().inNamespace(ns.name()).resource(forged).update();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> SnapshotConfigMaps.readCanary(manifestConfigMap(client, ns.name())) == null);
    await().atMost(Duration.ofSeconds(10)).until(() -> event(client, ns.name(), "CanaryNotOurs"));
    Thread.sleep(2_000);
    assertThat(SnapshotFixtures.manifest(client, ns.name(), "ids")).isEqualTo(stable);
    assertThat(get(client, ns.name()).getStatus().getVersion()).isEqualTo(stable.version());
  }

  private static ConfigMap manifestConfigMap(KubernetesClient client, String namespace) {
    return client
        .configMaps()
        .inNamespace(namespace)
        .withName(SnapshotNames.manifestName("ids"))
        .get();
  }
}
