package io.bloomoperator.publish;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bytes that publishes in progress are uploading, per store and namespace, operator-wide: what a
 * namespace's objects hold is listed from the store, which does not yet show an upload under way,
 * so without this two concurrent publishes of one namespace (it may build in several slots) would
 * each see the same room and together exceed {@code namespaceBudgetBytes}. {@link StoreBudget}
 * checks and reserves under one lock per store and namespace (a slow listing of one namespace holds
 * up no other), and the publish releases its reservation once its objects are listed like any
 * others, or are gone.
 */
public final class StoreReservations {

  /** A reservation of upload bytes, released by {@link #close}. */
  @FunctionalInterface
  public interface Reservation extends AutoCloseable {

    /** Nothing reserved. */
    Reservation NONE = () -> {};

    @Override
    void close();
  }

  private final Map<String, Object> locks = new ConcurrentHashMap<>();
  private final Map<String, Long> inFlight = new HashMap<>();

  /** The lock under which {@code key}'s check and reservation happen. */
  Object lock(String key) {
    return locks.computeIfAbsent(key, k -> new Object());
  }

  /** Bytes reserved for {@code key} now. */
  synchronized long reserved(String key) {
    return inFlight.getOrDefault(key, 0L);
  }

  /** Reserves {@code bytes} for {@code key} until the reservation is closed (once). */
  synchronized Reservation reserve(String key, long bytes) {
    inFlight.merge(key, bytes, Long::sum);
    boolean[] released = {false};
    return () -> {
      synchronized (StoreReservations.this) {
        if (!released[0]) {
          released[0] = true;
          long left = inFlight.merge(key, -bytes, Long::sum);
          if (left <= 0) {
            inFlight.remove(key);
          }
        }
      }
    };
  }
}
