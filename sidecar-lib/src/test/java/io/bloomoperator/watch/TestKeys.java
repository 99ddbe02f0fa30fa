package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Key sets and filters built from them (public for the metrics and Spring Boot starter tests). */
public final class TestKeys {

  private TestKeys() {}

  /** "prefix-0" .. "prefix-(n-1)". */
  static List<String> strings(String prefix, int n) {
    List<String> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      keys.add(prefix + "-" + i);
    }
    return keys;
  }

  /** Random strings: mostly ASCII, some multi-byte UTF-8 and unpaired surrogates. */
  static List<String> randomStrings(Random random, int n) {
    List<String> keys = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      char[] chars = new char[random.nextInt(40)];
      boolean anyChar = random.nextInt(10) == 0;
      for (int c = 0; c < chars.length; c++) {
        chars[c] = anyChar ? (char) random.nextInt(0x10000) : (char) (32 + random.nextInt(95));
      }
      keys.add(new String(chars));
    }
    return keys;
  }

  static long[] randomLongs(Random random, int n) {
    long[] keys = new long[n];
    for (int i = 0; i < n; i++) {
      keys[i] = random.nextInt(4) == 0 ? random.nextInt(2000) - 1000 : random.nextLong();
    }
    return keys;
  }

  /** A 1% filter sized for {@code expectedKeys} holding every key of {@code keySets}. */
  @SafeVarargs
  public static BloomFilterBits stringFilter(long expectedKeys, List<String>... keySets) {
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(expectedKeys, 0.01));
    for (List<String> keys : keySets) {
      keys.forEach(bits::putString);
    }
    return bits.build();
  }

  /** A 1% filter sized for {@code expectedKeys} holding {@code keys}. */
  public static BloomFilterBits longFilter(long expectedKeys, long[] keys) {
    BloomFilterBits.Builder bits =
        BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(expectedKeys, 0.01));
    for (long key : keys) {
      bits.putLong(key);
    }
    return bits.build();
  }
}
