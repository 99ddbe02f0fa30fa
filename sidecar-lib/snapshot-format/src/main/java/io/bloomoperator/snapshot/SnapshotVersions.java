package io.bloomoperator.snapshot;

import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The one range of snapshot version numbers, {@value #MIN}..{@value #MAX} (at most 18 decimal
 * digits), that every side of the wire format uses: manifests outside it are refused, chunk names
 * are never written for a version outside it, and every parser of a version in text (reader
 * reports, object-store keys, the CLI's file names) accepts exactly this range. A version one side
 * writes is thus always one the other side reads; 18 digits also leave {@code long} arithmetic room
 * above {@link #MAX} ({@code MAX + 1} never overflows).
 */
public final class SnapshotVersions {

  /** The lowest version: numbering starts here. */
  public static final long MIN = 1;

  /** The highest version, 10^18 - 1: a writer refuses to number above it. */
  public static final long MAX = 999_999_999_999_999_999L;

  /**
   * A version in decimal as a regular-expression fragment (no anchors, no groups): exactly the text
   * of {@link #MIN}..{@link #MAX}, no sign, no leading zero.
   */
  public static final String REGEX = "[1-9][0-9]{0,17}";

  private static final Pattern PATTERN = Pattern.compile(REGEX);

  private SnapshotVersions() {}

  /** Whether {@code version} is in {@link #MIN}..{@link #MAX}. */
  public static boolean valid(long version) {
    return version >= MIN && version <= MAX;
  }

  /**
   * {@code text} as a version; empty when it is null or not the plain decimal text of a version in
   * range (what {@link Long#toString(long)} writes for one).
   */
  public static OptionalLong parse(String text) {
    if (text == null || !PATTERN.matcher(text).matches()) {
      return OptionalLong.empty();
    }
    // 18 digits at most: always fits a long.
    return OptionalLong.of(Long.parseLong(text));
  }
}
