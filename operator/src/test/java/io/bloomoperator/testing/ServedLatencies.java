package io.bloomoperator.testing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Produce → served times of keys: each key is noted when produced ({@link #produced}), and a
 * checker thread looks every 10 ms whether {@code served} answers it, so figures are at most that
 * much late. For freshness tests and benchmarks of change streams.
 */
public final class ServedLatencies implements AutoCloseable {

  private final Map<String, Long> pending = new ConcurrentHashMap<>();
  private final List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
  private final Thread checker;

  /** Starts checking with {@code served}: whether every reader answers the key present. */
  public ServedLatencies(Predicate<String> served) {
    checker =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                long now = System.nanoTime();
                pending.forEach(
                    (key, at) -> {
                      if (served.test(key)) {
                        latencies.add(now - at);
                        pending.remove(key);
                      }
                    });
                try {
                  Thread.sleep(10);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "served-checker");
    checker.setDaemon(true);
    checker.start();
  }

  /** Notes {@code key} as produced now (its produce was acknowledged, or its row committed). */
  public void produced(String key) {
    pending.put(key, System.nanoTime());
  }

  /** Keys produced and not served yet. */
  public int pending() {
    return pending.size();
  }

  /** The produce → served times so far, in nanoseconds, sorted. */
  public List<Long> sorted() {
    List<Long> sorted = new ArrayList<>(latencies);
    Collections.sort(sorted);
    return sorted;
  }

  /** The {@code q} quantile of {@code sorted}, in milliseconds (NaN when empty). */
  public static double ms(List<Long> sorted, double q) {
    if (sorted.isEmpty()) {
      return Double.NaN;
    }
    int i = (int) Math.min(sorted.size() - 1, Math.ceil(q * sorted.size()) - 1);
    return sorted.get(Math.max(0, i)) / 1e6;
  }

  /** {@code p50 … ms, p90 … ms, p99 … ms, max … ms} of {@link #sorted()}. */
  public String summary() {
    List<Long> sorted = sorted();
    return String.format(
        java.util.Locale.ROOT,
        "p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms",
        ms(sorted, 0.50),
        ms(sorted, 0.90),
        ms(sorted, 0.99),
        ms(sorted, 1.0));
  }

  @Override
  public void close() {
    checker.interrupt();
  }
}
