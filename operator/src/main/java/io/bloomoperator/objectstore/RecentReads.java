package io.bloomoperator.objectstore;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the API server answered for an object of the administrator's (a BloomStore, its credentials
 * Secret or CA bundle, a Namespace's labels), kept for a short time: every reconcile of every store
 * filter needs them, and reading them afresh each time made the API calls of a reconcile grow with
 * the number of filters rather than the number of stores. A change is seen within {@link #ttl}.
 *
 * <p>Bounded: at most {@link #MAX_ENTRIES} objects, the least recently used dropped first. A read
 * that fails is not kept (the next reconcile asks again); an object that does not exist is kept as
 * absent, so a filter naming a missing store costs one GET per {@link #ttl}, not per reconcile.
 */
final class RecentReads {

  static final int MAX_ENTRIES = 4096;

  private final Duration ttl;
  private final Clock clock;
  private final Map<String, Entry> entries =
      new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
          return size() > MAX_ENTRIES;
        }
      };

  private record Entry(Optional<?> value, Instant readAt) {}

  RecentReads(Duration ttl, Clock clock) {
    this.ttl = ttl;
    this.clock = clock;
  }

  /**
   * The object under {@code key} as read at most {@link #ttl} ago, else as {@code read} returns it
   * now (null: absent).
   */
  @SuppressWarnings("unchecked")
  <T> Optional<T> get(String key, Supplier<T> read) {
    Instant now = clock.instant();
    synchronized (entries) {
      Entry entry = entries.get(key);
      if (entry != null && entry.readAt().plus(ttl).isAfter(now)) {
        return (Optional<T>) entry.value();
      }
    }
    // Outside the lock: a slow API server must not hold up reads of other objects.
    Optional<T> value = Optional.ofNullable(read.get());
    synchronized (entries) {
      entries.put(key, new Entry(value, now));
    }
    return value;
  }

  /** How long an answer is used. */
  Duration ttl() {
    return ttl;
  }
}
