package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.InPlaceDeltas;
import io.bloomoperator.snapshot.SnapshotEncoder;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * When the whole payload of a filter changed in place ({@link InPlaceDeltas}) is checked against
 * its manifest's SHA-256, and what a mismatch does.
 *
 * <p>A delta applied in place has its chunks' digests checked, never the digest of the payload it
 * produces: hashing the whole payload per delta is the cost the in-place path removes, and an array
 * that changes under the hash cannot be hashed. So the payload is checked on a copy: the first
 * delta applied in place after a verified state schedules a check {@code interval} after that
 * state; the check copies the served words on the watcher thread (the one thread that changes them,
 * so the copy is exactly the version served at that moment) and hashes the copy on one daemon
 * thread shared by every filter of the JVM, while deltas go on being applied. A whole load (a base,
 * the swap path) is verified by the load itself and restarts the interval. So at most one copy and
 * one hash of the payload per interval and filter, and hashes of several filters never run at once.
 *
 * <p>A mismatch (the served array is not the payload its manifest describes: a bit flipped in
 * memory, a reader bug, a writer whose delta does not produce the digest it announced) is counted
 * ({@link #mismatches()}) and handed to {@code onMismatch}, which reloads the version from scratch;
 * a result for an array no longer served (a whole load replaced it meanwhile) is dropped.
 *
 * <p>Confined to the watcher thread, but for the counters and the hash itself.
 */
final class PayloadChecks {

  private static final Logger LOG = LoggerFactory.getLogger(PayloadChecks.class);

  /** One hashing thread for the JVM: checks of several filters never compete with each other. */
  private static final ExecutorService HASHING =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "bloom-payload-check");
            t.setDaemon(true);
            t.setPriority(Thread.MIN_PRIORITY);
            return t;
          });

  private final long intervalNanos; // 0: deltas are never applied in place
  private final WatcherThread thread;
  private final Supplier<ServedSnapshot> served;
  private final Consumer<String> onMismatch;
  private final String filter;

  private final LongAdder inPlace = new LongAdder();
  private final LongAdder checked = new LongAdder();
  private final LongAdder mismatches = new LongAdder();

  // Watcher thread only.
  private long verifiedAtNanos = System.nanoTime();
  private int unverified; // deltas applied in place since the last verified state
  private ScheduledFuture<?> scheduled;
  private boolean hashing;

  /**
   * @param interval the least time between two checks; {@link Duration#ZERO}: never apply a delta
   *     in place (every version is swapped in and verified whole, as before)
   * @param served the snapshot served now
   * @param onMismatch runs on the watcher thread after a mismatch, with what was found
   */
  PayloadChecks(
      Duration interval,
      WatcherThread thread,
      Supplier<ServedSnapshot> served,
      Consumer<String> onMismatch,
      String filter) {
    this.intervalNanos = interval.toNanos();
    this.thread = thread;
    this.served = served;
    this.onMismatch = onMismatch;
    this.filter = filter;
  }

  /** Whether add-only deltas may be applied in place at all. */
  boolean enabled() {
    return intervalNanos > 0;
  }

  /** A version was verified whole (base, swap path, local snapshot): the interval restarts. */
  void verifiedWhole() {
    verifiedAtNanos = System.nanoTime();
    unverified = 0;
  }

  /** A delta was applied in place and its version installed: a check is due within the interval. */
  void appliedInPlace() {
    inPlace.increment();
    unverified++;
    scheduleIfNeeded();
  }

  /** Deltas applied in place so far. */
  long inPlace() {
    return inPlace.sum();
  }

  /** Checks of a payload changed in place that ran to the end so far, matching or not. */
  long checked() {
    return checked.sum();
  }

  /** Checks that found the payload changed in place not to be its manifest's. */
  long mismatches() {
    return mismatches.sum();
  }

  private void scheduleIfNeeded() {
    if (unverified == 0 || scheduled != null || hashing) {
      return;
    }
    long delay = Math.max(0, verifiedAtNanos + intervalNanos - System.nanoTime());
    scheduled = thread.schedule(this::check, delay, TimeUnit.NANOSECONDS);
  }

  /** On the watcher thread: copies what is served and hashes the copy elsewhere. */
  private void check() {
    scheduled = null;
    ServedSnapshot snapshot = served.get();
    BloomFilterBits bits = snapshot == null ? null : snapshot.heapBits();
    if (unverified == 0 || bits == null) {
      return; // a whole load verified what is served since the check was scheduled
    }
    BloomFilterBits copy;
    try {
      copy = InPlaceDeltas.stableCopy(bits);
    } catch (OutOfMemoryError e) {
      // The copy is the size of the filter, as on the swap path; without room for it, try again
      // after the interval rather than stop checking.
      LOG.warn("{}: no heap to copy v{} for its payload check", filter, snapshot.version());
      verifiedAtNanos = System.nanoTime();
      scheduleIfNeeded();
      return;
    }
    unverified = 0;
    verifiedAtNanos = System.nanoTime();
    hashing = true;
    String expected = snapshot.manifest().sha256();
    HASHING.execute(
        () -> {
          String actual;
          try {
            actual = SnapshotEncoder.sha256(copy);
          } catch (RuntimeException e) {
            actual = "(not computed: " + e + ")";
          }
          String computed = actual;
          thread.execute(() -> checked(snapshot, bits, expected, computed));
        });
  }

  private void checked(
      ServedSnapshot snapshot, BloomFilterBits bits, String expected, String actual) {
    hashing = false;
    checked.increment();
    ServedSnapshot now = served.get();
    if (now == null || now.heapBits() != bits) {
      // Replaced by a whole load since the copy: that load was verified itself.
      scheduleIfNeeded();
      return;
    }
    if (!expected.equalsIgnoreCase(actual)) {
      mismatches.increment();
      unverified = 0;
      onMismatch.accept(
          "payload of v"
              + snapshot.version()
              + ", changed in place, does not match its manifest: sha256 "
              + expected
              + " expected, "
              + actual
              + " computed on a copy; reloading the served version from scratch");
      return;
    }
    LOG.debug("{}: payload of v{} changed in place matches its sha256", filter, snapshot.version());
    scheduleIfNeeded();
  }
}
