package io.bloomoperator.source;

import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.snapshot.KeyInserter;
import java.util.function.Consumer;

/** Which threads insert a build's keys: proof that a source's reading threads use their lanes. */
final class InsertingThreads {
  private InsertingThreads() {}

  /** Beside the filter: hands the name of the inserting thread to {@code thread} per key. */
  static FilterBuilder.Beside counting(Consumer<String> thread) {
    return (bits, keys) ->
        inner ->
            new KeyInserter() {
              private void count() {
                thread.accept(Thread.currentThread().getName());
              }

              @Override
              public boolean putString(String key) {
                count();
                return inner.putString(key);
              }

              @Override
              public boolean putUtf8(byte[] utf8, int offset, int length) {
                count();
                return inner.putUtf8(utf8, offset, length);
              }

              @Override
              public boolean putLong(long key) {
                count();
                return inner.putLong(key);
              }
            };
  }
}
