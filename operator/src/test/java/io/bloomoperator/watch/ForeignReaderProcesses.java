package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Go and Python readers' tests run at once as two processes against servers this JVM set up
 * (the operator's tests of store chunks and of faults): {@code go test -run <test> ./kube/} in
 * sidecar-lib/go and {@code pytest <file>} in sidecar-lib/python's venv. The processes and this
 * side take turns through files in a directory: this side writes {@code s<N>.keys} (the version on
 * the first line, then a key and Java's answer per line; or one such file per role, {@code
 * s<N>.<role>.keys}) and {@code s<N>.published}; each reader writes {@code s<N>.go.seen} or {@code
 * s<N>.python.seen} once it has checked step N, and stops when this side writes {@code done}.
 */
public final class ForeignReaderProcesses implements AutoCloseable {

  /** The first step includes compiling the Go test binary and creating the Python venv. */
  public static final Duration FIRST_STEP = Duration.ofMinutes(6);

  private static final List<String> LANGUAGES = List.of("go", "python");

  private final Path dir;
  private final List<Process> processes = new ArrayList<>();

  private ForeignReaderProcesses(Path dir) {
    this.dir = dir;
  }

  /**
   * Starts Go test {@code goTest} (a regex for {@code -run}) and pytest file {@code pythonTest}
   * with {@code env} and {@code BLOOM_CLUSTER_DIR} = {@code dir}; their output goes to {@code
   * go.log} and {@code python.log} there.
   */
  public static ForeignReaderProcesses start(
      Path dir, String goTest, String pythonTest, Map<String, String> env) throws Exception {
    Path repo = RealKubernetesExtension.repoRoot();
    Path python = repo.resolve("sidecar-lib/python");
    PythonReaderClusterTest.ensureVenv(python, dir);
    ForeignReaderProcesses readers = new ForeignReaderProcesses(dir);
    readers.start(
        new ProcessBuilder("go", "test", "-count=1", "-v", "-run", goTest, "./kube/")
            .directory(repo.resolve("sidecar-lib/go").toFile()),
        env,
        "go");
    readers.start(
        new ProcessBuilder(
                python.resolve(".venv/bin/python").toString(),
                "-m",
                "pytest",
                "-q",
                "-rs",
                pythonTest)
            .directory(python.toFile()),
        env,
        "python");
    return readers;
  }

  private void start(ProcessBuilder builder, Map<String, String> env, String language)
      throws IOException {
    builder.environment().putAll(env);
    builder.environment().put("BLOOM_CLUSTER_DIR", dir.toString());
    processes.add(
        builder
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(language + ".log").toFile())
            .start());
  }

  /** Java's answers for step {@code step}: the version, then a key and 1/0 per line. */
  public void publishStep(int step, long version, List<String> keys, List<Boolean> answers)
      throws IOException {
    write(dir.resolve("s" + step + ".keys"), version, keys, answers);
    published(step);
  }

  /**
   * Java's answers for the readers of one role at step {@code step} ({@code s<N>.<role>.keys}, e.g.
   * the canary share's and the others'), announced by {@link #published}.
   */
  public void writeStep(
      int step, String role, long version, List<String> keys, List<Boolean> answers)
      throws IOException {
    write(dir.resolve("s" + step + "." + role + ".keys"), version, keys, answers);
  }

  /** Lets the readers check step {@code step}: its files are all written. */
  public void published(int step) throws IOException {
    Files.createFile(dir.resolve("s" + step + ".published"));
  }

  private static void write(Path file, long version, List<String> keys, List<Boolean> answers)
      throws IOException {
    List<String> lines = new ArrayList<>(keys.size() + 1);
    lines.add(Long.toString(version));
    for (int i = 0; i < keys.size(); i++) {
      lines.add(keys.get(i) + "\t" + (answers.get(i) ? "1" : "0"));
    }
    // Present and absent keys both: a filter answering all true would not pass.
    assertThat(answers).contains(true, false);
    Files.write(file, lines);
  }

  /** Waits until both readers have checked step {@code step}; fails if one exits or is late. */
  public void awaitSeen(int step, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    for (int i = 0; i < LANGUAGES.size(); i++) {
      String language = LANGUAGES.get(i);
      Process process = processes.get(i);
      while (!Files.exists(dir.resolve("s" + step + "." + language + ".seen"))) {
        if (!process.isAlive()) {
          throw new AssertionError(
              language
                  + " reader exited with "
                  + process.exitValue()
                  + " before checking step "
                  + step
                  + ":\n"
                  + log(language));
        }
        if (System.nanoTime() > deadline) {
          throw new AssertionError(
              language + " reader did not check step " + step + ":\n" + log(language));
        }
        Thread.sleep(50);
      }
    }
  }

  /** Lets the readers stop and checks that both tests ran and passed. */
  public void finish(Duration within) throws Exception {
    Files.createFile(dir.resolve("done"));
    for (int i = 0; i < LANGUAGES.size(); i++) {
      String language = LANGUAGES.get(i);
      Process process = processes.get(i);
      assertThat(process.waitFor(within.toSeconds(), TimeUnit.SECONDS)).isTrue();
      String log = log(language);
      assertThat(process.exitValue()).as(log).isZero();
      // A skip would also exit 0: the tests must have run.
      if (language.equals("go")) {
        assertThat(log).as(log).contains("--- PASS: Test").doesNotContain("SKIP");
      } else {
        assertThat(log).as(log).contains(" passed").doesNotContain("skipped");
      }
    }
  }

  /** What reader {@code language} ("go" or "python") printed so far. */
  public String log(String language) throws IOException {
    return Files.readString(dir.resolve(language + ".log"));
  }

  @Override
  public void close() {
    processes.forEach(Process::destroyForcibly);
  }
}
