package io.bloomoperator.changes;

import java.util.HashMap;
import java.util.Map;

/**
 * The deletes a {@link CountingShadow} applied since it was counted, per key, so that a key is not
 * decremented more often than it was counted. A delete event sent twice for one row (a producer
 * that retries, a table replicated twice into the topic) is not a replay the stream position
 * catches: it arrives at a new offset. Applied twice, it would take a count that belongs to another
 * key sharing the first key's bits, and clear that live key's bit: a false negative.
 *
 * <p>A key is presumed counted once by the full build; each add the stream applies since counts
 * once more. A delete may decrement only while the key's balance (that one, plus its adds, minus
 * the deletes applied) is above 0; otherwise it is left to the next full build, which is exact. A
 * key in two rows deleted twice keeps its bits until then: a false positive only.
 *
 * <p>Keys are told apart by their bit positions (a key's identity as far as the shadow can see),
 * folded into 64 bits. Only keys deleted since the count are held, at most {@code maxKeys}; once
 * full, the delete of a key not held is deferred too.
 */
final class DeleteLedger {

  /** Keys held by default: about 6 MiB of heap at most per shadow. */
  static final int DEFAULT_MAX_KEYS = 65_536;

  private final int maxKeys;

  /** Per key (its positions' fingerprint): its count (1 presumed, plus adds) minus deletes. */
  private final Map<Long, Integer> balances = new HashMap<>();

  DeleteLedger(int maxKeys) {
    this.maxKeys = maxKeys;
  }

  /** An add of the key at {@code positions} was counted. */
  void added(long[] positions) {
    if (!balances.isEmpty()) {
      balances.computeIfPresent(fingerprint(positions), (key, balance) -> balance + 1);
    }
  }

  /** Whether a delete of the key at {@code positions} may decrement its counters now. */
  boolean mayDelete(long[] positions) {
    Integer balance = balances.get(fingerprint(positions));
    return balance == null ? balances.size() < maxKeys : balance > 0;
  }

  /** A delete of the key at {@code positions} decremented its counters. */
  void deleted(long[] positions) {
    balances.merge(fingerprint(positions), 0, (balance, ignored) -> balance - 1);
  }

  /** Keys held. */
  int size() {
    return balances.size();
  }

  private static long fingerprint(long[] positions) {
    long h = 0x9E3779B97F4A7C15L;
    for (long p : positions) {
      h = (h ^ p) * 0xFF51AFD7ED558CCDL;
      h ^= h >>> 33;
    }
    return h;
  }
}
