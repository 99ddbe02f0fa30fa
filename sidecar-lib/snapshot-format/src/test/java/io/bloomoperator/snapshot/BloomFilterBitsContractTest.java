package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * What callers of {@link BloomFilterBits} rely on beyond Guava compatibility: the bit index is
 * exactly {@code x mod numBits}, every inserter reports whether a key was new, the geometry a
 * decoder may hand over, the integral key types the generic methods take, a copy that leaves its
 * base alone.
 */
class BloomFilterBitsContractTest {

  @Test
  void theBitIndexIsExactlyTheRemainderEvenWhereTheQuotientEstimateFallsShort() {
    // numBits is a multiple of 64. For x a multiple of it the reciprocal's estimate of the quotient
    // is one short, so the final correction decides between bit 0 and the bit past the end.
    long[] moduli = {64, 128, 192, 6_400, 64L * 1_000_003, 95_850_624L, BloomFilterSizing.MAX_BITS};
    for (long m : moduli) {
      long reciprocal = Long.divideUnsigned(-1L, m);
      long top = Long.MAX_VALUE - Long.MAX_VALUE % m;
      long[] xs = {
        0, 1, m - 1, m, m + 1, 2 * m, 3 * m - 1, 12_345 * m, top - m, top, top - 1, Long.MAX_VALUE
      };
      for (long x : xs) {
        if (x >= 0) {
          assertThat(BloomFilterBits.remainder(x, m, reciprocal))
              .as("%d mod %d", x, m)
              .isEqualTo(x % m);
        }
      }
    }
  }

  @Test
  void everyGuavaLayoutInserterReportsWhetherTheKeyWasNew() {
    BloomFilterBits.Builder longs = BloomFilterBits.builder(KeyType.LONG, 1 << 16, 5);
    assertThat(longs.putLong(42)).isTrue();
    assertThat(longs.putLong(42)).isFalse();
    KeyInserter concurrentLongs = longs.concurrent();
    assertThat(concurrentLongs.putLong(43)).isTrue();
    assertThat(concurrentLongs.putLong(43)).isFalse();
    assertThat(concurrentLongs.putLong(42)).isFalse();

    BloomFilterBits.Builder strings = BloomFilterBits.builder(KeyType.STRING, 1 << 16, 5);
    byte[] utf8 = "xxprodüct".getBytes(StandardCharsets.UTF_8);
    assertThat(strings.putString("prodüct")).isTrue();
    assertThat(strings.putUtf8(utf8, 2, utf8.length - 2)).isFalse();
    KeyInserter concurrentStrings = strings.concurrent();
    assertThat(concurrentStrings.putString("other")).isTrue();
    assertThat(concurrentStrings.putString("other")).isFalse();
    assertThat(concurrentStrings.putUtf8(utf8, 2, utf8.length - 2)).isFalse();
    byte[] third = "third".getBytes(StandardCharsets.UTF_8);
    assertThat(concurrentStrings.putUtf8(third, 0, third.length)).isTrue();

    BloomFilterBits built = strings.build();
    assertThat(built.mightContainString("prodüct")).isTrue();
    assertThat(built.mightContainString("other")).isTrue();
    assertThat(built.mightContainString("third")).isTrue();
  }

  @Test
  void aKeyIsNewIfAnyOneOfItsBitsWasClear() {
    // One word, k = 2: every key sets at most two bits. A key counts as new while any bit is clear.
    for (int key = 0; key < 200; key++) {
      BloomFilterBits.Builder one = BloomFilterBits.builder(KeyType.LONG, 64, 2);
      one.putLong(key);
      long[] keyBits = one.build().words();
      for (int bit = 0; bit < 64; bit++) {
        if ((keyBits[0] & (1L << bit)) == 0) {
          continue;
        }
        long[] start = {-1L & ~(1L << bit)};
        BloomFilterBits base = BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 2, start);
        BloomFilterBits.Builder serial = BloomFilterBits.builder(base);
        assertThat(serial.putLong(key)).as("key %d, bit %d clear", key, bit).isTrue();
        assertThat(serial.build().words()).containsExactly(-1L);
        BloomFilterBits.Builder atomic = BloomFilterBits.builder(base);
        assertThat(atomic.concurrent().putLong(key)).as("key %d, bit %d clear", key, bit).isTrue();
        assertThat(atomic.build().words()).containsExactly(-1L);
      }
      BloomFilterBits full =
          BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 2, new long[] {-1});
      assertThat(BloomFilterBits.builder(full).putLong(key)).isFalse();
      assertThat(BloomFilterBits.builder(full).concurrent().putLong(key)).isFalse();
    }
  }

  @Test
  void theConcurrentInsertersRefuseKeysOfTheOtherType() {
    KeyInserter longs = BloomFilterBits.builder(KeyType.LONG, 128, 3).concurrent();
    KeyInserter strings = BloomFilterBits.builder(KeyType.STRING, 128, 3).concurrent();
    byte[] utf8 = {'x'};

    assertThatThrownBy(() -> longs.putString("x"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("this filter holds Long keys; a String key cannot be added or looked up");
    assertThatThrownBy(() -> longs.putUtf8(utf8, 0, 1)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> strings.putLong(1))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("this filter holds String keys; a Long key cannot be added or looked up");
    BloomFilterBits.Builder built = BloomFilterBits.builder(KeyType.LONG, 128, 3);
    built.build();
    assertThatThrownBy(built::concurrent).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> built.putUtf8(utf8, 0, 1)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void integralKeysOfEverySizeAreTheLongKeyOfTheSameValue() {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 1 << 16, 4);
    assertThat(builder.put(Integer.valueOf(7))).isTrue();
    assertThat(builder.put(Short.valueOf((short) 8))).isTrue();
    assertThat(builder.put(Byte.valueOf((byte) 9))).isTrue();
    assertThat(builder.putLong(7)).as("7 as an int is the long 7").isFalse();
    BloomFilterBits bits = builder.build();

    assertThat(bits.mightContainLong(8)).isTrue();
    assertThat(bits.mightContainLong(9)).isTrue();
    assertThat(bits.mightContain(7)).isTrue();
    assertThat(bits.mightContain((short) 8)).isTrue();
    assertThat(bits.mightContain((byte) 9)).isTrue();
    assertThat(bits.mightContain(10L)).isFalse();
    assertThatThrownBy(() -> bits.mightContain(7.0f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Long filter needs an integral key, got java.lang.Float");
    assertThatThrownBy(() -> bits.mightContain(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Long filter needs an integral key, got null");
    BloomFilterBits strings = BloomFilterBits.builder(KeyType.STRING, 64, 1).build();
    assertThatThrownBy(() -> strings.mightContain(7))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("String filter needs a CharSequence key, got java.lang.Integer");
  }

  @Test
  void currentFppIsTheFillRatioToThePowerK() {
    BloomFilterBits.Builder builder = BloomFilterBits.builder(KeyType.LONG, 64, 1);
    builder.putLong(1);
    BloomFilterBits one = builder.build();
    assertThat(one.bitCount()).isEqualTo(1);
    assertThat(one.currentFpp()).isEqualTo(1 / 64.0);

    long[] words = {0xffL, 0, 0, 0}; // 8 of 256 bits
    BloomFilterBits three = BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 3, words);
    assertThat(three.bitCount()).isEqualTo(8);
    assertThat(three.currentFpp()).isEqualTo(Math.pow(8 / 256.0, 3));
  }

  @Test
  void aBuilderFromABaseCopiesItsGeometryAndBitsAndLeavesItUnchanged() {
    for (FilterFormat format : FilterFormat.values()) {
      BloomFilterBits.Builder first =
          format == FilterFormat.SPLIT_BLOCK
              ? BloomFilterBits.splitBlockBuilder(KeyType.LONG, 2)
              : BloomFilterBits.builder(KeyType.LONG, 256, 3);
      first.putLong(1);
      BloomFilterBits base = first.build();
      long bitsBefore = base.bitCount();

      BloomFilterBits.Builder next = BloomFilterBits.builder(base);
      assertThat(next.format()).isEqualTo(format);
      assertThat(next.numBits()).isEqualTo(base.numBits());
      assertThat(next.numHashFunctions()).isEqualTo(base.numHashFunctions());
      assertThat(next.keyType()).isEqualTo(KeyType.LONG);
      assertThat(next.putLong(1)).as(format + ": the base's key is in the copy").isFalse();
      assertThat(next.putLong(2)).isTrue();
      BloomFilterBits grown = next.build();

      assertThat(base.bitCount()).isEqualTo(bitsBefore);
      assertThat(base.mightContainLong(2)).isFalse();
      assertThat(grown.mightContainLong(1)).isTrue();
      assertThat(grown.mightContainLong(2)).isTrue();
      assertThat(grown).isNotEqualTo(base);
      assertThat(grown.format()).isEqualTo(format);
    }
  }

  @Test
  void theDecoderMayHandOverOnlyAGeometryTheFormatDescribes() {
    assertThat(BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 1, new long[1]).numBits())
        .isEqualTo(64);
    assertThat(BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 255, new long[3]).numBits())
        .isEqualTo(192);
    BloomFilterBits split =
        BloomFilterBits.wrap(KeyType.STRING, FilterFormat.SPLIT_BLOCK, 8, new long[4]);
    assertThat(split.format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
    assertThat(split.numBits()).isEqualTo(256);
    assertThat(split.mightContainString("absent")).isFalse();

    assertThatThrownBy(
            () -> BloomFilterBits.wrap(KeyType.LONG, FilterFormat.SPLIT_BLOCK, 7, new long[4]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "a split-block filter has k = 8 and whole 32-byte blocks, got k = 7 and 4 words");
    assertThatThrownBy(
            () -> BloomFilterBits.wrap(KeyType.LONG, FilterFormat.SPLIT_BLOCK, 8, new long[6]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "a split-block filter has k = 8 and whole 32-byte blocks, got k = 8 and 6 words");
    assertThatThrownBy(() -> BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 0, new long[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numHashFunctions must be in 1..255, got 0");
    assertThatThrownBy(
            () -> BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 256, new long[1]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numHashFunctions must be in 1..255, got 256");
    assertThatThrownBy(() -> BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 3, new long[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a filter needs at least one 64-bit word");
    assertThatThrownBy(
            () -> BloomFilterBits.wrap(KeyType.LONG, FilterFormat.SPLIT_BLOCK, 8, new long[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("a filter needs at least one 64-bit word");
    assertThatThrownBy(() -> BloomFilterBits.wrap(null, FilterFormat.GUAVA, 3, new long[1]))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> BloomFilterBits.wrap(KeyType.LONG, null, 3, new long[1]))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void sizesRoundUpToWholeWordsAndBlocks() {
    assertThat(BloomFilterBits.builder(KeyType.LONG, 1, 1).numBits()).isEqualTo(64);
    assertThat(BloomFilterBits.builder(KeyType.LONG, 64, 1).numBits()).isEqualTo(64);
    assertThat(BloomFilterBits.builder(KeyType.LONG, 65, 1).numBits()).isEqualTo(128);
    BloomFilterBits.Builder split = BloomFilterBits.splitBlockBuilder(KeyType.LONG, 1);
    assertThat(split.numBits()).isEqualTo(256);
    assertThat(split.numHashFunctions()).isEqualTo(8);
    assertThat(split.format()).isEqualTo(FilterFormat.SPLIT_BLOCK);
    assertThat(
            BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(1000, 0.01)).numBits())
        .isEqualTo(SplitBlockSizing.forKeys(1000, 0.01).numBytes() * 8);
    for (long blocks : new long[] {0, -1, SplitBlockSizing.MAX_BLOCKS + 1}) {
      assertThatThrownBy(() -> BloomFilterBits.splitBlockBuilder(KeyType.LONG, blocks))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("numBlocks must be in 1..536870909, got " + blocks);
    }
    assertThatThrownBy(() -> BloomFilterBits.builder(KeyType.LONG, -1, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("numBits must be in 1..137438953408, got -1");
  }

  @Test
  void describesItselfByTypeLayoutSizeAndK() {
    assertThat(BloomFilterBits.builder(KeyType.LONG, 100, 4).build())
        .hasToString(
            "BloomFilterBits{keyType=LONG, format=Guava, numBits=128, numHashFunctions=4}");
    assertThat(BloomFilterBits.splitBlockBuilder(KeyType.STRING, 2).build())
        .hasToString(
            "BloomFilterBits{keyType=STRING, format=SplitBlock, numBits=512, numHashFunctions=8}");
  }

  @Test
  void filtersDifferingOnlyInLayoutOrKAreNotEqual() {
    long[] words = {1, 2, 3, 4};
    BloomFilterBits guava =
        BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 8, words.clone());
    BloomFilterBits split =
        BloomFilterBits.wrap(KeyType.LONG, FilterFormat.SPLIT_BLOCK, 8, words.clone());
    BloomFilterBits otherK =
        BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 7, words.clone());

    assertThat(guava).isEqualTo(BloomFilterBits.wrap(KeyType.LONG, FilterFormat.GUAVA, 8, words));
    assertThat(guava).isNotEqualTo(split);
    assertThat(guava).isNotEqualTo(otherK);
    assertThat(guava).isNotEqualTo(words);
  }

  @Test
  void batchLookupsRefuseAnyRangeOutsideTheArraysEvenAnEmptyOne() {
    for (FilterFormat format : FilterFormat.values()) {
      BloomFilterBits longs = empty(format, KeyType.LONG);
      BloomFilterBits strings = empty(format, KeyType.STRING);
      long[] longKeys = new long[8];
      String[] stringKeys = new String[8];
      boolean[] results = new boolean[8];
      int[][] ranges = {{0, -1}, {-1, 0}, {9, 0}, {5, 4}, {-4, 4}};
      for (int[] range : ranges) {
        String what = format + " from " + range[0] + " count " + range[1];
        assertThatThrownBy(() -> longs.mightContainLongs(longKeys, range[0], range[1], results))
            .as(what)
            .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(
                () -> strings.mightContainStrings(stringKeys, range[0], range[1], results))
            .as(what)
            .isInstanceOf(IndexOutOfBoundsException.class);
      }
      assertThatThrownBy(() -> longs.mightContainLongs(longKeys, 0, 8, new boolean[7]))
          .isInstanceOf(IndexOutOfBoundsException.class);
      // The whole range, and an empty one at the end, are fine.
      longs.mightContainLongs(longKeys, 0, 8, results);
      assertThat(results).containsOnly(false);
      longs.mightContainLongs(longKeys, 8, 0, new boolean[0]);
    }
  }

  @Test
  void batchesOfFewerKeysThanAGroupAnswerAsSingleLookups() {
    // Arrays exactly as long as the batch: nothing beyond them may be read or written.
    for (FilterFormat format : FilterFormat.values()) {
      BloomFilterBits.Builder longBuilder =
          format == FilterFormat.SPLIT_BLOCK
              ? BloomFilterBits.splitBlockBuilder(KeyType.LONG, 4)
              : BloomFilterBits.builder(KeyType.LONG, 1024, 3);
      BloomFilterBits.Builder stringBuilder =
          format == FilterFormat.SPLIT_BLOCK
              ? BloomFilterBits.splitBlockBuilder(KeyType.STRING, 4)
              : BloomFilterBits.builder(KeyType.STRING, 1024, 3);
      longBuilder.putLong(11);
      stringBuilder.putString("k11");
      BloomFilterBits longs = longBuilder.build();
      BloomFilterBits strings = stringBuilder.build();
      for (int count = 1; count <= 3; count++) {
        long[] longKeys = new long[count];
        String[] stringKeys = new String[count];
        for (int i = 0; i < count; i++) {
          longKeys[i] = 10 + i;
          stringKeys[i] = "k" + (10 + i);
        }
        boolean[] longResults = new boolean[count];
        boolean[] stringResults = new boolean[count];
        longs.mightContainLongs(longKeys, 0, count, longResults);
        strings.mightContainStrings(stringKeys, 0, count, stringResults);
        for (int i = 0; i < count; i++) {
          assertThat(longResults[i]).isEqualTo(longs.mightContainLong(longKeys[i]));
          assertThat(stringResults[i]).isEqualTo(strings.mightContainString(stringKeys[i]));
        }
        if (count >= 2) {
          assertThat(longResults[1]).as(format + ": the key added").isTrue();
          assertThat(stringResults[1]).as(format + ": the key added").isTrue();
        }
      }
    }
  }

  @Test
  void batchLookupsRefuseKeysOfTheOtherTypeInEitherLayout() {
    // A whole group of four: the batch path must check the type itself, not leave it to the tail.
    for (FilterFormat format : FilterFormat.values()) {
      BloomFilterBits longs = empty(format, KeyType.LONG);
      BloomFilterBits strings = empty(format, KeyType.STRING);
      assertThatThrownBy(
              () ->
                  longs.mightContainStrings(
                      new String[] {"a", "b", "c", "d"}, 0, 4, new boolean[4]))
          .as(format.toString())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("this filter holds Long keys; a String key cannot be added or looked up");
      assertThatThrownBy(() -> strings.mightContainLongs(new long[4], 0, 4, new boolean[4]))
          .as(format.toString())
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("this filter holds String keys; a Long key cannot be added or looked up");
    }
  }

  private static BloomFilterBits empty(FilterFormat format, KeyType keyType) {
    return format == FilterFormat.SPLIT_BLOCK
        ? BloomFilterBits.splitBlockBuilder(keyType, 4).build()
        : BloomFilterBits.builder(keyType, 1024, 3).build();
  }
}
