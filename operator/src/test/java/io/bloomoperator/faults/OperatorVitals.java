package io.bloomoperator.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Samples an operator process from outside, as an administrator would: heap in use every second
 * ({@code jstat -gc}, which reads the JVM's performance counters and does not stop it), its thread
 * count ({@code /proc/<pid>/status}), and on request a thread dump ({@code jcmd Thread.print}) that
 * says what the reconcile threads are doing.
 */
final class OperatorVitals implements AutoCloseable {

  /** What the reconcile threads were doing at one instant. */
  record ReconcileThreads(int reconciling, int waitingForBuildSlot, int inHttpSource) {}

  private final long pid;
  private final AtomicLong maxHeapUsedKib = new AtomicLong();
  private final AtomicLong maxHeapCommittedKib = new AtomicLong();
  private final AtomicLong maxThreads = new AtomicLong();
  private final AtomicLong samples = new AtomicLong();
  private final Process jstat;
  private final Thread reader;

  OperatorVitals(long pid) {
    this.pid = pid;
    try {
      jstat =
          new ProcessBuilder(tool("jstat"), "-gc", Long.toString(pid), "1000")
              .redirectErrorStream(true)
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    reader = new Thread(this::readJstat, "operator-vitals");
    reader.setDaemon(true);
    reader.start();
  }

  private void readJstat() {
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(jstat.getInputStream(), StandardCharsets.UTF_8))) {
      String[] header = null;
      String line;
      while ((line = lines.readLine()) != null) {
        String[] fields = line.trim().split("\\s+");
        if (fields.length > 0 && fields[0].equals("S0C")) {
          header = fields;
          continue;
        }
        if (header == null || fields.length != header.length) {
          continue;
        }
        double used = 0;
        double committed = 0;
        for (int i = 0; i < header.length; i++) {
          switch (header[i]) {
            case "S0U", "S1U", "EU", "OU" -> used += Double.parseDouble(fields[i]);
            case "S0C", "S1C", "EC", "OC" -> committed += Double.parseDouble(fields[i]);
            default -> {}
          }
        }
        maxHeapUsedKib.accumulateAndGet((long) used, Math::max);
        maxHeapCommittedKib.accumulateAndGet((long) committed, Math::max);
        maxThreads.accumulateAndGet(threads(), Math::max);
        samples.incrementAndGet();
      }
    } catch (IOException | NumberFormatException e) {
      // The operator exited (jstat ends) or printed something else: the samples so far stand.
    }
  }

  private long threads() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith("Threads:")) {
          return Long.parseLong(line.substring("Threads:".length()).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone
    }
    return 0;
  }

  /** One thread dump, classified: reconcile threads, and of those which wait where. */
  ReconcileThreads reconcileThreads() throws IOException, InterruptedException {
    Process jcmd =
        new ProcessBuilder(tool("jcmd"), Long.toString(pid), "Thread.print")
            .redirectErrorStream(true)
            .start();
    String dump = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    jcmd.waitFor(60, TimeUnit.SECONDS);
    int reconciling = 0;
    int waiting = 0;
    int http = 0;
    for (String thread : dump.split("\n\\s*\n")) {
      if (!thread.contains("BloomFilterReconciler.reconcile")) {
        continue;
      }
      reconciling++;
      if (thread.contains("java.util.concurrent.Semaphore.acquire")) {
        waiting++;
      }
      if (thread.contains("source.HttpSource.")) {
        http++;
      }
    }
    return new ReconcileThreads(reconciling, waiting, http);
  }

  long maxHeapUsedMib() {
    return maxHeapUsedKib.get() / 1024;
  }

  long maxHeapCommittedMib() {
    return maxHeapCommittedKib.get() / 1024;
  }

  long maxThreads() {
    return maxThreads.get();
  }

  long samples() {
    return samples.get();
  }

  private static String tool(String name) {
    return Path.of(System.getProperty("java.home"), "bin", name).toString();
  }

  @Override
  public void close() throws InterruptedException {
    jstat.destroy();
    jstat.waitFor(10, TimeUnit.SECONDS);
    reader.join(10_000);
  }
}
