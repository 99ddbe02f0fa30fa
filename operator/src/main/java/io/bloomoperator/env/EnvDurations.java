package io.bloomoperator.env;

import io.bloomoperator.api.Durations;
import java.time.Duration;
import java.util.Map;

/** Durations read from the operator's environment, in the CRD's duration syntax (e.g. 30s, 5m). */
public final class EnvDurations {

  private EnvDurations() {}

  /**
   * The positive duration in environment variable {@code name}, or {@code fallback} when it is
   * unset or blank.
   *
   * @throws IllegalArgumentException naming the variable when it is not a positive duration
   */
  public static Duration positive(Map<String, String> env, String name, Duration fallback) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    Duration value = parse(name, raw.strip());
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive");
    }
    return value;
  }

  /**
   * The duration in environment variable {@code name}, where {@code 0} (with or without a unit)
   * switches a limit off, or {@code fallback} when it is unset or blank.
   *
   * @throws IllegalArgumentException naming the variable when it is not a duration
   */
  public static Duration positiveOrZero(Map<String, String> env, String name, Duration fallback) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    String text = raw.strip();
    // Durations.parse refuses zero: here 0 is how an administrator turns a limit off.
    if (text.matches("0+(\\.0+)?(ms|s|m|h)?")) {
      return Duration.ZERO;
    }
    return parse(name, text);
  }

  private static Duration parse(String name, String text) {
    try {
      return Durations.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }
}
