package io.bloomoperator.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.watch.LiveBloomFilter;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.io.InputStream;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * The three library jars an application puts on its class or module path, as `package` built them
 * (this test runs after package, see the root pom's packaged-jar execution): each names its module
 * in its manifest, so the module path gives it a stable name instead of one derived from the file
 * name, and each comes with its sources and javadoc jars. This module's own jar is read from
 * target/; the other two are the jars this test's class path resolves them to (the reactor's
 * target/ or the local repository).
 */
@Tag("packaged-jar")
class LibraryJarsPackagedJarTest {

  @Test
  void everyLibraryJarNamesItsModule() throws Exception {
    assertModule(ownJar(), "io.bloomoperator.spring");
    assertModule(jarOf(LiveBloomFilter.class), "io.bloomoperator.sidecar");
    assertModule(jarOf(Manifest.class), "io.bloomoperator.snapshot.format");
  }

  @Test
  void everyLibraryJarHasItsSourcesAndJavadocJars() throws Exception {
    for (Path jar : List.of(ownJar(), jarOf(LiveBloomFilter.class), jarOf(Manifest.class))) {
      String base = jar.getFileName().toString().replaceFirst("\\.jar$", "");
      for (String classifier : List.of("sources", "javadoc")) {
        Path attached = jar.resolveSibling(base + "-" + classifier + ".jar");
        assertThat(attached).as("%s of %s", classifier, jar).isRegularFile();
        try (JarFile contents = new JarFile(attached.toFile())) {
          assertThat(contents.size()).as("entries of %s", attached).isGreaterThan(1);
        }
      }
    }
  }

  /**
   * Spring Boot's autoconfigure processor ran (as Boot's guide to writing a starter asks): the
   * starter jar carries the conditions Boot's import filters read without loading the classes.
   */
  @Test
  void starterJarCarriesTheAutoConfigurationMetadata() throws Exception {
    Properties metadata = new Properties();
    try (JarFile jar = new JarFile(ownJar().toFile())) {
      JarEntry entry = jar.getJarEntry("META-INF/spring-autoconfigure-metadata.properties");
      assertThat(entry)
          .as("spring-autoconfigure-metadata.properties in %s", jar.getName())
          .isNotNull();
      try (InputStream in = jar.getInputStream(entry)) {
        metadata.load(in);
      }
    }
    assertThat(metadata)
        .containsEntry(
            BloomFilterAutoConfiguration.Health.class.getName() + ".ConditionalOnClass",
            HealthIndicator.class.getName())
        .containsEntry(
            BloomFilterAutoConfiguration.Metrics.class.getName() + ".ConditionalOnClass",
            MeterBinder.class.getName());
  }

  private static void assertModule(Path jar, String name) throws IOException {
    try (JarFile file = new JarFile(jar.toFile())) {
      assertThat(file.getManifest().getMainAttributes().getValue("Automatic-Module-Name"))
          .as("Automatic-Module-Name of %s", jar)
          .isEqualTo(name);
    }
    // The JDK accepts the name: a malformed one would make the jar unusable on the module path.
    List<String> found =
        ModuleFinder.of(jar).findAll().stream()
            .map(ModuleReference::descriptor)
            .map(d -> d.name())
            .toList();
    assertThat(found).as("module found in %s", jar).containsExactly(name);
  }

  private static Path jarOf(Class<?> type) throws URISyntaxException {
    Path location = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    assertThat(location)
        .as("%s must come from a packaged jar (run with `verify`)", type.getName())
        .isRegularFile();
    return location;
  }

  private static Path ownJar() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("target"))) {
      List<Path> jars =
          files
              .filter(
                  p -> p.getFileName().toString().startsWith("bloom-sidecar-spring-boot-starter-"))
              .filter(p -> p.getFileName().toString().matches(".*-SNAPSHOT\\.jar|.*[0-9]\\.jar"))
              .toList();
      assertThat(jars).as("this module's jar in target/").hasSize(1);
      return jars.get(0);
    }
  }
}
