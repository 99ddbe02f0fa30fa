package io.bloomoperator.build;

import io.bloomoperator.assemble.FilterBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Bounds the bit arrays alive at once ({@code BLOOM_MAX_CONCURRENT_BUILDS}), so the heap needed is
 * known: that many arrays of at most {@code BLOOM_MAX_SNAPSHOT_BYTES}, plus a little; and shares
 * them fairly between namespaces, so one tenant cannot keep the others from building.
 *
 * <p>A build takes its slot when its array is allocated, that is when the source has delivered its
 * first key ({@link FilterBuilder.Reservation}), and keeps it until its publish is done.
 * Connecting, waiting for a response, running a query and counting keys take no slot: a source that
 * accepts a connection and then sends nothing cannot make other filters wait for it.
 *
 * <p><b>Fairness rules.</b>
 *
 * <ol>
 *   <li>One namespace holds at most {@code max(1, slots - 1)} slots at once: with two slots or
 *       more, one namespace alone can never hold them all.
 *   <li>A free slot goes first to namespaces none of whose builds the stall or build-time bound
 *       stopped in the last {@link #STALL_PENALTY} (a namespace whose builds stall waits behind
 *       every namespace whose builds progress, however often those are served); then to the waiting
 *       build whose namespace holds the fewest slots; among those, to the namespace served longest
 *       ago (never served first); within a namespace, in arrival order. No build waits forever
 *       behind later ones.
 *   <li>A slot is never held for long by a build that does not progress: {@link BuildGuard} stops a
 *       build whose source delivers no key for {@code BLOOM_SOURCE_STALL_TIMEOUT} while it holds a
 *       slot, and any build after {@code BLOOM_MAX_BUILD_TIME}.
 * </ol>
 *
 * <p>Rules 1 and 2 alone cannot protect an honest namespace when as many hostile namespaces as
 * there are slots each stall in one slot (two of them with the default two slots): any rule that
 * lets two different namespaces build at once lets both stall. Rule 3 bounds that case: a build
 * that needs a slot waits at most about {@code BLOOM_SOURCE_STALL_TIMEOUT} (the first stalled
 * holder is stopped by then, and by rule 2 the slot goes to the namespace that has not been served)
 * plus the builds of honest filters queued before it.
 */
public final class BuildSlots {

  /** Namespaces remembered for rule 2 (least recently served first); older ones count as new. */
  private static final int REMEMBERED_NAMESPACES = 10_000;

  /** How long a namespace whose build stalled waits behind the others. */
  static final Duration STALL_PENALTY = Duration.ofMinutes(5);

  /** Namespaces whose build stalled, and until when (nanoTime) they wait behind the others. */
  private final Map<String, Long> penalizedUntil = new HashMap<>();

  private final int perNamespace;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition granted = lock.newCondition();
  private int free;
  private long arrivals;
  private long grants;

  /** Slots held, by namespace (only namespaces holding one). */
  private final Map<String, Integer> held = new HashMap<>();

  /** Builds waiting for a slot, in arrival order. */
  private final List<Waiter> waiting = new ArrayList<>();

  /** When each namespace was last given a slot (grant number), least recent first. */
  private final Map<String, Long> lastServed =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
          return size() > REMEMBERED_NAMESPACES;
        }
      };

  BuildSlots(int slots) {
    this.free = slots;
    this.perNamespace = Math.max(1, slots - 1);
  }

  /** A slot for one build of {@code namespace}, not taken yet; closing it gives it back. */
  Slot slot(String namespace) {
    return new Slot(namespace);
  }

  /** Slots free right now. */
  int available() {
    lock.lock();
    try {
      return free;
    } finally {
      lock.unlock();
    }
  }

  /** Builds waiting for a slot right now. */
  int waiting() {
    lock.lock();
    try {
      return waiting.size();
    } finally {
      lock.unlock();
    }
  }

  /** Most slots one namespace may hold at once. */
  int perNamespace() {
    return perNamespace;
  }

  private static final class Waiter {
    final String namespace;
    final long arrival;
    boolean granted;

    Waiter(String namespace, long arrival) {
      this.namespace = namespace;
      this.arrival = arrival;
    }
  }

  private void acquire(String namespace) throws InterruptedException {
    lock.lock();
    try {
      Waiter me = new Waiter(namespace, arrivals++);
      waiting.add(me);
      dispatch();
      while (!me.granted) {
        try {
          granted.await();
        } catch (InterruptedException e) {
          if (me.granted) {
            release(namespace); // granted meanwhile: give it to the next one
          } else {
            waiting.remove(me);
          }
          throw e;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private void release(String namespace) {
    lock.lock();
    try {
      held.merge(namespace, -1, (a, b) -> a + b == 0 ? null : a + b);
      free++;
      dispatch();
    } finally {
      lock.unlock();
    }
  }

  /** Hands free slots to waiting builds by the rules in the class comment; under the lock. */
  private void dispatch() {
    boolean any = false;
    while (free > 0) {
      Waiter next = null;
      for (Waiter w : waiting) {
        int holds = held.getOrDefault(w.namespace, 0);
        if (holds >= perNamespace) {
          continue;
        }
        if (next == null || before(w, holds, next)) {
          next = w;
        }
      }
      if (next == null) {
        break;
      }
      waiting.remove(next);
      next.granted = true;
      free--;
      held.merge(next.namespace, 1, Integer::sum);
      lastServed.put(next.namespace, grants++);
      any = true;
    }
    if (any) {
      granted.signalAll();
    }
  }

  /** Whether {@code w} (whose namespace holds {@code holds}) goes before {@code other}. */
  private boolean before(Waiter w, int holds, Waiter other) {
    long now = System.nanoTime();
    boolean stalls = penalized(w.namespace, now);
    if (stalls != penalized(other.namespace, now)) {
      return !stalls;
    }
    int otherHolds = held.getOrDefault(other.namespace, 0);
    if (holds != otherHolds) {
      return holds < otherHolds;
    }
    long served = lastServed.getOrDefault(w.namespace, -1L);
    long otherServed = lastServed.getOrDefault(other.namespace, -1L);
    if (served != otherServed) {
      return served < otherServed;
    }
    return w.arrival < other.arrival;
  }

  private boolean penalized(String namespace, long now) {
    Long until = penalizedUntil.get(namespace);
    if (until == null) {
      return false;
    }
    if (now - until >= 0) {
      penalizedUntil.remove(namespace);
      return false;
    }
    return true;
  }

  /** A build of {@code namespace} was stopped for stalling: rule 2 puts the namespace last. */
  private void stalled(String namespace) {
    lock.lock();
    try {
      if (penalizedUntil.size() < REMEMBERED_NAMESPACES || penalizedUntil.containsKey(namespace)) {
        penalizedUntil.put(namespace, System.nanoTime() + STALL_PENALTY.toNanos());
      }
    } finally {
      lock.unlock();
    }
  }

  /** One build's claim on a slot: taken on the first {@link #reserve}, released by close. */
  final class Slot implements FilterBuilder.Reservation, AutoCloseable {
    private final String namespace;
    private volatile boolean held;
    private volatile long heldSince;

    private Slot(String namespace) {
      this.namespace = namespace;
    }

    @Override
    public void reserve() throws InterruptedException {
      if (!held) {
        acquire(namespace);
        heldSince = System.nanoTime();
        held = true;
      }
    }

    /** This build was stopped for stalling: its namespace waits behind the others for a while. */
    void stalled() {
      BuildSlots.this.stalled(namespace);
    }

    /** Whether the slot is taken. */
    boolean held() {
      return held;
    }

    /** {@link System#nanoTime()} when the slot was taken; meaningful only while {@link #held}. */
    long heldSince() {
      return heldSince;
    }

    @Override
    public void close() {
      if (held) {
        held = false;
        release(namespace);
      }
    }
  }
}
