package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The reader report (docs/reader-protocol.md) on a real API server: written as the protocol says,
 * updated on each swap; without the optional RBAC rule, or without a pod identity, the filter works
 * as before and the reader says once that it does not report.
 */
@RealKubernetes
class ReaderReportTest {

  private static final String NOT_REPORTING = "not reporting which version this pod serves";

  @Test
  void reportsTheServedVersionAsALeaseOwnedByThePod(KubernetesClient admin, TestNamespace ns) {
    SnapshotPublisher publisher = new SnapshotPublisher(admin, ns.name(), "ids");
    List<String> keys = TestKeys.strings("one", 100);
    publisher.publish(TestKeys.stringFilter(1_000, keys), keys.size(), 1);
    String uid = UUID.randomUUID().toString();
    try (LiveBloomFilter<String> live =
        BloomFilterWatcher.builder(admin, ns.name(), "ids", LiveKeyType.STRING)
            .podIdentity("app-0", uid)
            .readerReportInterval(Duration.ofSeconds(1))
            .start()) {
      ReaderReport first = awaitReport(admin, ns.name(), uid, r -> r.servedVersion() == 1);
      assertThat(first.podName()).isEqualTo("app-0");
      assertThat(first.podUid()).isEqualTo(uid);
      assertThat(first.filterName()).isEqualTo("ids");
      assertThat(first.failing()).isFalse();
      assertThat(first.loadedAt()).isNotNull();
      assertThat(first.staleAfter()).isEqualTo(Duration.ofSeconds(3));
      Lease lease = lease(admin, ns.name(), uid);
      assertThat(lease.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(o -> assertThat(o.getKind() + "/" + o.getUid()).isEqualTo("Pod/" + uid));

      List<String> more = TestKeys.strings("two", 100);
      publisher.publish(TestKeys.stringFilter(1_000, more), more.size(), 2);
      awaitReport(admin, ns.name(), uid, r -> r.servedVersion() == 2);
      assertThat(live.currentVersion()).isEqualTo(2);
    }
  }

  @Test
  void withoutTheLeaseRuleItWorksAsBeforeAndSaysSoOnce(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    String user = "reader-without-leases";
    ConfigMapReaderRole.grant(admin, ns.name(), user, user);
    SnapshotPublisher publisher = new SnapshotPublisher(admin, ns.name(), "ids");
    List<String> keys = TestKeys.strings("one", 100);
    publisher.publish(TestKeys.stringFilter(1_000, keys), keys.size(), 1);
    Config config = cluster.clientConfig();
    config.setImpersonateUsername(user);
    String uid = UUID.randomUUID().toString();
    String log;
    try (KubernetesClient reader = new KubernetesClientBuilder().withConfig(config).build()) {
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreExceptions()
          .until(() -> reader.configMaps().inNamespace(ns.name()).list() != null);
      log =
          capturingStandardError(
              () -> {
                try (LiveBloomFilter<String> live =
                    BloomFilterWatcher.builder(reader, ns.name(), "ids", LiveKeyType.STRING)
                        .podIdentity("app-0", uid)
                        .readerReportInterval(Duration.ofSeconds(1))
                        .start()) {
                  assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
                  List<String> more = TestKeys.strings("two", 100);
                  publisher.publish(TestKeys.stringFilter(1_000, more), more.size(), 2);
                  await().atMost(Duration.ofSeconds(10)).until(() -> live.currentVersion() == 2);
                  assertThat(more).allMatch(live::mightContain);
                  Thread.sleep(3_000); // three heartbeats
                }
              });
    }
    assertThat(log.lines().filter(l -> l.contains(NOT_REPORTING)))
        .as("said once:%n%s", log)
        .hasSize(1)
        .allSatisfy(l -> assertThat(l).contains("refused").contains("403"));
    assertThat(admin.resources(Lease.class).inNamespace(ns.name()).list().getItems()).isEmpty();
  }

  @Test
  void withoutAPodIdentityItDoesNotReportAndSaysSoOnce(KubernetesClient admin, TestNamespace ns)
      throws Exception {
    SnapshotPublisher publisher = new SnapshotPublisher(admin, ns.name(), "ids");
    List<String> keys = TestKeys.strings("one", 100);
    publisher.publish(TestKeys.stringFilter(1_000, keys), keys.size(), 1);
    String log =
        capturingStandardError(
            () -> {
              try (LiveBloomFilter<String> live =
                  BloomFilterWatcher.builder(admin, ns.name(), "ids", LiveKeyType.STRING)
                      .environment(Map.of())
                      .readerReportInterval(Duration.ofSeconds(1))
                      .start()) {
                assertThat(live.awaitReady(Duration.ofSeconds(10))).isTrue();
                Thread.sleep(2_000);
              }
            });
    assertThat(log.lines().filter(l -> l.contains(NOT_REPORTING)))
        .as("said once:%n%s", log)
        .singleElement()
        .satisfies(l -> assertThat(l).contains("POD_NAME").contains("POD_UID"));
    assertThat(admin.resources(Lease.class).inNamespace(ns.name()).list().getItems()).isEmpty();
  }

  @FunctionalInterface
  interface Body {
    void run() throws Exception;
  }

  /** slf4j-simple writes to the System.err of the moment. */
  private static String capturingStandardError(Body body) throws Exception {
    PrintStream original = System.err;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      body.run();
    } finally {
      System.setErr(original);
    }
    String log = captured.toString(StandardCharsets.UTF_8);
    original.print(log);
    return log;
  }

  private static Lease lease(KubernetesClient admin, String namespace, String uid) {
    return admin
        .resources(Lease.class)
        .inNamespace(namespace)
        .withName(SnapshotNames.readerReportName("ids", uid))
        .get();
  }

  private static ReaderReport awaitReport(
      KubernetesClient admin,
      String namespace,
      String uid,
      java.util.function.Predicate<ReaderReport> condition) {
    return await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                Optional.ofNullable(lease(admin, namespace, uid))
                    .flatMap(ReaderReports::parse)
                    .orElse(null),
            r -> r != null && condition.test(r));
  }
}
