package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What sidecar-lib brings an application is exactly its runtime classpath as Maven resolves it
 * (target/runtime-classpath.txt, written by the dependency plugin, see the pom): the JDK HTTP
 * client backend and 9 of the 22 model modules, no Vert.x or Netty. That classpath alone must be
 * enough to load a snapshot from a real API server, which proves the pom's exclusions: this
 * module's other tests run with test-scoped extras (RBAC and CRD models for the harness) that an
 * application does not get.
 */
@RealKubernetes
class ApplicationClasspathTest {

  /** Written by maven-dependency-plugin:build-classpath (includeScope runtime). */
  private static final Path RUNTIME_CLASSPATH = Path.of("target", "runtime-classpath.txt");

  @Test
  void bringsNoVertxNettyOrUnusedModels() throws Exception {
    List<String> jars =
        runtimeClasspath().stream().map(p -> Path.of(p).getFileName().toString()).toList();
    assertThat(jars).noneMatch(j -> j.contains("vertx") || j.contains("netty"));
    // core and common, and those the client itself loads (see bloom-snapshot-format's pom).
    assertThat(
            jars.stream()
                .filter(j -> j.startsWith("kubernetes-model-"))
                .map(j -> j.replaceFirst("-[0-9.]+\\.jar$", "")))
        .containsExactlyInAnyOrder(
            "kubernetes-model-core",
            "kubernetes-model-common",
            "kubernetes-model-apps",
            "kubernetes-model-batch",
            "kubernetes-model-certificates",
            "kubernetes-model-extensions",
            "kubernetes-model-autoscaling",
            "kubernetes-model-coordination",
            "kubernetes-model-node");
    assertThat(jars).anyMatch(j -> j.startsWith("kubernetes-httpclient-jdk-"));
  }

  @Test
  void loadsASnapshotWithTheApplicationClasspathOnly(
      KubernetesClient admin, TestNamespace ns, KubeCluster cluster) throws Exception {
    List<String> keys = TestKeys.strings("app", 2_000);
    new SnapshotPublisher(admin, ns.name(), "ids")
        .publish(TestKeys.stringFilter(2_000, keys), keys.size(), 1);

    List<String> classpath = new ArrayList<>();
    classpath.add(Path.of("target", "classes").toString());
    classpath.addAll(runtimeClasspath());
    // The probe class only; the test classes' dependencies stay off the child's class path.
    classpath.add(Path.of("target", "test-classes").toString());
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                String.join(File.pathSeparator, classpath),
                ApplicationClasspathProbe.class.getName(),
                cluster.kubeconfig().toString(),
                ns.name(),
                "ids",
                keys.get(0),
                keys.get(1999)));
    Process probe = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(probe.waitFor(90, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(probe.exitValue()).as(out).isZero();
    assertThat(out)
        .as(out)
        .contains("http client: io.fabric8.kubernetes.client.jdkhttp.")
        .contains(keys.get(0) + "=true", keys.get(1999) + "=true")
        .doesNotContain("NoClassDefFoundError", "ClassNotFoundException");
  }

  private static List<String> runtimeClasspath() throws Exception {
    assertThat(RUNTIME_CLASSPATH).as("run through Maven (process-test-resources)").isRegularFile();
    String text = Files.readString(RUNTIME_CLASSPATH, StandardCharsets.UTF_8).trim();
    // The test-classes entry of a test-jar dependency would not be an application's: none exist.
    return Arrays.stream(text.split(File.pathSeparator)).filter(s -> !s.isBlank()).toList();
  }
}
