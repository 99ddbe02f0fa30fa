package io.bloomoperator.source;

/** Keys that are parsed and then dropped: for reads whose cost, not result, is under test. */
final class DiscardedKeys implements LineParser.KeyConsumer {

  @Override
  public void putString(String key) {}

  @Override
  public void putLong(long key) {}
}
