package io.bloomoperator.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The lookups for keys held as bytes or char sequences ({@code mightContainUtf8}, {@code
 * mightContainChars}, {@code mightContainUtf8s}) answer exactly as {@code mightContainString} does
 * for the same key, in both layouts: present and absent keys, ASCII and not, every length from 0 to
 * past the hashes' 32- and 16-byte blocks, keys at either edge of their array or buffer.
 */
class ByteKeyLookupTest {

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void everyEntryPointAnswersAsMightContainString(FilterFormat format) {
    List<String> keys = keys(new Random(1), 3_000);
    BloomFilterBits bits = build(format, keys.subList(0, 1_500), 1_500);
    int maybe = assertAgree(bits, keys);
    // The present half answers true, and most of the absent half false: the answers compared are
    // not all alike.
    assertThat(maybe).isGreaterThanOrEqualTo(1_500).isLessThan(1_700);
  }

  /**
   * Runs every new entry point of {@code bits} over {@code keys} and compares each answer with
   * {@code mightContainString}; returns how many keys were answered "maybe present".
   */
  static int assertAgree(BloomLookup bits, List<String> keys) {
    int maybe = 0;
    Random random = new Random(2);
    for (String key : keys) {
      boolean expected = bits.mightContainString(key);
      maybe += expected ? 1 : 0;
      byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
      assertThat(bits.mightContainUtf8(utf8, 0, utf8.length)).as(key).isEqualTo(expected);
      // The key in the middle of a larger array, and flush against its end.
      int before = random.nextInt(9);
      byte[] framed = frame(utf8, before, random.nextInt(9), random);
      assertThat(bits.mightContainUtf8(framed, before, utf8.length)).as(key).isEqualTo(expected);
      byte[] atEnd = frame(utf8, before, 0, random);
      assertThat(bits.mightContainUtf8(atEnd, before, utf8.length)).as(key).isEqualTo(expected);
      for (ByteBuffer buffer : buffers(framed, before, utf8.length)) {
        int position = buffer.position();
        int limit = buffer.limit();
        ByteOrder order = buffer.order();
        assertThat(bits.mightContainUtf8(buffer)).as("%s in %s", key, buffer).isEqualTo(expected);
        assertThat(buffer.position()).isEqualTo(position);
        assertThat(buffer.limit()).isEqualTo(limit);
        assertThat(buffer.order()).isEqualTo(order);
      }
      assertThat(bits.mightContainChars(key)).as(key).isEqualTo(expected);
      assertThat(bits.mightContainChars(new StringBuilder(key))).as(key).isEqualTo(expected);
      assertThat(bits.mightContainChars(CharBuffer.wrap("<" + key + ">", 1, key.length() + 1)))
          .as(key)
          .isEqualTo(expected);
    }
    assertBatchAgrees(bits, keys);
    return maybe;
  }

  /** All keys packed into one array with gaps; batches at several offsets and sizes. */
  private static void assertBatchAgrees(BloomLookup bits, List<String> keys) {
    int n = keys.size();
    int[] offsets = new int[n + 3];
    int[] lengths = new int[n + 3];
    byte[] data = pack(keys, offsets, lengths, 3);
    boolean[] expected = new boolean[n];
    for (int i = 0; i < n; i++) {
      expected[i] = bits.mightContainString(keys.get(i));
    }
    for (int count : new int[] {0, 1, 3, 4, 5, 63, n}) {
      for (int skip : new int[] {0, 1, n - count}) {
        if (skip + count > n) {
          continue;
        }
        boolean[] results = new boolean[count + 1];
        results[count] = true; // past the batch: must stay as it was
        bits.mightContainUtf8s(data, offsets, lengths, 3 + skip, count, results);
        assertThat(Arrays.copyOf(results, count))
            .as("count %d from %d", count, skip)
            .isEqualTo(Arrays.copyOfRange(expected, skip, skip + count));
        assertThat(results[count]).isTrue();
      }
    }
  }

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void badRangesAndWrongKeyTypesAreRefusedBeforeAnyAnswerIsWritten(FilterFormat format) {
    BloomFilterBits bits = build(format, List.of("a", "b"), 10);
    byte[] data = "abc".getBytes(StandardCharsets.US_ASCII);
    assertThatThrownBy(() -> bits.mightContainUtf8(data, -1, 1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> bits.mightContainUtf8(data, 2, 2))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> bits.mightContainUtf8(data, 0, -1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(bits.mightContainUtf8(data, 3, 0)).isEqualTo(bits.mightContainString(""));

    boolean[] results = {true, false, true};
    // The third key runs past the end of data: nothing is written, not even the first answers.
    assertThatThrownBy(
            () ->
                bits.mightContainUtf8s(
                    data, new int[] {0, 1, 2}, new int[] {1, 1, 2}, 0, 3, results))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(results).containsExactly(true, false, true);
    assertThatThrownBy(
            () ->
                bits.mightContainUtf8s(data, new int[] {0, 1}, new int[] {1, 1, 1}, 0, 3, results))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(
            () ->
                bits.mightContainUtf8s(
                    data, new int[] {0, 1}, new int[] {1, 1}, 0, 2, new boolean[1]))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(
            () -> bits.mightContainUtf8s(data, new int[] {0, 1}, new int[] {1, 1}, 1, 2, results))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(results).containsExactly(true, false, true);

    BloomFilterBits longs =
        format == FilterFormat.SPLIT_BLOCK
            ? BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(10, 0.01)).build()
            : BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(10, 0.01)).build();
    assertThatThrownBy(() -> longs.mightContainUtf8(data, 0, 1))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longs.mightContainUtf8(ByteBuffer.wrap(data)))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longs.mightContainChars("a"))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(
            () -> longs.mightContainUtf8s(data, new int[] {0}, new int[] {1}, 0, 1, results))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void splitBlockBitsAnswerAsTheFilterInItsLayout() {
    List<String> keys = keys(new Random(3), 1_000);
    BloomFilterBits bits = build(FilterFormat.SPLIT_BLOCK, keys.subList(0, 500), 500);
    SplitBlockBits split =
        SplitBlockBits.fromByteArray(KeyType.STRING, SnapshotEncoder.toByteArray(bits));
    int[] offsets = new int[keys.size()];
    int[] lengths = new int[keys.size()];
    byte[] data = pack(keys, offsets, lengths, 0);
    boolean[] batch = new boolean[keys.size()];
    split.mightContainUtf8s(data, offsets, lengths, 0, keys.size(), batch);
    for (int i = 0; i < keys.size(); i++) {
      boolean expected = bits.mightContainString(keys.get(i));
      assertThat(split.mightContainUtf8(data, offsets[i], lengths[i])).isEqualTo(expected);
      assertThat(batch[i]).isEqualTo(expected);
    }
  }

  /**
   * Keys of every length 0..80 (past XXH64's 32-byte stripes and Murmur3's 16-byte blocks, with
   * every tail), ASCII and not: Latin-1, CJK, a surrogate pair, an unpaired surrogate (which the
   * String lookups encode as '?', as Guava's funnel does), a non-ASCII char only in the last place.
   */
  static List<String> keys(Random random, int count) {
    String[][] alphabets = {
      "abcdefghijklmnopqrstuvwxyz0123456789-@.".split(""),
      {"é", "ü", "ß", "\u007F", "\u0080"},
      {"日", "本", "語"},
      {"😀", "\uD800"}
    };
    List<String> keys = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      int length = i % 81;
      StringBuilder key = new StringBuilder();
      boolean ascii = i % 3 != 0;
      for (int j = 0; j < length; j++) {
        String[] alphabet = ascii ? alphabets[0] : alphabets[random.nextInt(alphabets.length)];
        key.append(alphabet[random.nextInt(alphabet.length)]);
      }
      if (i % 7 == 0 && length > 0) {
        key.setCharAt(key.length() - 1, 'ü');
      }
      keys.add(key.toString());
    }
    return keys;
  }

  static BloomFilterBits build(FilterFormat format, List<String> keys, int expected) {
    BloomFilterBits.Builder builder =
        format == FilterFormat.SPLIT_BLOCK
            ? BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(expected, 0.01))
            : BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(expected, 0.01));
    keys.forEach(builder::putString);
    return builder.build();
  }

  /** {@code utf8} with {@code before} and {@code after} random bytes around it. */
  private static byte[] frame(byte[] utf8, int before, int after, Random random) {
    byte[] framed = new byte[before + utf8.length + after];
    random.nextBytes(framed);
    System.arraycopy(utf8, 0, framed, before, utf8.length);
    return framed;
  }

  /** The key bytes {@code framed[offset, offset + length)} in every kind of buffer. */
  private static List<ByteBuffer> buffers(byte[] framed, int offset, int length) {
    List<ByteBuffer> buffers = new ArrayList<>();
    buffers.add(ByteBuffer.wrap(framed, offset, length)); // position > 0, limit < capacity
    ByteBuffer slice = ByteBuffer.wrap(framed).position(offset).slice(); // arrayOffset > 0
    buffers.add(slice.limit(length));
    buffers.add(ByteBuffer.wrap(framed, offset, length).asReadOnlyBuffer()); // no array
    for (ByteOrder order : new ByteOrder[] {ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN}) {
      ByteBuffer direct = ByteBuffer.allocateDirect(framed.length).order(order);
      direct.put(framed).position(offset).limit(offset + length);
      buffers.add(direct);
      ByteBuffer flush = ByteBuffer.allocateDirect(length).order(order); // ends at capacity
      flush.put(framed, offset, length).flip();
      buffers.add(flush);
    }
    return buffers;
  }

  /** The keys' UTF-8 bytes one after the other, with a byte between each, from index {@code at}. */
  private static byte[] pack(List<String> keys, int[] offsets, int[] lengths, int at) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (int i = 0; i < keys.size(); i++) {
      byte[] utf8 = keys.get(i).getBytes(StandardCharsets.UTF_8);
      out.write('|');
      offsets[at + i] = out.size();
      lengths[at + i] = utf8.length;
      out.writeBytes(utf8);
    }
    return out.toByteArray();
  }
}
