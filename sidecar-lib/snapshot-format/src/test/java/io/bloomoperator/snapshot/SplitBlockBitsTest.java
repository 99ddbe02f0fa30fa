package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter;
import org.apache.parquet.io.api.Binary;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The split-block layout against an independent implementation, Apache Parquet's own {@code
 * BlockSplitBloomFilter}: same hashes, same bytes, each reads the other's filters.
 */
class SplitBlockBitsTest {

  private static final BlockSplitBloomFilter PARQUET_HASHER = new BlockSplitBloomFilter(32);

  @Test
  void xxh64MatchesTheReferenceVectors() {
    // From the xxHash reference implementation (seed 0).
    assertThat(Xxh64.hashString("")).isEqualTo(0xEF46DB3751D8E999L);
    assertThat(Xxh64.hashString("a")).isEqualTo(0xD24EC4F1A98C6E5BL);
    assertThat(Xxh64.hashString("abc")).isEqualTo(0x44BC2CF5AD770999L);
  }

  @Test
  void stringHashesAreParquetsForEveryLengthAndForNonAscii() {
    SplittableRandom random = new SplittableRandom(7);
    for (int length = 0; length <= 100; length++) {
      for (int sample = 0; sample < 20; sample++) {
        String key = randomString(random, length, sample % 4 == 0);
        long expected = PARQUET_HASHER.hash(Binary.fromString(key));
        assertThat(SplitBlockBits.hashString(key)).as("hash of %s", key).isEqualTo(expected);
        byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
        assertThat(Xxh64.hashBytes(utf8, 0, utf8.length)).isEqualTo(expected);
      }
    }
  }

  @Test
  void longHashesAreParquets() {
    SplittableRandom random = new SplittableRandom(8);
    for (long key : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE}) {
      assertThat(SplitBlockBits.hashLong(key)).isEqualTo(PARQUET_HASHER.hash(key));
    }
    for (int i = 0; i < 10_000; i++) {
      long key = random.nextLong();
      assertThat(SplitBlockBits.hashLong(key)).isEqualTo(PARQUET_HASHER.hash(key));
    }
  }

  @ParameterizedTest
  @CsvSource({"32, 10", "1024, 300", "65536, 20000", "1048576, 300000"})
  void sameBytesAsParquetForStringKeys(int numBytes, int keys) throws IOException {
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(numBytes, numBytes);
    SplitBlockBits.Builder ours = SplitBlockBits.builder(KeyType.STRING, numBytes / 32);
    for (int i = 0; i < keys; i++) {
      String key = "sku-" + i;
      parquet.insertHash(parquet.hash(Binary.fromString(key)));
      ours.putString(key);
    }
    assertThat(ours.build().toByteArray()).isEqualTo(bitset(parquet));
  }

  @ParameterizedTest
  @CsvSource({"32, 10", "4096, 1000", "1048576, 300000"})
  void sameBytesAsParquetForLongKeys(int numBytes, int keys) throws IOException {
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(numBytes, numBytes);
    SplitBlockBits.Builder ours = SplitBlockBits.builder(KeyType.LONG, numBytes / 32);
    SplittableRandom random = new SplittableRandom(numBytes);
    for (int i = 0; i < keys; i++) {
      long key = random.nextLong();
      parquet.insertHash(parquet.hash(key));
      ours.putLong(key);
    }
    assertThat(ours.build().toByteArray()).isEqualTo(bitset(parquet));
  }

  @Test
  void parquetReadsOursAndWeReadParquetsWithAnyNumberOfBlocks() throws IOException {
    // 1000 blocks: not a power of two, which Parquet's writers never produce but its readers take.
    SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.STRING, 1000);
    for (int i = 0; i < 20_000; i++) {
      builder.putString("id-" + i);
    }
    SplitBlockBits ours = builder.build();
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter(ours.toByteArray());
    SplitBlockBits back = SplitBlockBits.fromByteArray(KeyType.STRING, bitset(parquet));
    assertThat(back).isEqualTo(ours);
    for (int i = 0; i < 20_000; i++) {
      assertThat(parquet.findHash(parquet.hash(Binary.fromString("id-" + i)))).isTrue();
      assertThat(back.mightContainString("id-" + i)).isTrue();
    }
    for (int i = 0; i < 20_000; i++) {
      String absent = "absent-" + i;
      assertThat(back.mightContainString(absent))
          .isEqualTo(parquet.findHash(parquet.hash(Binary.fromString(absent))));
    }
  }

  @Test
  void batchLookupsAnswerAsSingleOnes() {
    SplitBlockBits.Builder strings = SplitBlockBits.builder(KeyType.STRING, 64);
    SplitBlockBits.Builder longs = SplitBlockBits.builder(KeyType.LONG, 64);
    for (int i = 0; i < 3000; i += 2) {
      strings.putString("k" + i);
      longs.putLong(i);
    }
    SplitBlockBits s = strings.build();
    SplitBlockBits l = longs.build();
    String[] stringKeys = new String[3003];
    long[] longKeys = new long[3003];
    for (int i = 0; i < stringKeys.length; i++) {
      stringKeys[i] = "k" + i;
      longKeys[i] = i;
    }
    // From 1, 3001 keys: neither the start nor the length is a multiple of the batch of four.
    boolean[] stringResults = new boolean[3001];
    boolean[] longResults = new boolean[3001];
    s.mightContainStrings(stringKeys, 1, 3001, stringResults);
    l.mightContainLongs(longKeys, 1, 3001, longResults);
    int misses = 0;
    for (int i = 0; i < 3001; i++) {
      assertThat(stringResults[i]).isEqualTo(s.mightContainString(stringKeys[i + 1]));
      assertThat(longResults[i]).isEqualTo(l.mightContainLong(longKeys[i + 1]));
      if (!longResults[i]) {
        misses++;
      }
    }
    assertThatThrownBy(() -> l.mightContainLongs(longKeys, 3000, 4, new boolean[4]))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> l.mightContainLongs(longKeys, 0, 4, new boolean[3]))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(misses).as("absent odd keys answered absent").isPositive();
  }

  @ParameterizedTest
  @CsvSource({"100000, 0.1", "1000000, 0.01", "1000000, 0.001", "200000, 0.0001"})
  void measuredFalsePositiveRateIsAtMostTheRequestedOne(long keys, double fpp) {
    SplitBlockSizing sizing = SplitBlockSizing.forKeys(keys, fpp);
    assertThat(sizing.expectedFpp()).isLessThanOrEqualTo(fpp);
    SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.LONG, sizing);
    SplittableRandom random = new SplittableRandom(keys);
    for (long i = 0; i < keys; i++) {
      builder.putLong(random.nextLong());
    }
    SplitBlockBits bits = builder.build();
    int probes = 4_000_000;
    long falsePositives = 0;
    SplittableRandom absent = new SplittableRandom(~keys);
    for (int i = 0; i < probes; i++) {
      if (bits.mightContainLong(absent.nextLong())) {
        falsePositives++;
      }
    }
    double measured = (double) falsePositives / probes;
    assertThat(measured).as("measured fpp at %s bits/key", sizing.bitsPerKey()).isLessThan(fpp);
    // Not wastefully large either: within 20 % of the fpp asked for.
    assertThat(measured).isGreaterThan(fpp * 0.8);
  }

  @Test
  void sizingNeedsMoreBitsThanGuavaForTheSameRate() {
    SplitBlockSizing blocked = SplitBlockSizing.forKeys(1_000_000, 0.01);
    BloomFilterSizing guava = BloomFilterSizing.forKeys(1_000_000, 0.01);
    double guavaBitsPerKey = guava.numBits() / 1_000_000.0;
    assertThat(blocked.bitsPerKey()).isBetween(guavaBitsPerKey, guavaBitsPerKey * 1.25);
  }

  @Test
  void refusesMalformedInput() {
    assertThatThrownBy(() -> SplitBlockBits.fromByteArray(KeyType.LONG, new byte[33]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("32-byte blocks");
    assertThatThrownBy(() -> SplitBlockBits.fromByteArray(KeyType.LONG, new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SplitBlockBits.builder(KeyType.LONG, 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SplitBlockBits.builder(KeyType.LONG, SplitBlockSizing.MAX_BLOCKS + 1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SplitBlockSizing.forKeys(0, 0.01))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SplitBlockSizing.forKeys(10, 0.6))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SplitBlockSizing.forKeys(Long.MAX_VALUE / 2, 0.01))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("blocks");
    SplitBlockBits longs = SplitBlockBits.builder(KeyType.LONG, 1).build();
    assertThatThrownBy(() -> longs.mightContainString("x"))
        .isInstanceOf(IllegalArgumentException.class);
    SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.STRING, 1);
    builder.build();
    assertThatThrownBy(() -> builder.putString("late")).isInstanceOf(IllegalStateException.class);
  }

  private static byte[] bitset(BlockSplitBloomFilter parquet) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    parquet.writeTo(out);
    return out.toByteArray();
  }

  private static String randomString(SplittableRandom random, int length, boolean nonAscii) {
    StringBuilder out = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      if (nonAscii && random.nextInt(5) == 0) {
        out.append((char) (0x80 + random.nextInt(0x700))); // 2-byte UTF-8 range
      } else {
        out.append((char) (0x20 + random.nextInt(0x5f)));
      }
    }
    return out.toString();
  }
}
