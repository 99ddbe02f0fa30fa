package io.bloomoperator.api;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the Go-style durations Kubernetes users write (1h30m, 10m, 45s, 500ms). */
public final class Durations {

  private static final Pattern PART = Pattern.compile("([0-9]+(?:\\.[0-9]+)?)(ms|s|m|h)");

  private Durations() {}

  /**
   * @throws IllegalArgumentException when {@code text} is not such a duration or is zero
   */
  public static Duration parse(String text) {
    double millis = millis(text);
    if (millis < 1) {
      throw new IllegalArgumentException("duration must be positive: \"" + text + "\"");
    }
    return Duration.ofMillis(Math.round(millis));
  }

  /**
   * {@link #parse}, where zero ({@code 0s}) is a meaningful value (e.g. {@code
   * spec.changes.overlap}: no overlap).
   */
  public static Duration parseAllowingZero(String text) {
    return Duration.ofMillis(Math.round(millis(text)));
  }

  private static double millis(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    Matcher m = PART.matcher(text);
    int at = 0;
    double millis = 0;
    while (at < text.length()) {
      if (!m.find(at) || m.start() != at) {
        throw new IllegalArgumentException(
            "not a duration: \"" + text + "\" (expected e.g. 30s, 10m, 1h30m)");
      }
      double value = Double.parseDouble(m.group(1));
      millis +=
          switch (m.group(2)) {
            case "ms" -> value;
            case "s" -> value * 1_000;
            case "m" -> value * 60_000;
            default -> value * 3_600_000;
          };
      at = m.end();
    }
    return millis;
  }

  /** The shortest text {@link #parse} reads back as {@code d}, e.g. {@code 1h30m}, {@code 10s}. */
  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    StringBuilder text = new StringBuilder();
    long millis = d.toMillis();
    long[] sizes = {3_600_000, 60_000, 1_000, 1};
    String[] units = {"h", "m", "s", "ms"};
    for (int i = 0; i < sizes.length; i++) {
      if (millis >= sizes[i]) {
        text.append(millis / sizes[i]).append(units[i]);
        millis %= sizes[i];
      }
    }
    return text.toString();
  }
}
