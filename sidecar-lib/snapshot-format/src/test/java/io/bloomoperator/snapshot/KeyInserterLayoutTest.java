package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Every way a build puts keys into a filter (one thread by text, by UTF-8 bytes, several threads
 * through the atomic view) sets the bits of the filter's own layout: the parallel byte-level ingest
 * must never put Guava-hashed bits into a split-block filter, or the other way round.
 */
class KeyInserterLayoutTest {

  private static final int KEYS = 20_000;

  private static List<String> keys() {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < KEYS; i++) {
      keys.add((i % 7 == 0 ? "prodüct-" : "product-") + i);
    }
    return keys;
  }

  private static Supplier<BloomFilterBits.Builder> layout(FilterFormat format, KeyType type) {
    return format == FilterFormat.SPLIT_BLOCK
        ? () -> BloomFilterBits.builder(type, SplitBlockSizing.forKeys(KEYS, 0.01))
        : () -> BloomFilterBits.builder(type, BloomFilterSizing.forKeys(KEYS, 0.01));
  }

  @Test
  void stringKeysByTextByBytesAndOnSeveralThreadsSetTheSameBitsInEitherLayout() throws Exception {
    for (FilterFormat format : FilterFormat.values()) {
      Supplier<BloomFilterBits.Builder> fresh = layout(format, KeyType.STRING);
      BloomFilterBits.Builder byText = fresh.get();
      keys().forEach(byText::putString);
      long[] expected = byText.build().words();

      BloomFilterBits.Builder byBytes = fresh.get();
      for (String key : keys()) {
        byte[] utf8 = ("  " + key).getBytes(StandardCharsets.UTF_8);
        byBytes.putUtf8(utf8, 2, utf8.length - 2);
      }
      assertThat(Arrays.equals(byBytes.build().words(), expected))
          .as(format + ", UTF-8 bytes")
          .isTrue();

      BloomFilterBits.Builder parallel = fresh.get();
      KeyInserter shared = parallel.concurrent();
      onTwoThreads(
          i -> {
            String key = keys().get(i);
            if (i % 2 == 0) {
              shared.putString(key);
            } else {
              byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
              shared.putUtf8(utf8, 0, utf8.length);
            }
          });
      assertThat(Arrays.equals(parallel.build().words(), expected))
          .as(format + ", two threads")
          .isTrue();
    }
  }

  @Test
  void longKeysOnSeveralThreadsSetTheSameBitsInEitherLayout() throws Exception {
    for (FilterFormat format : FilterFormat.values()) {
      Supplier<BloomFilterBits.Builder> fresh = layout(format, KeyType.LONG);
      BloomFilterBits.Builder one = fresh.get();
      for (long i = 0; i < KEYS; i++) {
        one.putLong(i * 7919);
      }
      BloomFilterBits.Builder parallel = fresh.get();
      KeyInserter shared = parallel.concurrent();
      onTwoThreads(i -> shared.putLong(i * 7919L));
      assertThat(Arrays.equals(parallel.build().words(), one.build().words()))
          .as(format.toString())
          .isTrue();
    }
  }

  private interface Put {
    void put(int index);
  }

  private static void onTwoThreads(Put put) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < 2; t++) {
        int first = t;
        done.add(
            pool.submit(
                () -> {
                  for (int i = first; i < KEYS; i += 2) {
                    put.put(i);
                  }
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
