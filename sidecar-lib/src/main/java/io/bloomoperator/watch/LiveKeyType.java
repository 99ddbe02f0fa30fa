package io.bloomoperator.watch;

import io.bloomoperator.snapshot.BloomLookup;
import io.bloomoperator.snapshot.KeyType;
import java.util.function.BiPredicate;

/**
 * The key type of a {@link LiveBloomFilter}, carrying the Java type of its keys so that {@code
 * BloomFilterWatcher.watch(..., LiveKeyType.STRING)} yields a {@code LiveBloomFilter<String>} and
 * {@code LiveKeyType.LONG} a {@code LiveBloomFilter<Long>}: asking a String filter about a Long
 * does not compile.
 *
 * <p>It exists next to {@link KeyType} (the wire-format enum) because a Java enum cannot carry a
 * type parameter; each constant maps to exactly one {@link KeyType} and adds nothing to the format.
 *
 * @param <K> the Java type of the keys
 */
public final class LiveKeyType<K> {

  /** UTF-8 string keys, hashed as Guava's {@code Funnels.stringFunnel(UTF_8)}. */
  public static final LiveKeyType<String> STRING =
      new LiveKeyType<>(KeyType.STRING, BloomLookup::mightContainString, LiveKeyType::stringBatch);

  /** 64-bit keys, hashed as Guava's {@code Funnels.longFunnel()}. */
  public static final LiveKeyType<Long> LONG =
      new LiveKeyType<>(KeyType.LONG, BloomLookup::mightContainLong, LiveKeyType::longBatch);

  /** Longs unboxed per step of a boxed batch: bounds the scratch array whatever the batch size. */
  private static final int UNBOX_STEP = 256;

  private final KeyType keyType;
  private final BiPredicate<BloomLookup, K> lookup;
  private final BatchLookup<K> batch;

  /** A batch lookup of {@code keys[from, from + count)} into {@code results[0, count)}. */
  @FunctionalInterface
  private interface BatchLookup<K> {
    void lookUp(BloomLookup bits, K[] keys, int from, int count, boolean[] results);
  }

  private LiveKeyType(KeyType keyType, BiPredicate<BloomLookup, K> lookup, BatchLookup<K> batch) {
    this.keyType = keyType;
    this.lookup = lookup;
    this.batch = batch;
  }

  /**
   * The constant for a wire-format key type, for code that learns the type at run time (from
   * configuration, say) and so cannot name the Java key type statically.
   */
  public static LiveKeyType<?> of(KeyType keyType) {
    return switch (keyType) {
      case STRING -> STRING;
      case LONG -> LONG;
    };
  }

  /** The wire-format key type a snapshot must declare to be served under this type. */
  public KeyType keyType() {
    return keyType;
  }

  /**
   * Looks {@code key} up. Only called with filters whose key type was checked to equal {@link
   * #keyType()}, so the typed BloomLookup method never throws for a type mismatch.
   */
  boolean mightContain(BloomLookup bits, K key) {
    return lookup.test(bits, key);
  }

  /** The batch form of {@link #mightContain}, under the same precondition. */
  void mightContainAll(BloomLookup bits, K[] keys, int from, int count, boolean[] results) {
    batch.lookUp(bits, keys, from, count, results);
  }

  private static void stringBatch(
      BloomLookup bits, String[] keys, int from, int count, boolean[] results) {
    bits.mightContainStrings(keys, from, count, results);
  }

  private static void longBatch(
      BloomLookup bits, Long[] keys, int from, int count, boolean[] results) {
    long[] unboxed = new long[Math.min(count, UNBOX_STEP)];
    boolean[] step = new boolean[unboxed.length];
    for (int done = 0; done < count; done += unboxed.length) {
      int n = Math.min(unboxed.length, count - done);
      for (int i = 0; i < n; i++) {
        unboxed[i] = keys[from + done + i];
      }
      bits.mightContainLongs(unboxed, 0, n, step);
      System.arraycopy(step, 0, results, done, n);
    }
  }

  @Override
  public String toString() {
    return keyType.crdName();
  }
}
