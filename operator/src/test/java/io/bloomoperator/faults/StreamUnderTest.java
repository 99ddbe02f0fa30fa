package io.bloomoperator.faults;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * A change stream {@link StreamKillScenario} runs against: its server (started by the
 * implementation, stopped by {@link #close()}), the filter's source and changes, and a writer of
 * keys into it.
 */
interface StreamUnderTest extends AutoCloseable {

  /** A short name for reports (e.g. {@code stream-kill}). */
  String name();

  /** Operator settings the stream needs beyond the scenario's own. */
  Map<String, String> operatorEnv();

  /** Creates what the filter reads (topic, table, publication, Secrets) in {@code namespace}. */
  void prepare(KubernetesClient client, String namespace) throws Exception;

  /** The {@code source:} and {@code changes:} of the filter's spec, as YAML at column 0. */
  String sourceAndChanges();

  /** A writer of unique keys at {@code perSecond}, not yet started. */
  KeyWriter writer(int perSecond) throws Exception;

  /** Restarts the stream's server; returns once it accepts writes again. */
  void restart() throws Exception;

  @Override
  void close() throws Exception;

  /** Writes keys and remembers each one the server acknowledged. */
  interface KeyWriter extends AutoCloseable {
    void start();

    /** Stops writing and returns once every write so far is acknowledged or failed. */
    void stop() throws Exception;

    /** Keys whose write the server acknowledged. */
    List<String> acknowledged();

    /** Writes that failed (their keys are not expected anywhere). */
    long failed();

    /** Where each of {@code keys} was written, for a failure message. */
    String describe(List<String> keys);

    @Override
    void close() throws Exception;
  }

  /**
   * Writes {@code key-0}, {@code key-1}, … at a steady rate on a thread of its own; a subclass
   * sends one key and reports its outcome with {@link #acknowledged(String, String)} or {@link
   * #failed()} (from any thread).
   */
  abstract class PacedKeyWriter implements KeyWriter {
    private final long periodNanos;
    private final Map<String, String> acknowledged = new ConcurrentHashMap<>();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean();
    private final Thread thread;

    PacedKeyWriter(int perSecond, String threadName) {
      this.periodNanos = 1_000_000_000L / perSecond;
      this.thread = new Thread(this::run, threadName);
      this.thread.setDaemon(true);
    }

    /** Sends {@code key}; may block (a synchronous write) or report later (an asynchronous one). */
    abstract void send(String key);

    /** Waits for writes sent but not yet reported; nothing by default. */
    void flush() throws Exception {}

    final void acknowledged(String key, String where) {
      acknowledged.put(key, where);
    }

    final void failedOnce() {
      failed.incrementAndGet();
    }

    @Override
    public void start() {
      running.set(true);
      thread.start();
    }

    private void run() {
      long next = System.nanoTime();
      for (long i = 0; running.get(); i++) {
        send("key-" + i);
        next += periodNanos;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          try {
            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
          } catch (InterruptedException e) {
            return;
          }
        }
      }
    }

    @Override
    public void stop() throws Exception {
      running.set(false);
      thread.join(Duration.ofSeconds(10).toMillis());
      flush();
    }

    @Override
    public List<String> acknowledged() {
      return List.copyOf(acknowledged.keySet());
    }

    @Override
    public long failed() {
      return failed.get();
    }

    @Override
    public String describe(List<String> keys) {
      return keys.stream()
              .limit(50)
              .map(k -> k + "@" + acknowledged.get(k))
              .collect(Collectors.joining(", "))
          + (keys.size() > 50 ? ", … (" + keys.size() + " in all)" : "");
    }

    @Override
    public void close() throws Exception {
      running.set(false);
      thread.join(Duration.ofSeconds(10).toMillis());
    }
  }
}
