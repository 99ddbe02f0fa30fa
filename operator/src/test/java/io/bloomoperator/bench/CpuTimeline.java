package io.bloomoperator.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Where the CPU of a benchmark run goes, to say with a measurement what bounds a phase: this JVM's
 * threads grouped by name (digits dropped, so a pool's threads are one group) and every child
 * process (the kube-apiserver, etcd, ...) by command, sampled every {@code period}. {@link #report}
 * prints the cores each group used on average over a window of the run.
 *
 * <p>A thread's CPU is kept after it ends, so a group's total never falls; CPU of threads that
 * lived and ended between two samples is missed (the JVM total, {@code jvm (all threads, GC, JIT)},
 * still counts it).
 */
final class CpuTimeline implements AutoCloseable {

  private record Sample(long nanos, Map<String, Long> cpuNanos) {}

  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private final com.sun.management.OperatingSystemMXBean os =
      (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private final Map<Long, Long> threadCpu = new HashMap<>();
  private final Map<Long, String> threadGroup = new HashMap<>();
  private final Map<Long, Long> processCpu = new HashMap<>();
  private final Map<Long, String> processGroup = new HashMap<>();
  private final List<Sample> samples = new ArrayList<>();
  private final Thread sampler;
  private volatile boolean running = true;

  private CpuTimeline(Duration period) {
    sample();
    sampler =
        new Thread(
            () -> {
              while (running) {
                try {
                  Thread.sleep(period.toMillis());
                } catch (InterruptedException e) {
                  return;
                }
                sample();
              }
            },
            "cpu-timeline");
    sampler.setDaemon(true);
    sampler.start();
  }

  /** Starts sampling now. */
  static CpuTimeline start(Duration period) {
    return new CpuTimeline(period);
  }

  private void sample() {
    long now = System.nanoTime();
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info == null) {
        continue;
      }
      long cpu = threads.getThreadCpuTime(info.getThreadId());
      if (cpu >= 0) {
        threadCpu.put(info.getThreadId(), cpu);
        threadGroup.putIfAbsent(info.getThreadId(), group(info.getThreadName()));
      }
    }
    ProcessHandle.current()
        .descendants()
        .forEach(
            p ->
                p.info()
                    .totalCpuDuration()
                    .ifPresent(
                        d -> {
                          processCpu.put(p.pid(), d.toNanos());
                          processGroup.putIfAbsent(
                              p.pid(),
                              "process "
                                  + p.info()
                                      .command()
                                      .map(c -> Path.of(c).getFileName().toString())
                                      .orElse("pid " + p.pid()));
                        }));
    Map<String, Long> totals = new TreeMap<>();
    threadCpu.forEach((id, cpu) -> totals.merge(threadGroup.get(id), cpu, Long::sum));
    processCpu.forEach((pid, cpu) -> totals.merge(processGroup.get(pid), cpu, Long::sum));
    totals.put("jvm (all threads, GC, JIT)", os.getProcessCpuTime());
    synchronized (samples) {
      samples.add(new Sample(now, totals));
    }
  }

  private static String group(String threadName) {
    return "thread " + threadName.replaceAll("[-#]?\\d+", "");
  }

  /**
   * Prints the average cores each group used from {@code fromNanos} to {@code toNanos} ({@link
   * System#nanoTime()}), the busiest first, groups under 0.02 cores left out; the window is widened
   * to the samples around it.
   */
  void report(String label, long fromNanos, long toNanos) {
    Sample from;
    Sample to = null;
    synchronized (samples) {
      from = samples.get(0);
      for (Sample s : samples) {
        if (s.nanos() <= fromNanos) {
          from = s;
        }
        if (to == null && s.nanos() >= toNanos) {
          to = s;
        }
      }
      if (to == null) {
        to = samples.get(samples.size() - 1);
      }
    }
    double wall = (to.nanos() - from.nanos()) / 1e9;
    Map<String, Double> cores = new LinkedHashMap<>();
    Sample start = from;
    to.cpuNanos()
        .forEach(
            (group, cpu) ->
                cores.put(group, (cpu - start.cpuNanos().getOrDefault(group, 0L)) / 1e9 / wall));
    String busiest =
        cores.entrySet().stream()
            .filter(e -> e.getValue() >= 0.02)
            .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
            .map(e -> String.format(Locale.ROOT, "    %-44s %.2f cores", e.getKey(), e.getValue()))
            .collect(Collectors.joining("\n"));
    System.out.printf(
        Locale.ROOT,
        "cpu, %s (%.1f s, %d cores, load average now %s):%n%s%n",
        label,
        wall,
        Runtime.getRuntime().availableProcessors(),
        loadAverage(),
        busiest);
  }

  private static String loadAverage() {
    try {
      return java.nio.file.Files.readString(Path.of("/proc/loadavg")).strip();
    } catch (java.io.IOException e) {
      return "?";
    }
  }

  @Override
  public void close() {
    running = false;
    sampler.interrupt();
  }
}
