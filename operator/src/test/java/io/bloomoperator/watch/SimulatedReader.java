package io.bloomoperator.watch;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * sidecar-lib's own {@link ReaderReporter} on its own watcher thread, without a filter to load: for
 * benchmarks that need the Lease writes of many readers but cannot afford a {@link LiveBloomFilter}
 * (an informer and a loaded filter) each. A swap is announced as the watcher announces it, by
 * {@link BloomFilterListener#onUpdate} on the watcher thread, so the reporter writes exactly what
 * and when a real reader writes; only the load before it is left out.
 */
public final class SimulatedReader implements AutoCloseable {

  private final WatcherThread thread;
  private final ReaderReporter reporter;
  private long served;

  private SimulatedReader(WatcherThread thread, ReaderReporter reporter) {
    this.thread = thread;
    this.reporter = reporter;
  }

  /**
   * Starts reporting for pod {@code podName}/{@code podUid}: the first write (version 0) now, then
   * heartbeats every {@code heartbeat} × [0.8, 1.2], as sidecar-lib does.
   *
   * @param client the client the reporter writes with (may be shared between simulated readers)
   */
  public static SimulatedReader start(
      KubernetesClient client,
      String namespace,
      String filterName,
      String podName,
      String podUid,
      Duration heartbeat) {
    WatcherThread thread = new WatcherThread("sim-reader-" + podName);
    ReaderReporter reporter =
        new ReaderReporter(
            client,
            new ReaderReporter.PodIdentity(podName, podUid),
            namespace,
            filterName,
            thread,
            heartbeat,
            () -> ThreadLocalRandom.current().nextDouble(),
            Clock.systemUTC());
    reporter.start();
    return new SimulatedReader(thread, reporter);
  }

  /** The reader has swapped to {@code version}: reported as after a real load. */
  public void swapTo(long version) {
    thread.execute(
        () -> {
          long old = served;
          served = version;
          reporter.onUpdate(old, version, Duration.ZERO);
        });
  }

  @Override
  public void close() {
    thread.shutdown();
  }
}
