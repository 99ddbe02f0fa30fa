package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.KeyInserter;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every thread inserts straight into one {@link KeyInserter} that is safe for all of them (atomic
 * ORs): the Guava layout's build, whose k bits per key land anywhere in the array, so no thread can
 * own a part of it without routing k bit indexes per key. Nothing is held between threads.
 */
final class AtomicInserts implements SharedInserts {

  private final KeyInserter shared;
  private final AtomicLong unchanged = new AtomicLong();

  AtomicInserts(KeyInserter shared) {
    this.shared = shared;
  }

  @Override
  public Lane lane() {
    return new Lane() {
      /** Counted here and added at {@link #flush()}: one atomic add per batch, not per key. */
      private long same;

      @Override
      public void putString(String key) {
        if (!shared.putString(key)) {
          same++;
        }
      }

      @Override
      public void putLong(long key) {
        if (!shared.putLong(key)) {
          same++;
        }
      }

      @Override
      public void putUtf8(byte[] utf8, int offset, int length) {
        if (!shared.putUtf8(utf8, offset, length)) {
          same++;
        }
      }

      @Override
      public void flush() {
        unchanged.addAndGet(same);
        same = 0;
      }
    };
  }

  @Override
  public void finish() {
    // every key's bits were set when it was put
  }

  @Override
  public long unchanged() {
    return unchanged.get();
  }

  @Override
  public long peakHeldBytes() {
    return 0;
  }
}
