package io.bloomoperator.deploy;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * go-containerregistry's {@code crane}, as built by {@code hack/build-crane.sh}: a registry client
 * (and, with {@code registry serve}, a registry) that reads images the way a container runtime's
 * puller does, so the image tests do not take the build tool's word for what it wrote.
 */
final class Crane {

  private static final String BUILD_SCRIPT = "hack/build-crane.sh";
  private static final Pattern SERVING = Pattern.compile("serving on port (\\d+)");

  private final Path binary;

  private Crane(Path binary) {
    this.binary = binary;
  }

  /** The binary; fails naming the build script when it is missing (never skips). */
  static Crane find() throws IOException, InterruptedException {
    // The script owns the version and the cache directory; --path builds nothing.
    Process p =
        new ProcessBuilder(
                "bash",
                RealKubernetesExtension.repoRoot().resolve(BUILD_SCRIPT).toString(),
                "--path")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(BUILD_SCRIPT + " --path failed: " + out);
    }
    Path binary = Path.of(out);
    if (!Files.isExecutable(binary)) {
      throw new IllegalStateException(
          "crane not found at "
              + binary
              + ". Build it with `bash "
              + BUILD_SCRIPT
              + "` (needs Go and the Go module proxy; `mvn verify` runs it in its validate phase).");
    }
    return new Crane(binary);
  }

  /** Runs crane; returns stdout, or throws with its output when it exits non-zero. */
  String run(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(binary.toString()));
    command.addAll(List.of(args));
    Path err = Files.createTempFile("crane-", ".err");
    try {
      Process p = new ProcessBuilder(command).redirectError(err.toFile()).start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(300, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("crane " + String.join(" ", args) + " timed out");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            "crane " + String.join(" ", args) + " failed: " + Files.readString(err));
      }
      return new String(out, StandardCharsets.UTF_8);
    } finally {
      Files.deleteIfExists(err);
    }
  }

  /**
   * An in-memory registry on a free loopback port ({@code crane registry serve}), so an image can
   * be pushed and pulled through the registry API without any network beyond this machine.
   */
  Registry serve() throws IOException {
    Process p =
        new ProcessBuilder(binary.toString(), "registry", "serve", "--address", "127.0.0.1:0")
            .redirectErrorStream(true)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = out.readLine()) != null) {
      Matcher m = SERVING.matcher(line);
      if (m.find()) {
        // Keep draining its log so it never blocks on a full pipe.
        Thread drain =
            new Thread(
                () -> {
                  try {
                    out.transferTo(java.io.Writer.nullWriter());
                  } catch (IOException e) {
                    // the registry was stopped
                  }
                },
                "crane-registry-log");
        drain.setDaemon(true);
        drain.start();
        return new Registry(p, "127.0.0.1:" + m.group(1));
      }
    }
    p.destroyForcibly();
    throw new IllegalStateException("crane registry serve exited without serving");
  }

  /** A running {@code crane registry serve}; {@link #close()} stops it. */
  record Registry(Process process, String host) implements AutoCloseable {
    @Override
    public void close() {
      process.destroyForcibly();
    }
  }
}
