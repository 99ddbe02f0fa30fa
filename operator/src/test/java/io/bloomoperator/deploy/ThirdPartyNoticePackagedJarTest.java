package io.bloomoperator.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The shaded jar (target/bloom-operator.jar, after package) ships THIRD-PARTY.txt, and that notice
 * lists exactly the third-party artifacts the jar bundles, each under a licence. What is bundled is
 * known two ways: Maven's runtime dependency list (target/bundled-artifacts.txt, what the shade
 * plugin includes; it also names artifacts built without Maven metadata, e.g. by Gradle) and the
 * META-INF/maven/.../pom.properties the shaded jar carries from each Maven-built dependency. A
 * dependency added or upgraded without its notice entry fails here, naming it.
 */
@Tag("packaged-jar")
class ThirdPartyNoticePackagedJarTest {

  private static final Path JAR = Path.of("target", "bloom-operator.jar");
  private static final Path NOTICE = Path.of("THIRD-PARTY.txt");
  private static final Path BUNDLED = Path.of("target", "bundled-artifacts.txt");
  private static final Pattern LICENCE = Pattern.compile("^License: ([^(]+?)\\s*(?:\\(.*)?$");
  private static final Pattern ENTRY = Pattern.compile("^  ([^\\s:]+):([^\\s:]+):([^\\s:]+)\\s*$");
  private static final Pattern POM_PROPERTIES =
      Pattern.compile("META-INF/maven/([^/]+)/([^/]+)/pom\\.properties");

  @Test
  void theJarShipsTheNoticeAndTheLicence() throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      assertThat(read(jar, "META-INF/THIRD-PARTY.txt")).isEqualTo(Files.readString(NOTICE));
      assertThat(read(jar, "META-INF/LICENSE"))
          .isEqualTo(Files.readString(Path.of("..", "LICENSE")));
    }
  }

  @Test
  void theNoticeListsExactlyWhatMavenBundles() throws IOException {
    Set<String> bundled = bundledByMaven();
    Set<String> listed = notice().keySet();
    assertThat(difference(bundled, listed))
        .as("bundled but not in %s: add each with its licence (from its POM)", NOTICE)
        .isEmpty();
    assertThat(difference(listed, bundled)).as("in %s but no longer bundled", NOTICE).isEmpty();
  }

  @Test
  void everyArtifactInTheJarIsListed() throws IOException {
    Set<String> listed = notice().keySet();
    Set<String> inJar = new TreeSet<>();
    try (JarFile jar = new JarFile(JAR.toFile())) {
      for (JarEntry entry : Collections.list(jar.entries())) {
        Matcher m = POM_PROPERTIES.matcher(entry.getName());
        if (m.matches() && !m.group(1).equals("io.bloomoperator")) {
          Properties p = new Properties();
          try (InputStream in = jar.getInputStream(entry)) {
            p.load(in);
          }
          inJar.add(
              p.getProperty("groupId")
                  + ":"
                  + p.getProperty("artifactId")
                  + ":"
                  + p.getProperty("version"));
        }
      }
    }
    assertThat(inJar).as("artifacts carrying Maven metadata in %s", JAR).isNotEmpty();
    assertThat(difference(inJar, listed)).as("in the jar but not in %s", NOTICE).isEmpty();
  }

  @Test
  void theJdbcDriversCarryTheirOwnLicences() throws IOException {
    Map<String, String> notice = notice();
    assertThat(licenceOf(notice, "org.postgresql:postgresql")).isEqualTo("BSD-2-Clause");
    assertThat(licenceOf(notice, "org.mariadb.jdbc:mariadb-java-client"))
        .isEqualTo("LGPL-2.1-or-later");
    assertThat(licenceOf(notice, "com.mysql:mysql-connector-j"))
        .isEqualTo("GPL-2.0-only WITH Universal-FOSS-exception-1.0");
  }

  /** Coordinates (group:artifact:version) to the SPDX identifier of the section they are in. */
  static Map<String, String> notice() throws IOException {
    Map<String, String> entries = new TreeMap<>();
    String licence = null;
    for (String line : Files.readAllLines(NOTICE, StandardCharsets.UTF_8)) {
      Matcher l = LICENCE.matcher(line);
      Matcher e = ENTRY.matcher(line);
      if (l.find()) {
        licence = l.group(1);
      } else if (e.matches()) {
        assertThat(licence).as("licence heading before %s", line).isNotNull();
        String key = e.group(1) + ":" + e.group(2) + ":" + e.group(3);
        assertThat(entries.put(key, licence)).as("listed twice: %s", key).isNull();
      }
    }
    return entries;
  }

  private static String licenceOf(Map<String, String> notice, String groupAndArtifact) {
    return notice.entrySet().stream()
        .filter(e -> e.getKey().startsWith(groupAndArtifact + ":"))
        .map(Map.Entry::getValue)
        .findFirst()
        .orElseThrow(() -> new AssertionError(groupAndArtifact + " not in the notice"));
  }

  /**
   * group:artifact:version of every runtime artifact, from the dependency plugin's list: lines "
   * group:artifact:jar[:classifier]:version:scope[ -- module ...]".
   */
  private static Set<String> bundledByMaven() throws IOException {
    Set<String> bundled = new TreeSet<>();
    for (String line : Files.readAllLines(BUNDLED, StandardCharsets.UTF_8)) {
      String trimmed = line.trim();
      if (trimmed.isEmpty() || !Character.isLetter(trimmed.charAt(0))) {
        continue;
      }
      String[] parts = trimmed.split("\\s+")[0].split(":");
      if (parts.length < 5 || parts[0].equals("io.bloomoperator")) {
        continue;
      }
      bundled.add(parts[0] + ":" + parts[1] + ":" + parts[parts.length - 2]);
    }
    assertThat(bundled).as("artifacts in %s", BUNDLED).isNotEmpty();
    return bundled;
  }

  private static Set<String> difference(Set<String> a, Set<String> b) {
    Set<String> d = new TreeSet<>(a);
    d.removeAll(b);
    return d;
  }

  private static String read(JarFile jar, String name) throws IOException {
    JarEntry entry = jar.getJarEntry(name);
    assertThat(entry).as("%s in %s", name, JAR).isNotNull();
    try (InputStream in = jar.getInputStream(entry)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
