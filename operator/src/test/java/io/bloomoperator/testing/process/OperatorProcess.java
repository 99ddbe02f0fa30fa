package io.bloomoperator.testing.process;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The operator as it runs in a pod: the shaded jar ({@code operator/target/bloom-operator.jar},
 * built by {@code mvn package}) in its own JVM, configured only through environment variables and a
 * kubeconfig. Fault tests kill it with SIGKILL, which an in-process operator cannot simulate (its
 * threads, sockets and half-sent requests would survive).
 *
 * <p>Every incarnation appends to one log file, separated by a header line, so a failing run can be
 * read back in order.
 */
public final class OperatorProcess implements AutoCloseable {

  /** The line OperatorMain logs once its informers are synced and reconciles may run. */
  static final String STARTED_LINE = "bloom-operator started";

  private final Path jar;

  /** The whole command line instead of this JVM's java with the jar; null: the jar. */
  private final List<String> launcher;

  private final Path kubeconfig;
  private final Map<String, String> environment;
  private final List<String> jvmOptions;
  private final Path log;
  private Process process;
  private long logOffset;
  private int incarnations;

  /**
   * @param kubeconfig the cluster and credentials the operator uses
   * @param environment operator settings (BLOOM_*), on top of: no leader election, an ephemeral
   *     health port
   * @param log where the operator's output is appended
   */
  public OperatorProcess(Path kubeconfig, Map<String, String> environment, Path log) {
    // Two shared cores: a small heap and the serial collector keep start-up short.
    this(kubeconfig, environment, log, List.of("-Xmx256m", "-XX:+UseSerialGC"));
  }

  /**
   * @param jvmOptions the JVM's options (heap size, collector) instead of the default {@code
   *     -Xmx256m -XX:+UseSerialGC}
   */
  public OperatorProcess(
      Path kubeconfig, Map<String, String> environment, Path log, List<String> jvmOptions) {
    this(shadedJar(), null, kubeconfig, environment, log, jvmOptions);
  }

  private OperatorProcess(
      Path jar,
      List<String> launcher,
      Path kubeconfig,
      Map<String, String> environment,
      Path log,
      List<String> jvmOptions) {
    this.jar = jar;
    this.launcher = launcher == null ? null : List.copyOf(launcher);
    this.kubeconfig = kubeconfig;
    this.environment = Map.copyOf(environment);
    this.jvmOptions = List.copyOf(jvmOptions);
    this.log = log;
  }

  /**
   * The operator started by {@code command} as it stands (e.g. an image's entrypoint inside a
   * sandbox), with nothing of this JVM's environment: only {@code environment} and the settings
   * every incarnation gets.
   *
   * @param kubeconfig the kubeconfig path as the started process sees it
   */
  public static OperatorProcess ofCommand(
      List<String> command, Path kubeconfig, Map<String, String> environment, Path log) {
    return new OperatorProcess(null, command, kubeconfig, environment, log, List.of());
  }

  /** The operator's runnable jar; fails with the command that builds it when it is missing. */
  public static Path shadedJar() {
    Path jar = RealKubernetesExtension.repoRoot().resolve("operator/target/bloom-operator.jar");
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          jar
              + " is missing: fault tests run the packaged operator; run them with "
              + "`mvn -Pfaults -pl operator -am verify` (package runs before them)");
    }
    return jar;
  }

  /** Starts a new incarnation; the previous one must be dead. */
  public synchronized void start() {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("the operator is still running");
    }
    List<String> command = new ArrayList<>();
    if (launcher != null) {
      command.addAll(launcher);
    } else {
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.addAll(jvmOptions);
      command.addAll(List.of("-jar", jar.toString()));
    }
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    // Nothing of the test JVM's own configuration leaks into the operator.
    if (launcher != null) {
      env.clear();
    }
    env.keySet()
        .removeIf(k -> k.startsWith("BLOOM_") || k.startsWith("KUBE") || k.equals("POD_NAMESPACE"));
    Map<String, String> settings = new HashMap<>();
    settings.put("KUBECONFIG", kubeconfig.toString());
    settings.put("BLOOM_LEADER_ELECTION", "false");
    settings.put("BLOOM_HTTP_PORT", "0");
    settings.putAll(environment);
    env.putAll(settings);
    try {
      incarnations++;
      Files.writeString(
          log,
          "==== operator incarnation " + incarnations + " ====\n",
          StandardCharsets.UTF_8,
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
      logOffset = Files.size(log);
      builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Waits until this incarnation has logged that it started.
   *
   * @throws IllegalStateException if it exits or does not start in time
   */
  public void awaitStarted(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (logSinceStart().contains(STARTED_LINE)) {
        return;
      }
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "operator exited with " + process.exitValue() + "; log " + log);
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("operator did not start within " + timeout + "; log " + log);
  }

  /** What the current incarnation has logged so far. */
  public String logSinceStart() {
    try {
      byte[] all = Files.readAllBytes(log);
      int from = (int) Math.min(logOffset, all.length);
      return new String(all, from, all.length - from, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** SIGKILL (what {@link Process#destroyForcibly()} sends on Linux); returns once it is dead. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new IllegalStateException("operator survived SIGKILL for 30 s");
    }
  }

  /** The current incarnation's process id (for jstat, jcmd, /proc). */
  public long pid() {
    return process.pid();
  }

  /**
   * SIGSTOP: every thread freezes where it is, sockets stay open (a long GC pause, a frozen VM or
   * node); {@link #resume()} lets it go on. Returns once the signal was sent.
   */
  public void pause() throws InterruptedException {
    signal("STOP");
  }

  /** SIGCONT after {@link #pause()}. */
  public void resume() throws InterruptedException {
    signal("CONT");
  }

  private void signal(String name) throws InterruptedException {
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Waits up to {@code timeout} for the current incarnation to exit by itself.
   *
   * @return its exit code, or empty if it is still running
   */
  public java.util.OptionalInt awaitExit(Duration timeout) throws InterruptedException {
    if (process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      return java.util.OptionalInt.of(process.exitValue());
    }
    return java.util.OptionalInt.empty();
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  /** How many times the operator was started. */
  public int incarnations() {
    return incarnations;
  }

  public Path log() {
    return log;
  }

  @Override
  public void close() throws InterruptedException {
    if (isAlive()) {
      kill();
    }
  }
}
