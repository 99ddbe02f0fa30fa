package io.bloomoperator.snapshot.bench;

import java.util.SplittableRandom;

/** Deterministic benchmark keys: realistic-looking ASCII ids and random longs. */
final class Keys {

  private Keys() {}

  /** Present key {@code i}: ~20-30 ASCII chars, like a user id or e-mail. */
  static String present(long i) {
    return "user-" + Long.toHexString(mix(i)) + "@example.com";
  }

  /**
   * A key that was never inserted (different prefix, so it cannot collide with {@link #present}).
   */
  static String absent(long i) {
    return "anon-" + Long.toHexString(mix(~i)) + "@example.org";
  }

  static long presentLong(long i) {
    return mix(i);
  }

  static long absentLong(long i) {
    return mix(i) ^ 0x5555_5555_5555_5555L; // distinct from mix(j) for all j with overwhelming odds
  }

  /** SplitMix64 finaliser: a bijection, so distinct i give distinct keys. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** Query indexes: half present (i in [0, n)), half absent, shuffled. */
  static long[] queryIndexes(int count, long n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long[] out = new long[count];
    for (int i = 0; i < count; i++) {
      long index = random.nextLong(n);
      out[i] = random.nextBoolean() ? index : ~index; // negative = absent
    }
    return out;
  }
}
