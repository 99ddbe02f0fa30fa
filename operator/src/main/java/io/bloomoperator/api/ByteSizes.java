package io.bloomoperator.api;

import java.util.Locale;

/**
 * Byte counts for humans, in the units kubectl users read (KiB, MiB, GiB): the format of {@code
 * status.size} and of sizes in messages.
 */
public final class ByteSizes {

  private ByteSizes() {}

  /** E.g. {@code 512 B}, {@code 11.2 MiB}. */
  public static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double value = bytes;
    int unit = -1;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
  }
}
