package io.bloomoperator.settings;

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
    Duration value;
    try {
      value = Durations.parse(raw.strip());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
    if (value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive");
    }
    return value;
  }
}
