package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.KeyInserter;
import java.util.function.LongConsumer;

/**
 * A lane straight into a {@link KeyInserter} that sets each key's bits as it comes: the reader's
 * plain writes while it alone inserts, or the atomic ORs of the Guava layout's threads. Counts the
 * keys that changed no bit and hands the count on at {@link #flush()} (once per batch, not per
 * key).
 */
final class CountingLane implements SharedInserts.Lane {

  private final KeyInserter into;
  private final LongConsumer unchanged;
  private long same;

  /**
   * @param into the inserter, safe for the threads that use it at once
   * @param unchanged told, at each flush, how many keys changed no bit since the last
   */
  CountingLane(KeyInserter into, LongConsumer unchanged) {
    this.into = into;
    this.unchanged = unchanged;
  }

  @Override
  public void putString(String key) {
    counted(into.putString(key));
  }

  @Override
  public void putLong(long key) {
    counted(into.putLong(key));
  }

  @Override
  public void putUtf8(byte[] utf8, int offset, int length) {
    counted(into.putUtf8(utf8, offset, length));
  }

  private void counted(boolean changed) {
    if (!changed) {
      same++;
    }
  }

  @Override
  public void flush() {
    unchanged.accept(same);
    same = 0;
  }
}
