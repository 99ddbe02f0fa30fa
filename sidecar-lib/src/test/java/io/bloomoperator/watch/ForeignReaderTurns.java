package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.ReaderReport;
import io.bloomoperator.snapshot.ReaderReports;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.ReaderPod;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Turns between this JVM, which publishes snapshots, and a reader in another language (the Go and
 * Python readers' cluster tests) running as a separate process against the same API server: Java
 * writes {@code v<N>.keys} (a key and Java's answer per line) and then {@code v<N>.published}; the
 * reader writes {@code v<N>.seen} once it has checked version N; Java writes {@code done} when it
 * has seen what it waits for, and the reader then stops.
 *
 * <p>It also makes the Pod the reader reports as (an API server without a kubelet keeps it Pending,
 * which is live to the operator) and reads the report back with {@link ReaderReports}, the parser
 * the operator counts with.
 */
final class ForeignReaderTurns {

  private final Path dir;
  private final Process process;
  private final Path log;
  private final Duration step;

  ForeignReaderTurns(Path dir, Process process, Path log, Duration step) {
    this.dir = dir;
    this.process = process;
    this.log = log;
    this.step = step;
  }

  @SafeVarargs
  static void writeExpected(Path dir, long version, BloomFilterBits served, List<String>... keySets)
      throws IOException {
    List<String> lines = new ArrayList<>();
    for (List<String> keys : keySets) {
      for (String key : keys) {
        lines.add(key + "\t" + (served.mightContainString(key) ? "1" : "0"));
      }
    }
    Files.write(dir.resolve("v" + version + ".keys"), lines, StandardCharsets.UTF_8);
    // Written after the keys: the other side reads them once this exists.
    Files.createFile(dir.resolve("v" + version + ".published"));
  }

  /** Waits until the reader has checked {@code version}; fails if it exits or takes too long. */
  void awaitSeen(long version) throws Exception {
    Path seen = dir.resolve("v" + version + ".seen");
    // The first step includes starting the reader (a Go test binary may have to be compiled).
    long deadline = System.nanoTime() + (version == 1 ? step.multipliedBy(4) : step).toNanos();
    while (!Files.exists(seen)) {
      if (!process.isAlive()) {
        throw new AssertionError(
            "the reader exited with "
                + process.exitValue()
                + " before checking v"
                + version
                + ":\n"
                + Files.readString(log));
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "the reader did not check v" + version + " in " + step + ":\n" + Files.readString(log));
      }
      Thread.sleep(50);
    }
  }

  /** Lets the reader stop. */
  void done() throws IOException {
    Files.createFile(dir.resolve("done"));
  }

  /**
   * A kubeconfig for ServiceAccount {@code reader} of {@code namespace} (a token from the API
   * server's TokenRequest), bound to the Role of deploy/reader-rbac/base as shipped: the rights the
   * docs tell users to grant, and no more. Without {@code leases}, the Role loses its optional rule
   * for reader reports (and is named after the account), as a user who leaves it out.
   */
  static Path readerKubeconfig(
      KubernetesClient client,
      KubeCluster cluster,
      String namespace,
      Path dir,
      String account,
      boolean leases)
      throws IOException {
    client
        .serviceAccounts()
        .inNamespace(namespace)
        .resource(
            new ServiceAccountBuilder().withNewMetadata().withName(account).endMetadata().build())
        .create();
    Path rbac =
        RealKubernetesExtension.repoRoot().resolve("deploy/reader-rbac/base/reader-rbac.yaml");
    try (var in = Files.newInputStream(rbac)) {
      for (HasMetadata item : client.load(in).items()) {
        item.getMetadata().setName(account);
        if (item instanceof RoleBinding binding) {
          binding.getSubjects().get(0).setName(account);
          binding.getRoleRef().setName(account);
        }
        if (item instanceof Role role && !leases) {
          // The reports' rules: the Lease rights and the marker the report policy confines by.
          role.getRules()
              .removeIf(
                  rule ->
                      rule.getResources().contains("leases")
                          || rule.getResources().contains("readerreports"));
          assertThat(role.getRules())
              .singleElement()
              .satisfies(rule -> assertThat(rule.getResources()).containsExactly("configmaps"));
        }
        client.resource(item).inNamespace(namespace).create();
      }
    }
    // TokenRequest by hand: the slim client leaves out the authentication model module.
    String response =
        client.raw(
            client.getMasterUrl()
                + "api/v1/namespaces/"
                + namespace
                + "/serviceaccounts/"
                + account
                + "/token",
            "POST",
            java.util.Map.of(
                "apiVersion",
                "authentication.k8s.io/v1",
                "kind",
                "TokenRequest",
                "spec",
                java.util.Map.of("expirationSeconds", 3_600)));
    assertThat(response).as("TokenRequest answer").isNotNull();
    @SuppressWarnings("unchecked")
    java.util.Map<String, Object> status =
        (java.util.Map<String, Object>)
            client
                .getKubernetesSerialization()
                .unmarshal(response, java.util.Map.class)
                .get("status");
    String token = (String) status.get("token");
    Config admin = cluster.clientConfig();
    String ca =
        admin.getCaCertData() != null
            ? admin.getCaCertData()
            : java.util.Base64.getEncoder()
                .encodeToString(Files.readAllBytes(Path.of(admin.getCaCertFile())));
    Path kubeconfig = dir.resolve(account + "-kubeconfig.yaml");
    Files.writeString(
        kubeconfig,
        """
        apiVersion: v1
        kind: Config
        clusters:
          - name: test
            cluster: {server: "%s", certificate-authority-data: "%s"}
        users:
          - name: reader
            user: {token: "%s"}
        contexts:
          - name: reader
            context: {cluster: test, user: reader, namespace: "%s"}
        current-context: reader
        """
            .formatted(admin.getMasterUrl(), ca, token, namespace));
    return kubeconfig;
  }

  /**
   * Waits for the report of {@code pod} about {@code filter} that the operator would count (it
   * parses, its owner is this live pod, it is not stale) and that satisfies {@code condition}.
   */
  ReaderReport awaitCountedReport(
      KubernetesClient client, Pod pod, String filter, Predicate<ReaderReport> condition)
      throws IOException {
    String namespace = pod.getMetadata().getNamespace();
    String uid = pod.getMetadata().getUid();
    try {
      return await()
          .atMost(step)
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  Optional.ofNullable(
                          client
                              .resources(Lease.class)
                              .inNamespace(namespace)
                              .withName(SnapshotNames.readerReportName(filter, uid))
                              .get())
                      .flatMap(ReaderReports::parse)
                      .filter(r -> r.podUid().equals(uid))
                      .filter(r -> r.podName().equals(pod.getMetadata().getName()))
                      .filter(r -> r.namespace().equals(namespace))
                      .filter(r -> r.filterName().equals(filter))
                      .filter(r -> !r.staleAt(Instant.now()))
                      .orElse(null),
              r -> r != null && condition.test(r));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(
          "no counted report of "
              + pod.getMetadata().getName()
              + " matching the condition: "
              + client
                  .resources(Lease.class)
                  .inNamespace(namespace)
                  .withName(SnapshotNames.readerReportName(filter, uid))
                  .get()
              + "\n"
              + Files.readString(log),
          e);
    }
  }

  /** The pod is still the one the report names: what the operator checks before counting it. */
  static void assertLive(KubernetesClient client, Pod pod) {
    Pod now =
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .get();
    assertThat(now).isNotNull();
    assertThat(now.getMetadata().getUid()).isEqualTo(pod.getMetadata().getUid());
    assertThat(now.getMetadata().getDeletionTimestamp()).isNull();
  }

  /**
   * The scenario both foreign readers run: a base (v1), a delta on it (v2) and a version with a
   * tampered chunk (v3), each checked by the reader against Java's answers; after each step the
   * reader's report must be one the operator counts, serving v1, then v2, then v2 with v3 failing
   * ({@code VERIFICATION}: the chunk's SHA-256), and its heartbeat must go on with no new version.
   *
   * @param reader the reader process for the environment given (KUBECONFIG, BLOOM_CLUSTER_*,
   *     POD_NAME, POD_UID), its output going to the log file given
   */
  static void followBaseDeltaAndTamperedChunk(
      KubernetesClient client,
      String namespace,
      String filter,
      Path dir,
      KubeCluster cluster,
      Duration step,
      java.util.function.BiFunction<java.util.Map<String, String>, Path, ProcessBuilder> reader)
      throws Exception {
    Pod pod = ReaderPod.create(client, namespace, "app-0");
    // The reader runs with the shipped reader RBAC only, as an application's pod would.
    Path kubeconfig = readerKubeconfig(client, cluster, namespace, dir, "reader", true);
    // A second reader in the same process, as another account without the Lease rule: it must
    // serve the same and say once that it does not report.
    Path withoutLeases = readerKubeconfig(client, cluster, namespace, dir, "no-leases", false);
    SnapshotPublisher publisher = new SnapshotPublisher(client, namespace, filter);
    List<String> common = TestKeys.strings("common", 4_000);
    List<String> onlyV1 = TestKeys.strings("v1", 1_000);
    List<String> onlyV2 = TestKeys.strings("v2", 1_000);
    List<String> absent = TestKeys.strings("absent", 2_000);
    BloomFilterBits v1 = TestKeys.stringFilter(10_000, common, onlyV1);
    BloomFilterBits v2 = TestKeys.stringFilter(10_000, common, onlyV2);
    // Small chunks: several per version, with 64-bit words split across chunk boundaries.
    var m1 = publisher.publish(v1, 5_000, 1, 3_001, SnapshotPublisher.Tamper.NONE).manifest();
    writeExpected(dir, 1, v1, common, onlyV1, onlyV2, absent);

    Path log = dir.resolve("reader.log");
    java.util.Map<String, String> env =
        java.util.Map.of(
            "KUBECONFIG", kubeconfig.toString(),
            "BLOOM_CLUSTER_NAMESPACE", namespace,
            "BLOOM_CLUSTER_FILTER", filter,
            "BLOOM_CLUSTER_DIR", dir.toString(),
            "POD_NAME", pod.getMetadata().getName(),
            "POD_UID", pod.getMetadata().getUid(),
            "BLOOM_CLUSTER_KUBECONFIG_NO_LEASES", withoutLeases.toString());
    ProcessBuilder builder = reader.apply(env, log).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    builder.environment().putAll(env);
    Process process = builder.start();
    ForeignReaderTurns turns = new ForeignReaderTurns(dir, process, log, step);
    try {
      turns.awaitSeen(1);
      ReaderReport first =
          turns.awaitCountedReport(client, pod, filter, r -> r.servedVersion() == 1);
      assertThat(first.failing()).isFalse();
      assertThat(first.loadedAt()).isNotNull();
      // The test runs the reader with a 1 s heartbeat: stale 3 heartbeats later.
      assertThat(first.staleAfter()).isEqualTo(Duration.ofSeconds(3));

      publisher.publishDelta(m1, v1, v2, 5_000, 2);
      writeExpected(dir, 2, v2, common, onlyV1, onlyV2, absent);
      turns.awaitSeen(2);
      turns.awaitCountedReport(client, pod, filter, r -> r.servedVersion() == 2 && !r.failing());

      // v3: one byte of chunk 1 flipped after the manifest took its digest.
      publisher.publish(
          TestKeys.stringFilter(10_000, absent),
          absent.size(),
          3,
          3_001,
          (index, bytes) -> {
            if (index == 1) {
              bytes[17] ^= 0x40;
            }
            return bytes;
          });
      // The reader expects v2's answers still.
      writeExpected(dir, 3, v2, common, onlyV1, onlyV2, absent);
      turns.awaitSeen(3);
      ReaderReport failing =
          turns.awaitCountedReport(
              client, pod, filter, r -> r.servedVersion() == 2 && r.failingVersion() == 3);
      assertThat(failing.failingReason())
          .isEqualTo(io.bloomoperator.snapshot.LoadFailureReason.VERIFICATION);
      // Heartbeats: a later renewal with nothing new to say, the load time unchanged.
      ReaderReport renewed =
          turns.awaitCountedReport(
              client, pod, filter, r -> r.renewedAt().isAfter(failing.renewedAt()));
      assertThat(renewed.loadedAt()).isEqualTo(failing.loadedAt());
      assertThat(renewed.failingVersion()).isEqualTo(3);
      assertLive(client, pod);
      // The reader without the Lease rule wrote nothing: app-0's is the only report.
      assertThat(client.resources(Lease.class).inNamespace(namespace).list().getItems())
          .extracting(l -> l.getMetadata().getName())
          .containsExactly(SnapshotNames.readerReportName(filter, pod.getMetadata().getUid()));
      turns.done();

      assertThat(process.waitFor(step.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      String output = Files.readString(log);
      assertThat(process.exitValue()).as(output).isZero();
    } finally {
      process.destroyForcibly();
    }
  }
}
