package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The split-block layout bit by bit, from the Parquet specification rather than from Parquet's
 * code: which block a hash picks, which bit of each of the block's eight 32-bit words, when a probe
 * passes and when an insertion reports a change, and what each entry point refuses.
 */
class SplitBlockLayoutTest {

  /** The eight salts of the Parquet specification ("Split Block Bloom Filters"). */
  private static final int[] SPEC_SALTS = {
    0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31
  };

  private static final long[] HASHES = {
    0L, 1L, -1L, 0x0123456789abcdefL, 0xfedcba9876543210L, 0x8000000000000000L, 0x7fffffffL
  };

  @Test
  void aKeySetsBit_keyTimesSalt_shiftedRight27_inEachOfItsBlocksEightWords() {
    for (long hash : HASHES) {
      SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.LONG, 1);
      builder.putHash(hash);
      SplitBlockBits bits = builder.build();

      assertThat(words32(bits.toByteArray())).as("hash %x", hash).containsExactly(specWords(hash));
      assertThat(bits.bitCount()).isEqualTo(8);
      assertThat(bits.mightContainHash(hash)).isTrue();
    }
  }

  @Test
  void theBlockIsTheHighHalfOfTheHashScaledToTheBlockCount() {
    long blocks = 10;
    long[][] highHalfAndBlock = {
      {0x00000000L, 0}, {0x19999999L, 0}, {0x1999999aL, 1}, {0x80000000L, 5}, {0xffffffffL, 9}
    };
    for (long[] expected : highHalfAndBlock) {
      long hash = (expected[0] << 32) | 0x5bd1e995L;
      SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.LONG, blocks);
      builder.putHash(hash);
      int[] words = words32(builder.build().toByteArray());

      int[] block = Arrays.copyOfRange(words, (int) expected[1] * 8, (int) expected[1] * 8 + 8);
      assertThat(block).as("hash %x", hash).containsExactly(specWords(hash));
      assertThat(Arrays.stream(words).map(Integer::bitCount).sum()).isEqualTo(8);
    }
  }

  @Test
  void aProbePassesOnlyWhenAllEightBitsOfTheKeyAreSet() {
    for (long hash : HASHES) {
      int[] exact = specWords(hash);
      assertThat(probe(hash, exact)).isTrue();
      assertThat(probe(hash, allOnes())).isTrue();
      for (int word = 0; word < 8; word++) {
        int[] missingOne = exact.clone();
        missingOne[word] = 0;
        assertThat(probe(hash, missingOne)).as("hash %x, word %d cleared", hash, word).isFalse();
        int[] allButOne = allOnes();
        allButOne[word] = ~exact[word];
        assertThat(probe(hash, allButOne)).as("hash %x, only bit of word %d", hash, word).isFalse();
      }
      assertThat(probe(hash, new int[8])).isFalse();
    }
  }

  @Test
  void aPutReportsAChangeExactlyWhenOneOfTheEightBitsWasMissing() {
    for (long key : new long[] {0, 1, -1, 42, 123_456_789_012L}) {
      long hash = SplitBlockBits.hashLong(key);
      int[] exact = specWords(hash);
      for (int word = 0; word < 8; word++) {
        int[] start = allOnes();
        start[word] = ~exact[word];
        long[] words = longs(start);
        assertThat(SplitBlockBits.put(words, 1, hash)).as("hash %x, word %d", hash, word).isTrue();
        assertThat(words).containsOnly(-1L);

        long[] concurrent = longs(start);
        assertThat(putConcurrently(concurrent, key)).as("hash %x, word %d", hash, word).isTrue();
        assertThat(concurrent).containsOnly(-1L);
      }
      long[] full = longs(allOnes());
      assertThat(SplitBlockBits.put(full, 1, hash)).isFalse();
      assertThat(putConcurrently(full, key)).isFalse();
      long[] exactly = longs(exact);
      assertThat(SplitBlockBits.put(exactly, 1, hash)).isFalse();
      assertThat(putConcurrently(exactly, key)).isFalse();
      assertThat(exactly).containsExactly(longs(exact));
    }
  }

  @Test
  void everyInserterReportsTheFirstPutOfAKeyAsAChangeAndTheSecondAsNone() {
    BloomFilterBits.Builder longs = BloomFilterBits.splitBlockBuilder(KeyType.LONG, 4);
    assertThat(longs.putLong(42)).isTrue();
    assertThat(longs.putLong(42)).isFalse();
    KeyInserter concurrentLongs = longs.concurrent();
    assertThat(concurrentLongs.putLong(43)).isTrue();
    assertThat(concurrentLongs.putLong(43)).isFalse();
    assertThat(concurrentLongs.putLong(42)).isFalse();

    BloomFilterBits.Builder strings = BloomFilterBits.splitBlockBuilder(KeyType.STRING, 4);
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
    assertThat(built.bitCount()).isLessThanOrEqualTo(24);
  }

  /**
   * What a build partitioned by block range relies on: {@code blockOf} is the block {@code put}
   * writes, it grows with the hash's high half, and {@code putHashes} sets the bits (and counts the
   * unchanged keys) of putting the keys one by one.
   */
  @Test
  void putHashesSetsTheBitsOfPutsOneByOneInTheBlockThatBlockOfNames() {
    Random random = new Random(5);
    for (long blocks : new long[] {1, 3, 10, 1001}) {
      long[] hashes = new long[3000];
      for (int i = 0; i < hashes.length; i++) {
        hashes[i] = i % 7 == 0 && i > 0 ? hashes[i / 2] : random.nextLong();
      }
      int unchanged = 0;
      long[] words = new long[(int) blocks * 4];
      for (long hash : hashes) {
        long[] before = words.clone();
        SplitBlockBits.put(words, blocks, hash);
        int block = SplitBlockBits.blockOf(hash, blocks);
        for (int w = 0; w < words.length; w++) {
          if (w / 4 != block) {
            assertThat(words[w]).as("word %d outside block %d", w, block).isEqualTo(before[w]);
          }
        }
        if (Arrays.equals(before, words)) {
          unchanged++;
        }
      }
      BloomFilterBits.Builder batched = BloomFilterBits.splitBlockBuilder(KeyType.LONG, blocks);
      int counted = batched.putHashes(hashes, 0, 1000) + batched.putHashes(hashes, 1000, 2000);
      assertThat(batched.numBlocks()).isEqualTo(blocks);
      assertThat(counted).as("%d blocks", blocks).isEqualTo(unchanged);
      assertThat(batched.build().words()).containsExactly(words);
    }
    long previous = 0;
    for (long high = 0; high <= 0xffffffffL; high += 0x1000001L) {
      int block = SplitBlockBits.blockOf(high << 32 | 0xdeadL, 1001);
      assertThat(block).isBetween((int) previous, 1000);
      previous = block;
    }
    BloomFilterBits.Builder guava = BloomFilterBits.builder(KeyType.LONG, 1024, 3);
    assertThatThrownBy(guava::numBlocks).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> guava.putHashes(new long[1], 0, 1))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theUtf8HashIsTheStringHashOfTheDecodedText() {
    for (String key :
        new String[] {"", "a", "prodüct-12", "0123456789abcdefghijklmnopqrstuvwxyz"}) {
      byte[] utf8 = ("##" + key + "#").getBytes(StandardCharsets.UTF_8);
      assertThat(SplitBlockBits.hashUtf8(utf8, 2, utf8.length - 3))
          .isEqualTo(SplitBlockBits.hashString(key))
          .isEqualTo(Xxh64.hashString(key));
    }
    assertThat(SplitBlockBits.hashLong(7)).isEqualTo(Xxh64.hashLong(7));
  }

  @Test
  void everyEntryPointRefusesKeysOfTheOtherType() {
    SplitBlockBits.Builder longBuilder = SplitBlockBits.builder(KeyType.LONG, 1);
    SplitBlockBits.Builder stringBuilder = SplitBlockBits.builder(KeyType.STRING, 1);
    KeyInserter longInserter = longBuilder.concurrent();
    KeyInserter stringInserter = stringBuilder.concurrent();
    byte[] utf8 = {'x'};

    assertRefused(() -> longBuilder.putString("x"), "LONG", "STRING");
    assertRefused(() -> stringBuilder.putLong(1), "STRING", "LONG");
    assertRefused(() -> longInserter.putString("x"), "LONG", "STRING");
    assertRefused(() -> longInserter.putUtf8(utf8, 0, 1), "LONG", "STRING");
    assertRefused(() -> stringInserter.putLong(1), "STRING", "LONG");

    SplitBlockBits longs = longBuilder.build();
    SplitBlockBits strings = stringBuilder.build();
    assertRefused(() -> longs.mightContainString("x"), "LONG", "STRING");
    assertRefused(
        () -> longs.mightContainStrings(new String[4], 0, 4, new boolean[4]), "LONG", "STRING");
    assertRefused(() -> strings.mightContainLong(1), "STRING", "LONG");
    assertRefused(
        () -> strings.mightContainLongs(new long[4], 0, 4, new boolean[4]), "STRING", "LONG");
    // Nothing was set by the refused puts.
    assertThat(longs.bitCount()).isZero();
    assertThat(strings.bitCount()).isZero();
  }

  @Test
  void aBuiltFilterTakesNoMoreKeys() {
    SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.LONG, 2);
    builder.putLong(1);
    SplitBlockBits built = builder.build();

    assertThatThrownBy(() -> builder.putLong(2))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("already built");
    assertThatThrownBy(() -> builder.putHash(2)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(builder::concurrent).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(builder::build).isInstanceOf(IllegalStateException.class);
    assertThat(built.bitCount()).isEqualTo(8);
  }

  @Test
  void shapeAndIdentity() {
    SplitBlockBits.Builder builder = SplitBlockBits.builder(KeyType.LONG, 3);
    builder.putLong(5);
    SplitBlockBits bits = builder.build();

    assertThat(bits.keyType()).isEqualTo(KeyType.LONG);
    assertThat(bits.numBlocks()).isEqualTo(3);
    assertThat(bits.numBytes()).isEqualTo(96);
    assertThat(bits.toByteArray()).hasSize(96);
    assertThat(bits).hasToString("SplitBlockBits[LONG, 3 blocks]");

    SplitBlockBits same = SplitBlockBits.fromByteArray(KeyType.LONG, bits.toByteArray());
    assertThat(same).isEqualTo(bits).hasSameHashCodeAs(bits);
    assertThat(same.numBlocks()).isEqualTo(3);
    assertThat(SplitBlockBits.fromByteArray(KeyType.STRING, bits.toByteArray())).isNotEqualTo(bits);
    assertThat(SplitBlockBits.builder(KeyType.LONG, 3).build()).isNotEqualTo(bits);
    assertThat(bits).isNotEqualTo(bits.toByteArray());
  }

  private static void assertRefused(
      org.assertj.core.api.ThrowableAssert.ThrowingCallable call, String holds, String asked) {
    assertThatThrownBy(call)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("this filter holds " + holds + " keys, not " + asked + " keys");
  }

  /** The block of one key as the specification sets it: word i gets bit (key * salt_i) >>> 27. */
  private static int[] specWords(long hash) {
    int key = (int) hash;
    int[] words = new int[8];
    for (int i = 0; i < 8; i++) {
      words[i] = 1 << ((key * SPEC_SALTS[i]) >>> 27);
    }
    return words;
  }

  private static int[] allOnes() {
    int[] words = new int[8];
    Arrays.fill(words, -1);
    return words;
  }

  /** One block given as its eight 32-bit words, probed through the serial form. */
  private static boolean probe(long hash, int[] block) {
    boolean answer =
        SplitBlockBits.fromByteArray(KeyType.LONG, bytes(block)).mightContainHash(hash);
    long[] w = longs(block);
    assertThat(SplitBlockBits.blockHolds((int) hash, w[0], w[1], w[2], w[3]))
        .as("blockHolds agrees")
        .isEqualTo(answer);
    return answer;
  }

  /** A put through the atomic inserter of a one-block filter whose words are {@code words}. */
  private static boolean putConcurrently(long[] words, long key) {
    return SplitBlockBits.Builder.concurrent(KeyType.LONG, words, words.length / 4).putLong(key);
  }

  private static int[] words32(byte[] bytes) {
    int[] words = new int[bytes.length / 4];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words);
    return words;
  }

  private static byte[] bytes(int[] words) {
    ByteBuffer out = ByteBuffer.allocate(words.length * 4).order(ByteOrder.LITTLE_ENDIAN);
    out.asIntBuffer().put(words);
    return out.array();
  }

  /** Parquet's words are 32-bit little-endian; the class keeps two of them per long, low first. */
  private static long[] longs(int[] words) {
    long[] longs = new long[words.length / 2];
    ByteBuffer.wrap(bytes(words)).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(longs);
    return longs;
  }
}
