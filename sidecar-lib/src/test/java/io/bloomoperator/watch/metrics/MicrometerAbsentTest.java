package io.bloomoperator.watch.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.SnapshotPublisher;
import io.bloomoperator.watch.TestKeys;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * An application without Micrometer: sidecar-lib's classes are loaded again, from its build output,
 * by a class loader that cannot see {@code io.micrometer}. Every class outside the metrics package
 * loads and initializes, and a LiveBloomFilter of that loader follows a snapshot on the real API
 * server, answers and counts outcomes. The metrics binder, which does need Micrometer, fails to
 * load there: proof that the loader really hides it.
 */
@RealKubernetes
class MicrometerAbsentTest {

  @Test
  void liveBloomFilterWorksWithoutMicrometer(KubernetesClient client, TestNamespace ns)
      throws Exception {
    Path mainClasses =
        Path.of(LiveBloomFilter.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (WithoutMicrometer loader =
        new WithoutMicrometer(mainClasses, getClass().getClassLoader())) {
      for (String className : classesOutsideMetrics(mainClasses)) {
        Class<?> loaded = Class.forName(className, true, loader);
        assertThat(loaded.getClassLoader()).as(className).isSameAs(loader);
      }
      Class.forName(ReaderMetricNames.class.getName(), true, loader); // the catalogue needs none
      assertThatThrownBy(() -> Class.forName(LiveBloomFilterMetrics.class.getName(), true, loader))
          .isInstanceOf(NoClassDefFoundError.class)
          .hasMessageContaining("io/micrometer");

      List<String> keys = List.of("a", "b", "c");
      new SnapshotPublisher(client, ns.name(), "ids")
          .publish(TestKeys.stringFilter(100, keys), keys.size(), 1);

      Class<?> watcher = loader.loadClass("io.bloomoperator.watch.BloomFilterWatcher");
      Class<?> keyType = loader.loadClass("io.bloomoperator.watch.LiveKeyType");
      Object live =
          watcher
              .getMethod("watch", KubernetesClient.class, String.class, String.class, keyType)
              .invoke(null, client, ns.name(), "ids", keyType.getField("STRING").get(null));
      Class<?> liveType = live.getClass();
      try {
        assertThat(liveType.getClassLoader()).isSameAs(loader);
        assertThat(
                liveType
                    .getMethod("awaitReady", Duration.class)
                    .invoke(live, Duration.ofSeconds(10)))
            .isEqualTo(true);
        assertThat(liveType.getMethod("mightContain", Object.class).invoke(live, "a"))
            .isEqualTo(true);
        liveType.getMethod("recordOutcome", Object.class, boolean.class).invoke(live, "a", true);
        assertThat(liveType.getMethod("truePositives").invoke(live)).isEqualTo(1L);
        assertThat(liveType.getMethod("currentVersion").invoke(live)).isEqualTo(1L);
      } finally {
        liveType.getMethod("close").invoke(live);
      }
    }
  }

  private static List<String> classesOutsideMetrics(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .map(root::relativize)
          .map(Path::toString)
          .filter(name -> name.endsWith(".class"))
          .filter(name -> !name.startsWith("io/bloomoperator/watch/metrics/"))
          .map(name -> name.substring(0, name.length() - ".class".length()).replace('/', '.'))
          .toList();
    }
  }

  /**
   * Child-first for sidecar-lib's main classes, the test class path for the rest, and no {@code
   * io.micrometer} at all.
   */
  private static final class WithoutMicrometer extends URLClassLoader {

    WithoutMicrometer(Path mainClasses, ClassLoader parent) throws IOException, URISyntaxException {
      super(new URL[] {mainClasses.toUri().toURL()}, parent);
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
      if (name.startsWith("io.micrometer.")) {
        throw new ClassNotFoundException(name + " is hidden: an application without Micrometer");
      }
      synchronized (getClassLoadingLock(name)) {
        Class<?> loaded = findLoadedClass(name);
        if (loaded == null && name.startsWith("io.bloomoperator.")) {
          try {
            loaded = findClass(name);
          } catch (ClassNotFoundException notMain) {
            // a test class: from the parent
          }
        }
        if (loaded == null) {
          loaded = super.loadClass(name, false);
        }
        if (resolve) {
          resolveClass(loaded);
        }
        return loaded;
      }
    }
  }
}
