package io.bloomoperator.assemble;

import io.bloomoperator.snapshot.KeyInserter;
import java.util.function.LongConsumer;

/**
 * The reader's lane while it alone inserts (the Guava layout before its first hand-over, and every
 * key of a one-thread Guava build): plain writes straight into the builder, each key's bits set as
 * it comes. Counts the keys that changed no bit and hands the count on at {@link #flush()}.
 *
 * <p>Not shared with {@link AtomicInserts}' lane though the code is alike, on purpose: the call
 * into the inserter, on the path every key takes, would then see the builder and both layouts'
 * atomic views, three classes, and the JIT inlines a call site of two at most.
 */
final class ExclusiveLane implements SharedInserts.Lane {

  private final KeyInserter into;
  private final LongConsumer unchanged;
  private long same;

  /**
   * @param into the builder
   * @param unchanged told, at each flush, how many keys changed no bit since the last
   */
  ExclusiveLane(KeyInserter into, LongConsumer unchanged) {
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
