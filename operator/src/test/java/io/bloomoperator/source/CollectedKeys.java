package io.bloomoperator.source;

import java.util.ArrayList;
import java.util.List;

/** Keys as they arrive from a source, strings and longs in one list, for small results. */
final class CollectedKeys implements LineParser.KeyConsumer {

  final List<Object> keys = new ArrayList<>();

  @Override
  public void putString(String key) {
    keys.add(key);
  }

  @Override
  public void putLong(long key) {
    keys.add(key);
  }
}
