package io.bloomoperator.snapshot.bench;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the snapshot benchmarks, ours next to Guava.
 *
 * <p>No arguments: every benchmark in this package, briefly (1 fork, 2 x 1 s warm-up, 3 x 1 s
 * measurement, 3 GB heap, GC profiler for allocation per op). With arguments: they are handed to
 * JMH's own command line unchanged, e.g. {@code -f 1 -wi 2 -i 3 LookupBenchmark.string}.
 *
 * <pre>
 *   mvn -q -pl sidecar-lib test-compile exec:java                        # all, brief
 *   mvn -q -pl sidecar-lib test-compile exec:java -Dexec.args="-h"       # JMH options
 * </pre>
 */
public final class BenchmarkMain {

  private BenchmarkMain() {}

  public static void main(String[] args) throws Exception {
    exposeClassPathToForks();
    if (args.length > 0) {
      org.openjdk.jmh.Main.main(args);
      return;
    }
    Options options =
        new OptionsBuilder()
            .include(BenchmarkMain.class.getPackageName().replace(".", "\\.") + "\\..*Benchmark.*")
            .forks(1)
            .warmupIterations(2)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(3)
            .measurementTime(TimeValue.seconds(1))
            .jvmArgsAppend("-Xms3g", "-Xmx3g")
            .addProfiler(GCProfiler.class)
            .build();
    new Runner(options).run();
  }

  /**
   * JMH forks new JVMs with {@code java.class.path}. Under {@code exec:java} that is Maven's
   * launcher, not the test classpath, so copy the class loader's URLs into it first.
   */
  private static void exposeClassPathToForks() {
    ClassLoader loader = Thread.currentThread().getContextClassLoader();
    if (!(loader instanceof URLClassLoader urls)) {
      return; // plain `java -cp ...`: already right
    }
    List<String> entries = new ArrayList<>();
    for (URL url : urls.getURLs()) {
      try {
        entries.add(new File(url.toURI()).getPath());
      } catch (Exception e) {
        entries.add(url.getPath());
      }
    }
    System.setProperty("java.class.path", String.join(File.pathSeparator, entries));
  }
}
