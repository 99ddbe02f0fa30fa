package io.bloomoperator.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * An image tarball the build made (Jib: an OCI image layout; by default the operator's, {@code
 * operator/target/bloom-operator-image.tar}), pushed to a throwaway {@code crane registry serve}
 * and read back through the registry API, as a cluster's runtime would pull it. Public for the
 * examples' image tests (the test-jar), which start their images the same way.
 */
public final class OperatorImage implements AutoCloseable {

  static final String TARBALL = "operator/target/bloom-operator-image.tar";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private final Crane crane;
  private final Crane.Registry registry;
  private final String reference;
  private final String pulled;

  private OperatorImage(Crane crane, Crane.Registry registry, String reference, String pulled) {
    this.crane = crane;
    this.registry = registry;
    this.reference = reference;
    this.pulled = pulled;
  }

  /**
   * Unpacks the tarball's OCI layout into {@code work} and pushes it to a new local registry.
   *
   * @throws IllegalStateException naming the command that builds the tarball when it is missing
   */
  static OperatorImage push(Path work) throws IOException, InterruptedException {
    return push(
        work,
        TARBALL,
        "bloom-operator",
        "`mvn verify` builds it before the image tests (pre-integration-test);"
            + " alone: `bash hack/build-image.sh`");
  }

  /**
   * Unpacks the OCI layout tarball {@code tarballPath} (relative to the repository) into {@code
   * work} and pushes it to a new local registry as {@code repository}: an image, or an image index
   * with its images.
   *
   * @param howToBuild what builds the tarball, for the message when it is missing
   */
  public static OperatorImage push(
      Path work, String tarballPath, String repository, String howToBuild)
      throws IOException, InterruptedException {
    Path tarball = RealKubernetesExtension.repoRoot().resolve(tarballPath);
    if (!Files.isRegularFile(tarball)) {
      throw new IllegalStateException(tarball + " is missing: " + howToBuild);
    }
    Path layout = work.resolve("layout");
    deleteTree(layout);
    Files.createDirectories(layout);
    run(List.of("tar", "-xf", tarball.toString(), "-C", layout.toString()));
    JsonNode index = JSON.readTree(layout.resolve("index.json").toFile());
    String reference =
        index
            .path("manifests")
            .get(0)
            .path("annotations")
            .path("org.opencontainers.image.ref.name")
            .asText();
    Crane crane = Crane.find();
    Crane.Registry registry = crane.serve();
    try {
      String tag = reference.substring(reference.lastIndexOf(':') + 1);
      String pulled = registry.host() + "/" + repository + ":" + tag;
      crane.run("push", layout.toString(), pulled);
      return new OperatorImage(crane, registry, reference, pulled);
    } catch (IOException | InterruptedException | RuntimeException e) {
      registry.close();
      throw e;
    }
  }

  /**
   * The reference the image was built as (its index's {@code org.opencontainers.image.ref.name}).
   */
  String reference() {
    return reference;
  }

  /** Downloads and digests every blob, as {@code crane validate --remote} does. */
  public void validate() throws IOException, InterruptedException {
    crane.run("validate", "--remote", pulled);
  }

  JsonNode manifest() throws IOException, InterruptedException {
    return JSON.readTree(crane.run("manifest", pulled));
  }

  public JsonNode config() throws IOException, InterruptedException {
    return JSON.readTree(crane.run("config", pulled));
  }

  /**
   * The image a runtime on {@code platform} ("linux/arm64") pulls when this is an image index:
   * {@code crane --platform} resolves the index as a runtime does, then validates every blob of
   * that image and returns its manifest.
   */
  JsonNode manifest(String platform) throws IOException, InterruptedException {
    crane.run("validate", "--remote", pulled, "--platform", platform);
    return JSON.readTree(crane.run("manifest", pulled, "--platform", platform));
  }

  /** The config of {@code platform}'s image; see {@link #manifest(String)}. */
  JsonNode config(String platform) throws IOException, InterruptedException {
    return JSON.readTree(crane.run("config", pulled, "--platform", platform));
  }

  /**
   * The image's filesystem in {@code dir}: its layers flattened in order by {@code crane export}
   * (whiteouts applied), then unpacked with their modes.
   */
  public Path unpack(Path dir) throws IOException, InterruptedException {
    return unpack(dir, List.of());
  }

  /** {@link #unpack(Path)} of {@code platform}'s image, when this is an image index. */
  Path unpack(Path dir, String platform) throws IOException, InterruptedException {
    return unpack(dir, List.of("--platform", platform));
  }

  private Path unpack(Path dir, List<String> platform) throws IOException, InterruptedException {
    deleteTree(dir);
    Files.createDirectories(dir);
    Path flat = dir.resolveSibling(dir.getFileName() + ".tar");
    List<String> export = new ArrayList<>(List.of("export", pulled, flat.toString()));
    export.addAll(platform);
    crane.run(export.toArray(String[]::new));
    run(
        List.of(
            "tar", "--warning=no-unknown-keyword", "-xpf", flat.toString(), "-C", dir.toString()));
    Files.delete(flat);
    return dir;
  }

  /**
   * {@code command} run in the unpacked image as a container runtime would: the image's filesystem
   * as the root (nothing of this machine's), as the image's user (in a user namespace, so no
   * privilege is needed), in its working directory, with its own /proc. The host's network is
   * shared, so the test API server on 127.0.0.1 is reachable.
   */
  public static List<String> inSandbox(Path rootfs, JsonNode config, List<String> command)
      throws IOException {
    String[] user = config.path("config").path("User").asText().split(":");
    String workingDir = config.path("config").path("WorkingDir").asText("/");
    // Mount points the runtime provides; the image rightly has none.
    Files.createDirectories(rootfs.resolve("proc"));
    List<String> sandboxed =
        new ArrayList<>(
            List.of(
                "unshare",
                "--user",
                "--map-user=" + user[0],
                "--map-group=" + user[1],
                "--mount",
                "--pid",
                "--fork",
                // SIGKILL of unshare (the test's kill) reaches the operator too.
                "--kill-child",
                "--mount-proc",
                "--root=" + rootfs,
                "--wd=" + workingDir));
    sandboxed.addAll(command);
    return sandboxed;
  }

  /** The image's entrypoint, from its {@link #config()}. */
  public static List<String> entrypoint(JsonNode config) {
    List<String> out = new ArrayList<>();
    config.path("config").path("Entrypoint").forEach(n -> out.add(n.asText()));
    return out;
  }

  /** The image's environment (NAME=value entries of its config), as a process's environment. */
  public static Map<String, String> environment(JsonNode config) {
    Map<String, String> env = new LinkedHashMap<>();
    for (JsonNode e : config.path("config").path("Env")) {
      String[] kv = e.asText().split("=", 2);
      env.put(kv[0], kv.length > 1 ? kv[1] : "");
    }
    return env;
  }

  /**
   * The kubeconfig with the files it names (CA, client certificate and key) inlined as data: inside
   * an unpacked image only the image's files exist.
   */
  public static JsonNode selfContainedKubeconfig(Path kubeconfig) throws IOException {
    JsonNode root = YAML.readTree(kubeconfig.toFile());
    for (JsonNode entry : root.findParents("server")) {
      inline((ObjectNode) entry, "certificate-authority");
    }
    for (JsonNode entry : root.findParents("client-key")) {
      inline((ObjectNode) entry, "client-certificate");
      inline((ObjectNode) entry, "client-key");
    }
    return root;
  }

  private static void inline(ObjectNode node, String field) throws IOException {
    if (node.hasNonNull(field)) {
      byte[] bytes = Files.readAllBytes(Path.of(node.remove(field).asText()));
      node.put(field + "-data", Base64.getEncoder().encodeToString(bytes));
    }
  }

  /** Runs {@code command} to completion; returns its output or throws with it. */
  static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(300, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", command) + " failed:\n" + out);
    }
    return out;
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    registry.close();
  }
}
