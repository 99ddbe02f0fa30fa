package io.bloomoperator.testing.servers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.stream.Stream;

/** Finding, running and stopping the server packages' programs for the test servers. */
final class ServerProcesses {

  private static final List<String> SEARCH_PATH =
      List.of("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin");

  private ServerProcesses() {}

  /**
   * A program in the usual system directories or on the PATH.
   *
   * @param install what to install when it is missing, for the failure message
   * @throws IllegalStateException when it is missing: a test needing it fails, never skips
   */
  static Path find(String name, String install) {
    String pathEnv = System.getenv("PATH");
    Stream<String> dirs =
        Stream.concat(
            SEARCH_PATH.stream(),
            pathEnv == null ? Stream.empty() : Stream.of(pathEnv.split(File.pathSeparator)));
    return dirs.map(d -> Path.of(d, name))
        .filter(Files::isExecutable)
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    name + " not found in " + SEARCH_PATH + " or on the PATH; " + install));
  }

  /**
   * Runs a command in {@code dir} and returns its output (stdout and stderr).
   *
   * @throws IllegalStateException with the output when it fails or runs over two minutes
   */
  static String run(Path dir, String... command) {
    try {
      Process process =
          new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
      byte[] output = process.getInputStream().readAllBytes();
      if (!process.waitFor(120, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IllegalStateException("timed out: " + String.join(" ", command));
      }
      String text = new String(output, StandardCharsets.UTF_8);
      if (process.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " exited with " + process.exitValue() + ":\n" + text);
      }
      return text;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot run " + command[0], e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** SIGTERM, then SIGKILL if the process has not exited within {@code graceSeconds}. */
  static void stop(Process process, long graceSeconds) {
    process.destroy();
    try {
      if (!process.waitFor(graceSeconds, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Starts a server on a free port of 127.0.0.1, with up to two more tries on new ports: a port
   * found free can be taken by another process before the server binds it.
   *
   * @param startOn starts the server on the given port, throwing IllegalStateException on failure
   */
  static <T> T startOnFreePort(IntFunction<T> startOn) {
    IllegalStateException last = null;
    for (int attempt = 1; attempt <= 3; attempt++) {
      try {
        return startOn.apply(freePort());
      } catch (IllegalStateException e) {
        last = e;
      }
    }
    throw last;
  }

  /** Sleeps while waiting for {@code server} to come up; interruption becomes a failure. */
  static void sleep(long millis, String server) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for " + server, e);
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes a server's temporary directory; one left behind is harmless. */
  static void deleteTree(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // Left behind.
    }
  }
}
