package io.bloomoperator.changes;

import java.util.Collections;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Where a stream stands: for each partition, the offset of the next event to apply. A published
 * version records the position it is consistent with (every event before it is in the filter), so
 * whoever publishes next resumes exactly there.
 *
 * <p>The text form ({@code 0:120,1:87}) is bounded: it is read back from the cluster, so {@link
 * #parse} refuses more than {@link #MAX_PARTITIONS} partitions and anything but digits.
 */
public record StreamPosition(SortedMap<Integer, Long> offsets) {

  /** More partitions than this are refused (by the stream and here). */
  public static final int MAX_PARTITIONS = 1024;

  public StreamPosition {
    if (offsets.size() > MAX_PARTITIONS) {
      throw new IllegalArgumentException("more than " + MAX_PARTITIONS + " partitions");
    }
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      if (e.getKey() < 0 || e.getValue() < 0) {
        throw new IllegalArgumentException("a partition or offset is negative");
      }
    }
    offsets = Collections.unmodifiableSortedMap(new TreeMap<>(offsets));
  }

  /** No partition read yet: every partition starts at its earliest event. */
  public static StreamPosition start() {
    return new StreamPosition(new TreeMap<>());
  }

  /** The offset to resume {@code partition} at, or -1: from its earliest event. */
  public long of(int partition) {
    return offsets.getOrDefault(partition, -1L);
  }

  /** This position with {@code partition} at {@code offset}. */
  public StreamPosition with(int partition, long offset) {
    TreeMap<Integer, Long> next = new TreeMap<>(offsets);
    next.put(partition, offset);
    return new StreamPosition(next);
  }

  /** Events between {@code earlier} and this position (partitions new here count from 0). */
  public long eventsSince(StreamPosition earlier) {
    long events = 0;
    for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
      events += Math.max(0, e.getValue() - Math.max(0, earlier.of(e.getKey())));
    }
    return events;
  }

  /** The text form, e.g. {@code 0:120,1:87}; empty for {@link #start()}. */
  public String text() {
    StringBuilder text = new StringBuilder();
    offsets.forEach(
        (partition, offset) -> {
          if (text.length() > 0) {
            text.append(',');
          }
          text.append(partition).append(':').append(offset);
        });
    return text.toString();
  }

  /**
   * Reads {@link #text()}.
   *
   * @throws IllegalArgumentException for anything else, or more than {@link #MAX_PARTITIONS}
   */
  public static StreamPosition parse(String text) {
    TreeMap<Integer, Long> offsets = new TreeMap<>();
    if (text == null || text.isEmpty()) {
      return new StreamPosition(offsets);
    }
    if (text.length() > MAX_PARTITIONS * 32) {
      throw new IllegalArgumentException("a stream position longer than any this operator writes");
    }
    for (String entry : text.split(",", -1)) {
      int colon = entry.indexOf(':');
      if (colon <= 0
          || colon > 10
          || entry.length() - colon - 1 > 19
          || !digits(entry, 0, colon)
          || !digits(entry, colon + 1, entry.length())) {
        throw new IllegalArgumentException("not a stream position");
      }
      int partition = Integer.parseInt(entry.substring(0, colon));
      if (offsets.put(partition, Long.parseLong(entry.substring(colon + 1))) != null) {
        throw new IllegalArgumentException("a partition is named twice");
      }
      if (offsets.size() > MAX_PARTITIONS) {
        throw new IllegalArgumentException("more than " + MAX_PARTITIONS + " partitions");
      }
    }
    return new StreamPosition(offsets);
  }

  private static boolean digits(String text, int from, int to) {
    if (from >= to) {
      return false;
    }
    for (int i = from; i < to; i++) {
      if (text.charAt(i) < '0' || text.charAt(i) > '9') {
        return false;
      }
    }
    return true;
  }
}
