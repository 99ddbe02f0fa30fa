package io.bloomoperator.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One resource figure sampled over a soak, judged flat or not: the median of the last quarter of
 * the samples against the median of the first quarter. A leak of one object per refresh grows
 * linearly with the refreshes, so three quarters of the run separate the two medians by three
 * quarters of the leak; a median ignores the odd sample taken while a burst of work was under way.
 */
final class Trend {

  private final String name;
  private final List<double[]> samples = new ArrayList<>();

  Trend(String name) {
    this.name = name;
  }

  /** A sample taken {@code seconds} after the soak started. */
  synchronized void add(double seconds, double value) {
    samples.add(new double[] {seconds, value});
  }

  synchronized int size() {
    return samples.size();
  }

  synchronized double firstQuarterMedian() {
    return median(quarter(false));
  }

  synchronized double lastQuarterMedian() {
    return median(quarter(true));
  }

  /** Growth from the first quarter's median to the last quarter's. */
  synchronized double growth() {
    return lastQuarterMedian() - firstQuarterMedian();
  }

  /** Least-squares slope over every sample, per hour. */
  synchronized double slopePerHour() {
    int n = samples.size();
    double meanT = samples.stream().mapToDouble(s -> s[0]).average().orElse(0);
    double meanV = samples.stream().mapToDouble(s -> s[1]).average().orElse(0);
    double covariance = 0;
    double variance = 0;
    for (double[] s : samples) {
      covariance += (s[0] - meanT) * (s[1] - meanV);
      variance += (s[0] - meanT) * (s[0] - meanT);
    }
    return n < 2 || variance == 0 ? 0 : covariance / variance * 3600;
  }

  synchronized double max() {
    return samples.stream().mapToDouble(s -> s[1]).max().orElse(0);
  }

  /**
   * Why the figure is not flat, or empty when the last quarter's median is within {@code absolute +
   * relative × first quarter's median} of the first quarter's.
   */
  synchronized Optional<String> notFlat(double absolute, double relative) {
    if (samples.size() < 8) {
      return Optional.of(name + ": only " + samples.size() + " samples (at least 8 needed)");
    }
    double first = firstQuarterMedian();
    double allowed = absolute + relative * first;
    double growth = lastQuarterMedian() - first;
    if (growth > allowed) {
      return Optional.of(
          String.format(
              "%s grew by %.0f (first quarter's median %.0f, last quarter's %.0f; at most %.0f"
                  + " allowed; slope %.0f/h)",
              name, growth, first, lastQuarterMedian(), allowed, slopePerHour()));
    }
    return Optional.empty();
  }

  /** The figures, for the report. */
  synchronized String summary(double scale, String unit) {
    return String.format(
        "%s: first quarter %.1f%s, last quarter %.1f%s (median), growth %+.1f%s, slope %+.1f%s/h,"
            + " max %.1f%s",
        name,
        firstQuarterMedian() / scale,
        unit,
        lastQuarterMedian() / scale,
        unit,
        growth() / scale,
        unit,
        slopePerHour() / scale,
        unit,
        max() / scale,
        unit);
  }

  private List<Double> quarter(boolean last) {
    int n = samples.size();
    int size = Math.max(1, n / 4);
    List<double[]> part = last ? samples.subList(n - size, n) : samples.subList(0, size);
    return part.stream().map(s -> s[1]).sorted().toList();
  }

  private static double median(List<Double> sorted) {
    if (sorted.isEmpty()) {
      return 0;
    }
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
