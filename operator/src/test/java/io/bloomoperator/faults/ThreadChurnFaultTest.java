package io.bloomoperator.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.process.OperatorProcess;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Thread churn found by the soak (fault 9 of docs/reliability.md): the packaged operator, kept busy
 * by sources that change every second, must reuse its threads rather than start one per task. On a
 * 2-core machine the common ForkJoinPool had parallelism 1, so every {@code CompletableFuture}
 * {@code *Async} call without an executor (inside the Kubernetes client) started a new thread:
 * about 65 a second in the soak. Part of the short fault suite (about 45 s). The count read is the
 * operator JVM's total of started threads, which only grows, so churn shows even when the live
 * count stays flat.
 *
 * <p>{@code -Dfaults.threadChurnJfr=<file>} also records the operator with JFR (dumped before the
 * operator is killed), whose {@code jdk.ThreadStart} events carry the stack that started each
 * thread ({@code jfr print --events jdk.ThreadStart <file>}). {@code
 * -Dfaults.operatorJvmOptions=...} adds options to the operator's JVM, e.g. {@code
 * -Djava.util.concurrent.ForkJoinPool.common.parallelism=1}, which brings the churn back (the
 * operator keeps a user's setting): the test must then fail.
 */
@Tag("fault")
@RealKubernetes(crdDirs = "crds")
class ThreadChurnFaultTest {

  /**
   * Threads the operator may start during the busy period. Without the fix it started about 2,000
   * in 30 s; with it, a few dozen (executors that retire idle threads and start new ones, HTTP
   * connections).
   */
  private static final long MAX_THREADS_STARTED = 150;

  @Test
  void busyOperatorReusesItsThreads(KubernetesClient client, TestNamespace ns, KubeCluster cluster)
      throws Exception {
    Duration busy = FaultParameters.millis("threadChurnBusy", 30_000);
    int filterCount = FaultParameters.integer("filters", 3);
    String namespace = ns.name();
    List<String> filters = IntStream.range(0, filterCount).mapToObj(i -> "churn-" + i).toList();
    ChangingSources sources = new ChangingSources(client, namespace, filters, 2_000);
    sources.writeSources(0);
    sources.createFilters(Duration.ofSeconds(5));
    Path log = Files.createTempFile("thread-churn-", ".log");
    System.out.println("thread-churn: operator log " + log);
    Map<String, String> environment = new HashMap<>();
    environment.put("BLOOM_MIN_PUBLISH_INTERVAL", "0");
    environment.put("BLOOM_WATCH_NAMESPACES", namespace);
    String jfr = System.getProperty("faults.threadChurnJfr");
    String jvmOptions = System.getProperty("faults.operatorJvmOptions", "");
    if (jfr != null) {
      jvmOptions +=
          " -XX:StartFlightRecording=name=churn,"
              + "+jdk.ThreadStart#enabled=true,+jdk.ThreadStart#stackTrace=true";
    }
    if (!jvmOptions.isBlank()) {
      environment.put("JAVA_TOOL_OPTIONS", jvmOptions.strip());
    }
    try (OperatorProcess operator = new OperatorProcess(cluster.kubeconfig(), environment, log)) {
      operator.start();
      operator.awaitStarted(Duration.ofSeconds(90));
      try (JvmProbe operatorJvm = JvmProbe.attach(operator.pid())) {
        sources.startChanging(Duration.ofSeconds(1));
        long roundBefore = sources.round();
        long startedBefore = operatorJvm.threadsStarted();
        Thread.sleep(busy.toMillis());
        long started = operatorJvm.threadsStarted() - startedBefore;
        long rounds = sources.round() - roundBefore;
        long live = operatorJvm.read().threads();
        if (jfr != null) {
          dumpRecording(operator.pid(), jfr);
        }
        sources.stopChanging();
        FaultParameters.report(
            "thread-churn",
            String.format(
                "busy=%s sourceRounds=%d operatorThreadsStarted=%d (%.1f/s) liveThreads=%d"
                    + " bound=%d",
                busy,
                rounds,
                started,
                started * 1000.0 / busy.toMillis(),
                live,
                MAX_THREADS_STARTED));
        assertThat(rounds).as("source rounds during the busy period").isGreaterThan(5);
        assertThat(started).as("threads the operator started").isLessThan(MAX_THREADS_STARTED);
      }
    } finally {
      sources.stopChanging();
    }
  }

  /** Writes the operator's recording: it is killed at the end, which would lose it. */
  private static void dumpRecording(long pid, String file) throws Exception {
    Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
    int exit =
        new ProcessBuilder(
                jcmd.toString(), Long.toString(pid), "JFR.dump", "name=churn", "filename=" + file)
            .inheritIO()
            .start()
            .waitFor();
    System.out.println("thread-churn: JFR recording " + file + " (jcmd exit " + exit + ")");
  }
}
