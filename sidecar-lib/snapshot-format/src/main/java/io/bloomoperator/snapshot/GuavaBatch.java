package io.bloomoperator.snapshot;

/**
 * A batch lookup in the Guava layout: hashes four keys, loads the first two probed words of each
 * (eight independent loads, so their cache misses overlap), then tests them and, only for keys that
 * pass, the remaining k - 2 probes. The hashes of the group in flight need a scratch object (the
 * hash function hands them to a callback): one per thread, kept in a thread-local and holding no
 * filter, so a batch allocates nothing once its thread has one.
 */
final class GuavaBatch implements Hash128Consumer {

  private static final int GROUP = 4;

  private static final ThreadLocal<GuavaBatch> SCRATCH = ThreadLocal.withInitial(GuavaBatch::new);

  private final long[] h1 = new long[GROUP];
  private final long[] h2 = new long[GROUP];
  private int slot;

  private GuavaBatch() {}

  /** {@link BloomFilterBits#mightContainStrings} in the Guava layout. */
  static void strings(BloomFilterBits bits, String[] keys, int from, int count, boolean[] results) {
    SCRATCH.get().lookUpStrings(bits, keys, from, count, results);
  }

  /** {@link BloomFilterBits#mightContainLongs} in the Guava layout. */
  static void longs(BloomFilterBits bits, long[] keys, int from, int count, boolean[] results) {
    SCRATCH.get().lookUpLongs(bits, keys, from, count, results);
  }

  /** {@link BloomFilterBits#mightContainUtf8s} in the Guava layout. */
  static void utf8s(
      BloomFilterBits bits,
      byte[] data,
      int[] offsets,
      int[] lengths,
      int from,
      int count,
      boolean[] results) {
    SplitBlockBits.checkUtf8Ranges(data, offsets, lengths, from, count, results);
    SCRATCH.get().lookUpUtf8s(bits, data, offsets, lengths, from, count, results);
  }

  @Override
  public boolean accept(long first, long second) {
    h1[slot] = first;
    h2[slot] = second;
    return true;
  }

  private void lookUpStrings(
      BloomFilterBits bits, String[] keys, int from, int count, boolean[] results) {
    checkRange(keys.length, from, count, results);
    int i = 0;
    for (; count - i >= GROUP; i += GROUP) {
      for (slot = 0; slot < GROUP; slot++) {
        Murmur3x64.hashString(keys[from + i + slot], this);
      }
      probeGroup(bits, results, i);
    }
    for (; i < count; i++) {
      results[i] = bits.mightContainString(keys[from + i]);
    }
  }

  private void lookUpLongs(
      BloomFilterBits bits, long[] keys, int from, int count, boolean[] results) {
    checkRange(keys.length, from, count, results);
    int i = 0;
    for (; count - i >= GROUP; i += GROUP) {
      for (slot = 0; slot < GROUP; slot++) {
        Murmur3x64.hashLong(keys[from + i + slot], this);
      }
      probeGroup(bits, results, i);
    }
    for (; i < count; i++) {
      results[i] = bits.mightContainLong(keys[from + i]);
    }
  }

  private void lookUpUtf8s(
      BloomFilterBits bits,
      byte[] data,
      int[] offsets,
      int[] lengths,
      int from,
      int count,
      boolean[] results) {
    int i = 0;
    for (; count - i >= GROUP; i += GROUP) {
      for (slot = 0; slot < GROUP; slot++) {
        int key = from + i + slot;
        Murmur3x64.hashBytes(data, offsets[key], lengths[key], this);
      }
      probeGroup(bits, results, i);
    }
    for (; i < count; i++) {
      results[i] = bits.mightContainUtf8(data, offsets[from + i], lengths[from + i]);
    }
  }

  private void probeGroup(BloomFilterBits bits, boolean[] results, int r) {
    long[] w = bits.words();
    boolean twoProbes = bits.numHashFunctions() >= 2;
    long a0 = bits.indexOf(h1[0] & Long.MAX_VALUE);
    long a1 = bits.indexOf(h1[1] & Long.MAX_VALUE);
    long a2 = bits.indexOf(h1[2] & Long.MAX_VALUE);
    long a3 = bits.indexOf(h1[3] & Long.MAX_VALUE);
    long b0 = bits.indexOf((h1[0] + h2[0]) & Long.MAX_VALUE);
    long b1 = bits.indexOf((h1[1] + h2[1]) & Long.MAX_VALUE);
    long b2 = bits.indexOf((h1[2] + h2[2]) & Long.MAX_VALUE);
    long b3 = bits.indexOf((h1[3] + h2[3]) & Long.MAX_VALUE);
    // All eight loads are issued before any result is used.
    boolean p0 = (w[(int) (a0 >>> 6)] & (1L << a0) & bitAt(w, b0, twoProbes)) != 0;
    boolean p1 = (w[(int) (a1 >>> 6)] & (1L << a1) & bitAt(w, b1, twoProbes)) != 0;
    boolean p2 = (w[(int) (a2 >>> 6)] & (1L << a2) & bitAt(w, b2, twoProbes)) != 0;
    boolean p3 = (w[(int) (a3 >>> 6)] & (1L << a3) & bitAt(w, b3, twoProbes)) != 0;
    // Two probes passed: the full probe re-tests them (cached by now) and the rest.
    results[r] = p0 && bits.testBits(h1[0], h2[0]);
    results[r + 1] = p1 && bits.testBits(h1[1], h2[1]);
    results[r + 2] = p2 && bits.testBits(h1[2], h2[2]);
    results[r + 3] = p3 && bits.testBits(h1[3], h2[3]);
  }

  /** All ones if bit {@code index} is set, else zero: lets two probes combine in one AND. */
  private static long bitAt(long[] w, long index, boolean twoProbes) {
    // With k = 1 there is no second probe: it must not veto the first.
    return twoProbes ? -((w[(int) (index >>> 6)] >>> index) & 1L) : -1L;
  }

  private static void checkRange(int length, int from, int count, boolean[] results) {
    java.util.Objects.checkFromIndexSize(from, count, length);
    java.util.Objects.checkFromIndexSize(0, count, results.length);
  }
}
