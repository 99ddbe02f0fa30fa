package io.bloomoperator.bench;

import io.bloomoperator.OperatorMain;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The operator in a JVM of its own ({@link OperatorMain#main}, as in its pod), so a benchmark can
 * report its CPU and memory as process figures apart from the readers in the benchmark's JVM: CPU
 * from {@code /proc/<pid>/stat}, resident memory from {@code /proc/<pid>/status}, and its own
 * metrics from its {@code /metrics} endpoint. It reads the cluster from {@code kubeconfig} and its
 * settings from {@code env}; its output goes to {@code log}.
 */
final class OperatorProcess implements AutoCloseable {

  /** Linux's USER_HZ, the unit of utime and stime in /proc/<pid>/stat. */
  private static final double TICKS_PER_SECOND = 100;

  private final Process process;
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

  private OperatorProcess(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  static OperatorProcess start(
      Path kubeconfig, Map<String, String> env, List<String> jvmOptions, Path log)
      throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.addAll(
        List.of("-cp", System.getProperty("java.class.path"), OperatorMain.class.getName()));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    builder.environment().putAll(env);
    builder.environment().put("KUBECONFIG", kubeconfig.toString());
    builder.environment().put("BLOOM_HTTP_PORT", Integer.toString(port));
    OperatorProcess started = new OperatorProcess(builder.start(), port);
    Runtime.getRuntime().addShutdownHook(new Thread(started::close, "operator-process-stop"));
    return started;
  }

  long pid() {
    return process.pid();
  }

  /** User + system CPU the process used so far, in seconds. */
  double cpuSeconds() {
    String stat = read("stat");
    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // After the command: state is field 3, utime field 14 and stime field 15 (proc(5)).
    return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
  }

  /** {@code VmRSS} (resident now) or {@code VmHWM} (its peak) from /proc/<pid>/status, in bytes. */
  long memory(String field) {
    for (String line : read("status").split("\n")) {
      if (line.startsWith(field + ":")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
      }
    }
    return -1;
  }

  /** The sum of every sample of metric {@code name} on its /metrics (all labels), or NaN. */
  double metric(String name) {
    String body;
    try {
      body =
          http.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
    } catch (IOException e) {
      return Double.NaN;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Double.NaN;
    }
    double sum = 0;
    boolean found = false;
    for (String line : body.split("\n")) {
      if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        found = true;
      }
    }
    return found ? sum : Double.NaN;
  }

  private String read(String file) {
    try {
      return Files.readString(Path.of("/proc", Long.toString(process.pid()), file));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
