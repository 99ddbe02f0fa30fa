package io.bloomoperator.env;

import java.util.Map;

/**
 * Whole numbers read from the operator's environment. A package of its own, below every other, so
 * that each package's settings record (publish, source, readers, objectstore, settings) parses them
 * the same way without importing each other.
 */
public final class EnvNumbers {

  private EnvNumbers() {}

  /**
   * The positive whole number in environment variable {@code name}, or {@code fallback} when it is
   * unset or blank.
   *
   * @throws IllegalArgumentException when it is not a positive number: the operator does not start
   */
  public static long positive(Map<String, String> env, String name, long fallback) {
    long value = positiveOrZero(env, name, fallback);
    if (value == 0) {
      throw new IllegalArgumentException(name + " must be positive");
    }
    return value;
  }

  /**
   * The whole number (0 or more) in environment variable {@code name}, or {@code fallback} when it
   * is unset or blank.
   *
   * @throws IllegalArgumentException when it is not a number or negative
   */
  public static long positiveOrZero(Map<String, String> env, String name, long fallback) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    try {
      long value = Long.parseLong(raw.trim());
      if (value < 0) {
        throw new IllegalArgumentException(name + " must not be negative: " + raw);
      }
      return value;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " is not a number: " + raw, e);
    }
  }
}
