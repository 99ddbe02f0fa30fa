package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.bloomoperator.testing.RealKubernetesExtension;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The multi-platform image ({@code operator/target/bloom-operator-image-multiarch.tar}, built by
 * {@code bash hack/build-image.sh --multiarch} or {@code -Pmultiarch}; docs/image.md, "Platforms"),
 * checked by its structure as a registry and a runtime on each platform would read it: an image
 * index of linux/amd64 and linux/arm64, each image with the same configuration and application
 * layers as the single-platform image {@link OperatorImageTest} runs, and a Java runtime whose
 * every ELF file is built for its platform and finds every library it needs in the image. The arm64
 * image is never run here (no arm64 machine or emulator); the amd64 one, built the same way from
 * fetched packages, is.
 *
 * <p>Not named *Test: only the multiarch profile builds the tarball, and it adds this class to the
 * image-tests execution; the tag keeps it out of the unit tests even when named with -Dtest.
 */
@Tag("image")
class MultiArchImageIT {

  static final String TARBALL = "operator/target/bloom-operator-image-multiarch.tar";

  /** The platforms, each with its ELF e_machine and the loader's default directories there. */
  private static final Map<String, Platform> PLATFORMS =
      Map.of(
          "linux/amd64", new Platform("amd64", 62, "x86_64-linux-gnu"),
          "linux/arm64", new Platform("arm64", 183, "aarch64-linux-gnu"));

  private record Platform(String architecture, int elfMachine, String triplet) {
    /** Where glibc's loader looks for a library no RPATH/RUNPATH names, without ld.so.cache. */
    List<String> defaultDirs() {
      return List.of("lib/" + triplet, "usr/lib/" + triplet, "lib", "usr/lib");
    }
  }

  private static final Pattern NEEDED = Pattern.compile("\\(NEEDED\\)\\s+Shared library: \\[(.+)]");
  private static final Pattern PATHS =
      Pattern.compile("\\((?:RPATH|RUNPATH)\\)\\s+Library r(?:un)?path: \\[(.+)]");
  private static final Pattern INTERPRETER =
      Pattern.compile("Requesting program interpreter: (.+)]");

  private static Path work;
  private static OperatorImage multiArch;
  private static OperatorImage single;
  private static final Map<String, Path> rootfs = new TreeMap<>();

  @BeforeAll
  static void pushAndUnpack() throws Exception {
    work = RealKubernetesExtension.repoRoot().resolve("operator/target/multiarch-image-test");
    Files.createDirectories(work);
    multiArch =
        OperatorImage.push(
            work.resolve("multiarch"),
            TARBALL,
            "bloom-operator",
            "`bash hack/build-image.sh --multiarch` builds it (or -Pmultiarch on a verify)");
    single = OperatorImage.push(work.resolve("single"));
    for (String platform : PLATFORMS.keySet()) {
      rootfs.put(
          platform,
          multiArch.unpack(work.resolve("rootfs-" + platform.replace('/', '-')), platform));
    }
  }

  @AfterAll
  static void stopRegistries() {
    if (multiArch != null) {
      multiArch.close();
    }
    if (single != null) {
      single.close();
    }
  }

  @Test
  void indexListsLinuxAmd64AndLinuxArm64() throws Exception {
    JsonNode index = multiArch.manifest();
    assertThat(index.path("mediaType").asText())
        .isEqualTo("application/vnd.oci.image.index.v1+json");
    Map<String, String> listed = new TreeMap<>();
    for (JsonNode m : index.path("manifests")) {
      JsonNode p = m.path("platform");
      listed.put(
          p.path("os").asText() + "/" + p.path("architecture").asText(),
          m.path("mediaType").asText());
    }
    assertThat(listed)
        .containsOnlyKeys(PLATFORMS.keySet())
        .allSatisfy(
            (platform, type) ->
                assertThat(type).isEqualTo("application/vnd.oci.image.manifest.v1+json"));
    // Published under the same name as the single-platform image.
    assertThat(multiArch.reference()).isEqualTo(single.reference());
  }

  /**
   * Every platform runs the same operator the same way: one container configuration (entrypoint,
   * user, working directory, environment, port, labels) and the same application layers as the
   * image OperatorImageTest starts; only one layer, the Java runtime (Jib's extra-directory layer),
   * differs, at the same position on every platform.
   */
  @Test
  void platformsShareConfigurationAndApplicationLayers() throws Exception {
    JsonNode singleConfig = single.config();
    List<String> singleLayers = layerDigests(single.manifest());
    Set<Integer> runtimePositions = new HashSet<>();
    Map<String, List<String>> platformLayers = new TreeMap<>();
    for (Map.Entry<String, Platform> e : PLATFORMS.entrySet()) {
      JsonNode config = multiArch.config(e.getKey());
      assertThat(config.path("os").asText()).isEqualTo("linux");
      assertThat(config.path("architecture").asText()).isEqualTo(e.getValue().architecture());
      assertThat(config.path("created").asText()).isEqualTo("1970-01-01T00:00:00Z");
      assertThat(config.path("config")).as(e.getKey()).isEqualTo(singleConfig.path("config"));

      List<String> layers = layerDigests(multiArch.manifest(e.getKey()));
      assertThat(layers).as(e.getKey() + " layers").hasSameSizeAs(singleLayers);
      List<Integer> differing =
          IntStream.range(0, layers.size())
              .filter(i -> !layers.get(i).equals(singleLayers.get(i)))
              .boxed()
              .toList();
      // amd64's runtime may even equal the single image's, when the JDKs and libraries do.
      assertThat(differing)
          .as(e.getKey() + ": layers other than the single image's")
          .hasSizeLessThanOrEqualTo(1);
      runtimePositions.addAll(differing);
      platformLayers.put(e.getKey(), layers);
    }
    assertThat(runtimePositions).as("position of the runtime layer").hasSize(1);
    int runtime = runtimePositions.iterator().next();
    assertThat(platformLayers.values().stream().map(l -> l.get(runtime)).distinct())
        .as("one runtime layer per platform")
        .hasSize(PLATFORMS.size());
  }

  /**
   * What a loader on each platform needs, read from the ELF files (the arm64 image cannot run
   * here): every ELF file of the image is of the platform's machine (e_machine 62 x86-64, 183
   * AArch64), java's program interpreter is in the image and executable, and every library named
   * NEEDED by java, libjvm.so and everything else is in the runtime itself or where the loader
   * looks.
   */
  @Test
  void everyPlatformsBinariesAreItsOwnAndFindTheirLibraries() throws Exception {
    for (Map.Entry<String, Platform> e : PLATFORMS.entrySet()) {
      // Real path: the library search below compares paths it resolves with toRealPath.
      Path root = rootfs.get(e.getKey()).toRealPath();
      Platform platform = e.getValue();
      Path java = root.resolve("opt/java/bin/java");
      assertThat(elfMachine(java)).as(e.getKey() + " java").isEqualTo(platform.elfMachine());
      assertThat(elfMachine(root.resolve("opt/java/lib/server/libjvm.so")))
          .isEqualTo(platform.elfMachine());

      List<Path> elves;
      try (Stream<Path> files = Files.walk(root)) {
        elves = files.filter(Files::isRegularFile).filter(MultiArchImageIT::isElf).toList();
      }
      assertThat(elves).hasSizeGreaterThan(20);
      for (Path f : elves) {
        assertThat(elfMachine(f))
            .as(root.relativize(f).toString())
            .isEqualTo(platform.elfMachine());
      }

      String interpreter =
          readelf("-l", java)
              .lines()
              .map(INTERPRETER::matcher)
              .filter(Matcher::find)
              .map(m -> m.group(1))
              .findFirst()
              .orElseThrow();
      Path loader = root.resolve(interpreter.substring(1));
      assertThat(loader).as(e.getKey() + " interpreter " + interpreter).isRegularFile();
      assertThat(Files.getPosixFilePermissions(loader))
          .contains(PosixFilePermission.OTHERS_EXECUTE);
      assertThat(elfMachine(loader)).isEqualTo(platform.elfMachine());

      Map<String, String> unresolved = unresolvedLibraries(root, platform, interpreter);
      assertThat(unresolved).as(e.getKey() + ": NEEDED library -> needed by").isEmpty();

      assertThat(root.resolve("bin/sh")).doesNotExist();
      assertThat(root.resolve("usr/bin")).doesNotExist();
      assertThat(root.resolve("opt/java/lib/security/cacerts")).isRegularFile();
      assertThat(root.resolve("etc/passwd")).isRegularFile();
    }
  }

  /**
   * One Java for every platform: the same JDK update, module list and library package versions (the
   * runtimes' release files and packages.txt), and the amd64 runtime, built the same way from
   * fetched packages as the arm64 one, starts as the image's user with nothing but the image.
   */
  @Test
  void platformsCarryTheSameJavaAndTheAmd64OneRuns() throws Exception {
    Map<String, String> releases = new TreeMap<>();
    Map<String, String> packages = new TreeMap<>();
    for (String platform : PLATFORMS.keySet()) {
      Path root = rootfs.get(platform);
      releases.put(platform, Files.readString(root.resolve("opt/java/release")));
      packages.put(
          platform, Files.readString(root.resolve("usr/share/doc/java-rootfs/packages.txt")));
    }
    assertThat(new HashSet<>(releases.values())).as("opt/java/release").hasSize(1);
    assertThat(new HashSet<>(packages.values())).as("packages.txt").hasSize(1);
    String release = releases.get("linux/arm64");
    Set<String> modules = new TreeSet<>(List.of(property(release, "MODULES").split(" ")));
    assertThat(modules).contains("java.base", "jdk.crypto.ec");

    Path amd64 = rootfs.get("linux/amd64");
    JsonNode config = multiArch.config("linux/amd64");
    String version =
        OperatorImage.run(
            OperatorImage.inSandbox(amd64, config, List.of("/opt/java/bin/java", "-version")));
    assertThat(version).contains(property(release, "JAVA_VERSION"));
    String listed =
        OperatorImage.run(
            OperatorImage.inSandbox(
                amd64, config, List.of("/opt/java/bin/java", "--list-modules")));
    Set<String> present =
        listed
            .lines()
            .map(l -> l.replaceFirst("@.*", "").trim())
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(present).isEqualTo(modules);
  }

  /**
   * NEEDED sonames (of every ELF file in the image, and of the libraries they lead to) that the
   * image does not hold, each with an object that needs it. Found as glibc's loader would without
   * an ld.so.cache: the object's own RPATH/RUNPATH ($ORIGIN expanded), java's (the executable's
   * RPATH applies to everything it loads), a library the JVM has already loaded from the runtime's
   * lib/ (the JDK's own libraries name libjvm.so and libjava.so), then the platform's default
   * directories.
   */
  private static Map<String, String> unresolvedLibraries(
      Path root, Platform platform, String interpreter) throws IOException, InterruptedException {
    Path java = root.resolve("opt/java/bin/java");
    List<Path> executableDirs = searchPaths(root, java);
    Set<String> runtimeOwn;
    try (Stream<Path> files = Files.walk(root.resolve("opt/java/lib"))) {
      runtimeOwn =
          files
              .filter(Files::isRegularFile)
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith(".so"))
              .collect(Collectors.toSet());
    }
    String loaderName = Path.of(interpreter).getFileName().toString();
    Map<String, String> unresolved = new LinkedHashMap<>();
    Deque<Path> queue = new ArrayDeque<>();
    try (Stream<Path> files = Files.walk(root.resolve("opt/java"))) {
      files.filter(Files::isRegularFile).filter(MultiArchImageIT::isElf).forEach(queue::add);
    }
    Set<Path> visited = new HashSet<>();
    while (!queue.isEmpty()) {
      Path object = queue.poll().toRealPath();
      if (!visited.add(object)) {
        continue;
      }
      String dynamic = readelf("-d", object);
      List<Path> dirs = new ArrayList<>(searchPaths(root, object));
      dirs.addAll(executableDirs);
      platform.defaultDirs().forEach(d -> dirs.add(root.resolve(d)));
      Matcher m = NEEDED.matcher(dynamic);
      while (m.find()) {
        String soname = m.group(1);
        if (soname.equals(loaderName)) {
          continue; // the loader itself, already mapped at the interpreter's path
        }
        Path found =
            dirs.stream()
                .map(d -> d.resolve(soname))
                .filter(Files::isRegularFile)
                .findFirst()
                .orElse(null);
        if (found != null) {
          queue.add(found);
        } else if (!runtimeOwn.contains(soname)) {
          unresolved.putIfAbsent(soname, root.relativize(object).toString());
        }
      }
    }
    return unresolved;
  }

  /** The object's RPATH/RUNPATH directories inside the image, $ORIGIN expanded. */
  private static List<Path> searchPaths(Path root, Path object)
      throws IOException, InterruptedException {
    List<Path> dirs = new ArrayList<>();
    Matcher m = PATHS.matcher(readelf("-d", object));
    while (m.find()) {
      for (String entry : m.group(1).split(":")) {
        String expanded = entry.replace("$ORIGIN", "/" + root.relativize(object.getParent()));
        dirs.add(root.resolve(expanded.substring(1)).normalize());
      }
    }
    return dirs;
  }

  private static String readelf(String option, Path file) throws IOException, InterruptedException {
    // binutils' readelf reads any architecture's ELF; LC_ALL=C keeps its labels in English.
    return OperatorImage.run(
        List.of("env", "LC_ALL=C", "readelf", "--wide", option, file.toString()));
  }

  private static boolean isElf(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] magic = in.readNBytes(4);
      return magic.length == 4
          && magic[0] == 0x7f
          && magic[1] == 'E'
          && magic[2] == 'L'
          && magic[3] == 'F';
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * e_machine of a 64-bit little-endian ELF file, read from its header (offset 18), not from a
   * tool: 62 x86-64, 183 AArch64.
   */
  private static int elfMachine(Path file) throws IOException {
    byte[] header;
    try (InputStream in = Files.newInputStream(file)) {
      header = in.readNBytes(20);
    }
    assertThat(header).as(file + " ELF header").hasSize(20);
    assertThat(header[4]).as(file + " EI_CLASS (64-bit)").isEqualTo((byte) 2);
    assertThat(header[5]).as(file + " EI_DATA (little-endian)").isEqualTo((byte) 1);
    return (header[18] & 0xff) | (header[19] & 0xff) << 8;
  }

  /** A KEY="VALUE" line of a JDK release file. */
  private static String property(String release, String key) {
    Matcher m = Pattern.compile("(?m)^" + key + "=\"(.*)\"$").matcher(release);
    assertThat(m.find()).as(key + " in release").isTrue();
    return m.group(1);
  }

  private static List<String> layerDigests(JsonNode manifest) {
    List<String> digests = new ArrayList<>();
    manifest.path("layers").forEach(l -> digests.add(l.path("digest").asText()));
    return digests;
  }
}
