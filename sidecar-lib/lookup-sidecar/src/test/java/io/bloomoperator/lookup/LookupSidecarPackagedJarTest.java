package io.bloomoperator.lookup;

import static io.bloomoperator.lookup.LookupClient.present;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The runnable jar as {@code package} built it (target/bloom-lookup-sidecar-*.jar with its lib/
 * class path), started as a process the way an image will start it, with only a kubeconfig to reach
 * the real API server: it serves a published filter, stops on SIGTERM, and refuses a non-loopback
 * bind with exit status 2.
 */
@Tag("packaged-jar")
@RealKubernetes
class LookupSidecarPackagedJarTest {

  private static final Pattern SERVING =
      Pattern.compile("serving 1 filter\\(s\\) on http://([^/]+):(\\d+)/");

  @Test
  void theJarServesAPublishedFilterAndStopsOnSigterm(KubernetesClient client, TestNamespace ns)
      throws Exception {
    new SnapshotPublisher(client, ns.name(), "ids")
        .publish(TestKeys.stringFilter(100, List.of("a", "b")), 2, 1);
    Process process =
        start("--filter", ns.name() + "/ids", "--port", "0", "--reader-reports", "false");
    try {
      List<String> log = new ArrayList<>();
      CompletableFuture<Matcher> serving =
          CompletableFuture.supplyAsync(() -> waitFor(process, log));
      Matcher address = serving.get(60, TimeUnit.SECONDS);
      assertThat(address.group(1)).isEqualTo("127.0.0.1");
      LookupClient http =
          new LookupClient(new InetSocketAddress("127.0.0.1", Integer.parseInt(address.group(2))));
      await().atMost(Duration.ofSeconds(30)).until(() -> http.get("/readyz").statusCode() == 200);
      assertThat(present(http.contains("ids", "a"))).isTrue();
      assertThat(http.get("/metrics").body()).contains("bloomreader_snapshot_version{");

      process.destroy(); // SIGTERM, as the kubelet sends
      assertThat(process.waitFor(20, TimeUnit.SECONDS)).as("stopped after SIGTERM").isTrue();
    } finally {
      process.destroyForcibly();
    }
  }

  @Test
  void theJarRefusesANonLoopbackBindWithExitStatus2() throws Exception {
    Process process = start("--filter", "shop/ids", "--bind-address", "0.0.0.0");
    try {
      assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(process.exitValue()).isEqualTo(2);
      String stderr = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(stderr).contains("not a loopback address").contains("--allow-non-loopback");
    } finally {
      process.destroyForcibly();
    }
  }

  private static Process start(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-jar");
    command.add(ownJar().toString());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("KUBECONFIG", KubeCluster.shared().kubeconfig().toString());
    builder.environment().keySet().removeIf(name -> name.startsWith("BLOOM_LOOKUP_"));
    return builder.start();
  }

  /** Reads the process's log until the line naming the address it serves on. */
  private static Matcher waitFor(Process process, List<String> log) {
    try {
      BufferedReader lines =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        log.add(line);
        Matcher m = SERVING.matcher(line);
        if (m.find()) {
          // Keep draining the log so the process never blocks on a full pipe.
          Thread drain =
              new Thread(
                  () -> {
                    try {
                      while (lines.readLine() != null) {
                        // discarded
                      }
                    } catch (IOException e) {
                      // process gone
                    }
                  });
          drain.setDaemon(true);
          drain.start();
          return m;
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    throw new AssertionError("the sidecar ended without serving: " + String.join("\n", log));
  }

  private static Path ownJar() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("target"))) {
      List<Path> jars =
          files
              .filter(p -> p.getFileName().toString().startsWith("bloom-lookup-sidecar-"))
              .filter(p -> p.getFileName().toString().matches(".*-SNAPSHOT\\.jar|.*[0-9]\\.jar"))
              .toList();
      assertThat(jars).as("this module's jar in target/").hasSize(1);
      return jars.get(0);
    }
  }
}
