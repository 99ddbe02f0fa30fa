package io.bloomoperator.reconcile;

import io.bloomoperator.assemble.FilterBuilder;
import java.util.concurrent.Semaphore;

/**
 * Bounds the bit arrays alive at once ({@code BLOOM_MAX_CONCURRENT_BUILDS}), so the heap needed is
 * known: that many arrays of at most {@code BLOOM_MAX_SNAPSHOT_BYTES}, plus a little.
 *
 * <p>A build takes its slot when its array is allocated, that is when the source has delivered its
 * first key ({@link FilterBuilder.Reservation}), and keeps it until its publish is done.
 * Connecting, waiting for a response, running a query and counting keys take no slot: a source that
 * accepts a connection and then sends nothing cannot make other filters wait for it. Slots are
 * handed out in arrival order (a fair semaphore), so no build waits forever behind later ones.
 */
final class BuildSlots {

  private final Semaphore slots;

  BuildSlots(int slots) {
    this.slots = new Semaphore(slots, true);
  }

  /** A slot for one build, not taken yet; closing it gives the slot back if it was taken. */
  Slot slot() {
    return new Slot();
  }

  /** Slots free right now. */
  int available() {
    return slots.availablePermits();
  }

  /** One build's claim on a slot: taken on the first {@link #reserve}, released by close. */
  final class Slot implements FilterBuilder.Reservation, AutoCloseable {
    private boolean held;

    @Override
    public void reserve() throws InterruptedException {
      if (!held) {
        slots.acquire();
        held = true;
      }
    }

    @Override
    public void close() {
      if (held) {
        held = false;
        slots.release();
      }
    }
  }
}
