package io.bloomoperator.lookup;

import static io.bloomoperator.lookup.LookupClient.present;
import static io.bloomoperator.lookup.LookupClient.version;
import static io.bloomoperator.lookup.LookupSidecarTest.config;
import static io.bloomoperator.lookup.LookupSidecarTest.keys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * File mode against a real kube-apiserver: the files a process of the pod reads without HTTP, read
 * the way the README's reader contract says (manifest, then the payload it names, size and SHA-256,
 * then the bytes as the protocol defines them), readable by other users, and rewritten at most once
 * per interval while the HTTP answers follow every version at once.
 */
@RealKubernetes
class FileModeTest {

  private static final Duration READY = Duration.ofSeconds(20);
  private static final Duration INTERVAL = Duration.ofSeconds(6);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aProcessOfThePodReadsEachVersionFromTheFilesAtMostOncePerInterval(
      KubernetesClient client, TestNamespace ns, @TempDir Path shared) throws Exception {
    List<String> v1 = keys("v1", 2_000);
    List<String> v2 = keys("v2", 2_000);
    List<String> v3 = keys("v3", 2_000);
    SnapshotPublisher publisher = new SnapshotPublisher(client, ns.name(), "ids");
    publisher.publish(TestKeys.stringFilter(10_000, v1), v1.size(), 1);

    Set<String> payloadsSeen = ConcurrentHashMap.newKeySet();
    ScheduledExecutorService watch = Executors.newSingleThreadScheduledExecutor();
    try (LookupSidecar sidecar =
        LookupSidecar.start(
            config(
                "--filter",
                ns.name() + "/ids:String",
                "--local-cache-dir",
                shared.toString(),
                "--file-mode",
                "--file-interval",
                INTERVAL.toSeconds() + "s"),
            client,
            Map.of())) {
      watch.scheduleAtFixedRate(
          () -> payloadsSeen.addAll(payloads(shared)), 0, 20, TimeUnit.MILLISECONDS);
      LookupClient http = new LookupClient(sidecar.address());
      await().atMost(READY).until(() -> http.get("/readyz").statusCode() == 200);
      await().atMost(READY).until(() -> fileVersion(shared, ns.name()) == 1);
      long firstWrite = System.nanoTime();
      java.nio.file.attribute.FileTime firstCommit =
          Files.getLastModifiedTime(manifestFile(shared, ns.name()));
      BloomFilterBits fromFile = readAsAnotherProcessWould(shared, ns.name());
      assertThat(v1).allMatch(fromFile::mightContainString);

      // Two versions within the interval: HTTP serves each at once, the file waits, and only the
      // newest of them is written when the interval has passed.
      publisher.publish(TestKeys.stringFilter(10_000, v1, v2), v1.size() + v2.size(), 2);
      await().atMost(READY).until(() -> version(http.contains("ids", "x")) == 2);
      assertThat(present(http.contains("ids", v2.get(0)))).isTrue();
      publisher.publish(TestKeys.stringFilter(10_000, v1, v2, v3), 6_000, 3);
      await().atMost(READY).until(() -> version(http.contains("ids", "x")) == 3);
      long servedV3 = System.nanoTime();
      if (Duration.ofNanos(servedV3 - firstWrite).compareTo(INTERVAL.minusSeconds(1)) < 0) {
        // Still within the interval (the usual case): the file is the first version yet.
        assertThat(fileVersion(shared, ns.name())).isEqualTo(1);
      }

      await()
          .atMost(INTERVAL.plus(READY))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> fileVersion(shared, ns.name()) == 3);
      // Measured between the two commits (manifest renames): the interval runs from the start of a
      // write, so the payload writes' difference (milliseconds for these sizes) is allowed for.
      Duration betweenCommits =
          Duration.between(
              firstCommit.toInstant(),
              Files.getLastModifiedTime(manifestFile(shared, ns.name())).toInstant());
      assertThat(betweenCommits).isGreaterThanOrEqualTo(INTERVAL.minusMillis(250));
      BloomFilterBits third = readAsAnotherProcessWould(shared, ns.name());
      assertThat(Stream.of(v1, v2, v3).flatMap(List::stream)).allMatch(third::mightContainString);
      // The version served in between was never written, and the old payload is gone.
      assertThat(payloadsSeen).noneMatch(name -> name.contains(".v2.payload"));
      assertThat(payloads(shared)).containsExactly(ns.name() + ".ids.v3.payload");
    } finally {
      watch.shutdownNow();
    }

    // A restarted sidecar serves the shared file at once (it is also the local snapshot).
    try (LookupSidecar again =
        LookupSidecar.start(
            config(
                "--filter",
                ns.name() + "/ids:String",
                "--local-cache-dir",
                shared.toString(),
                "--file-mode"),
            client,
            Map.of())) {
      assertThat(version(new LookupClient(again.address()).contains("ids", "x"))).isEqualTo(3);
    }
  }

  @Test
  void fileModeNeedsADirectoryAndHeapMode() {
    assertThatThrownBy(() -> config("--filter", "a/b", "--file-mode"))
        .hasMessageContaining("--file-mode needs --local-cache-dir");
    assertThatThrownBy(
            () ->
                config(
                    "--filter",
                    "a/b",
                    "--local-cache-dir",
                    "/tmp/x",
                    "--file-mode",
                    "--memory-mapped"))
        .hasMessageContaining("--file-mode with --memory-mapped");
    SidecarConfig defaults =
        config("--filter", "a/b", "--local-cache-dir", "/tmp/x", "--file-mode");
    assertThat(defaults.fileInterval()).isEqualTo(SidecarConfig.DEFAULT_FILE_INTERVAL);
    assertThat(config("--filter", "a/b").fileMode()).isFalse();
  }

  /**
   * What a process of the pod does (the README's contract): the manifest file, the payload it names
   * in the same directory, readable by others, its size and SHA-256 against the manifest, then its
   * bytes as the protocol defines them.
   */
  private static BloomFilterBits readAsAnotherProcessWould(Path dir, String namespace)
      throws Exception {
    JsonNode root = JSON.readTree(dir.resolve(namespace + ".ids.manifest.json").toFile());
    Path payload = dir.resolve(Path.of(root.path("payloadFile").asText()).getFileName());
    Manifest manifest = Manifest.fromJson(root.path("manifestJson").asText());
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(payload)))
        .isEqualTo("rw-r--r--");
    assertThat(
            PosixFilePermissions.toString(
                Files.getPosixFilePermissions(dir.resolve(namespace + ".ids.manifest.json"))))
        .isEqualTo("rw-r--r--");
    assertThat(Files.size(payload)).isEqualTo(manifest.totalBytes());
    assertThat(
            HexFormat.of()
                .formatHex(
                    MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(payload))))
        .isEqualTo(manifest.sha256());
    try (InputStream in = Files.newInputStream(payload)) {
      return SnapshotDecoder.decodeWhole(manifest, in);
    }
  }

  private static Path manifestFile(Path dir, String namespace) {
    return dir.resolve(namespace + ".ids.manifest.json");
  }

  private static long fileVersion(Path dir, String namespace) {
    Path file = manifestFile(dir, namespace);
    try {
      return JSON.readTree(file.toFile()).path("manifest").path("version").asLong(-1);
    } catch (Exception e) {
      return -1;
    }
  }

  private static List<String> payloads(Path dir) {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .filter(n -> n.endsWith(".payload"))
          .sorted()
          .toList();
    } catch (Exception e) {
      return List.of();
    }
  }
}
