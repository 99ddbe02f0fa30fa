package io.bloomoperator.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;

/**
 * The fault suite's knobs, as system properties ({@code -Dfaults.kills=100}); the defaults are the
 * short run CI does. Results go to stdout and to {@code target/fault-results.txt}.
 */
final class FaultParameters {

  private FaultParameters() {}

  static int integer(String name, int fallback) {
    String value = System.getProperty("faults." + name);
    return value == null || value.isBlank() ? fallback : Integer.parseInt(value.trim());
  }

  static Duration millis(String name, long fallback) {
    return Duration.ofMillis(integer(name + "Ms", (int) fallback));
  }

  /** {@code -Dfaults.seed} to repeat a run's random choices, else a fresh seed (printed). */
  static long seed() {
    String value = System.getProperty("faults.seed");
    return value == null || value.isBlank() ? System.nanoTime() : Long.parseLong(value.trim());
  }

  /** Prints one fault's figures and appends them to target/fault-results.txt. */
  static void report(String fault, String figures) {
    String line = Instant.now() + " FAULT " + fault + ": " + figures;
    System.out.println(line);
    try {
      Path file = Path.of("target", "fault-results.txt");
      Files.createDirectories(file.getParent());
      Files.writeString(
          file,
          line + "\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
