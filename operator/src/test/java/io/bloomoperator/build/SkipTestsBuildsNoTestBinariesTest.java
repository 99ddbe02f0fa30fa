package io.bloomoperator.build;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The root pom's wiring of the test binaries (kube-apiserver, etcd, helm, crane: minutes of Go
 * compilation): `mvn package -DskipTests`, the newcomer's way to the jar, builds none of them,
 * while a build that runs tests still does. Runs the root project's validate phase (where those
 * builds are bound) offline in a nested Maven, with a `go` on PATH that only records that it was
 * called and with empty tool caches, so every build script would reach for Go.
 */
class SkipTestsBuildsNoTestBinariesTest {

  @Test
  void skipTestsBuildsNoTestBinaries(@TempDir Path tmp) throws Exception {
    Result result = validate(tmp, "-DskipTests");
    assertThat(result.exitCode()).as(result.output()).isZero();
    assertThat(result.goCalls()).as(result.output()).isEmpty();
  }

  @Test
  void testsStillBuildTheTestBinaries(@TempDir Path tmp) throws Exception {
    // The servers are not this test's subject (and would be installed as root).
    Result result = validate(tmp, "-DskipTestPrereqs");
    assertThat(result.goCalls()).as(result.output()).isNotEmpty();
  }

  private record Result(int exitCode, String output, List<String> goCalls) {}

  private static Result validate(Path tmp, String flag) throws IOException, InterruptedException {
    Path bin = Files.createDirectories(tmp.resolve("bin"));
    Path calls = tmp.resolve("go-calls");
    Files.createFile(calls);
    Path go = bin.resolve("go");
    Files.writeString(
        go, "#!/bin/sh\necho \"go $*\" >> '" + calls + "'\nexit 1\n", StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(go, PosixFilePermissions.fromString("rwxr-xr-x"));

    List<String> command = new ArrayList<>(List.of("mvn", "-B", "-o", "-N", flag, "validate"));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(RealKubernetesExtension.repoRoot().toFile())
            .redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(k -> k.startsWith("BLOOM_") || k.startsWith("KUBE"));
    env.put("PATH", bin + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    env.put("KUBE_API_TEST_DIR", tmp.resolve("kubeapitest").toString());
    env.put("BLOOM_HELM_DIR", tmp.resolve("helm").toString());
    env.put("BLOOM_TOOLS_DIR", tmp.resolve("tools").toString());
    env.put("KUBE_BINARIES_WORK", tmp.resolve("kube-src").toString());
    env.put("HELM_BUILD_WORK", tmp.resolve("helm-src").toString());
    Process p = builder.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(180, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("mvn validate did not finish:\n" + output);
    }
    return new Result(p.exitValue(), output, Files.readAllLines(calls));
  }
}
