package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A {@link LiveBloomFilter}'s lookups of keys held as bytes, buffers and char sequences answer as
 * {@link LiveBloomFilter#mightContain} does for the same String, in both layouts, with keys added
 * locally (ASCII and not) answered true, and count as lookups.
 */
class ByteKeyLiveLookupTest {

  @TempDir Path dir;

  @ParameterizedTest
  @EnumSource(FilterFormat.class)
  void bytesBuffersAndCharsAnswerAsMightContainAlsoForLocalAdds(FilterFormat format)
      throws Exception {
    List<String> keys = keys(new Random(11), 2_000);
    LiveBloomFilter<String> live = serve(format, keys.subList(0, 1_000));
    // Absent keys held locally, ASCII and not, and one that is the same text as a key asked for
    // through every entry point below.
    List<String> held = new ArrayList<>(keys.subList(1_900, 2_000));
    assertThat(live.addLocal(held)).isEqualTo(held.size());

    int maybe = 0;
    for (String key : keys) {
      boolean expected = live.mightContain(key);
      maybe += expected ? 1 : 0;
      byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
      byte[] framed = new byte[utf8.length + 4];
      System.arraycopy(utf8, 0, framed, 2, utf8.length);
      assertThat(live.mightContainUtf8(framed, 2, utf8.length)).as(key).isEqualTo(expected);
      ByteBuffer heap = ByteBuffer.wrap(framed, 2, utf8.length);
      assertThat(live.mightContainUtf8(heap)).as(key).isEqualTo(expected);
      assertThat(heap.position()).isEqualTo(2);
      assertThat(heap.limit()).isEqualTo(2 + utf8.length);
      ByteBuffer direct = ByteBuffer.allocateDirect(utf8.length).order(ByteOrder.BIG_ENDIAN);
      direct.put(utf8).flip();
      assertThat(live.mightContainUtf8(direct)).as(key).isEqualTo(expected);
      assertThat(direct.position()).isZero();
      assertThat(live.mightContainChars(new StringBuilder(key))).as(key).isEqualTo(expected);
      assertThat(live.mightContainChars(CharBuffer.wrap(key))).as(key).isEqualTo(expected);
    }
    // Present keys and held keys answer true; most other absent keys do not.
    assertThat(maybe).isGreaterThanOrEqualTo(1_100).isLessThan(1_200);
    for (String key : held) {
      assertThat(live.mightContainChars(new StringBuilder(key))).as(key).isTrue();
      byte[] utf8 = key.getBytes(StandardCharsets.UTF_8);
      assertThat(live.mightContainUtf8(utf8, 0, utf8.length)).as(key).isTrue();
    }
    // Every call counted as one lookup, answered true as often as mightContain answered true.
    assertThat(live.lookups()).isEqualTo(6L * keys.size() + 2L * held.size());
    assertThat(live.maybePresent()).isEqualTo(6L * maybe + 2L * held.size());

    int[] offsets = new int[keys.size()];
    int[] lengths = new int[keys.size()];
    byte[] data = pack(keys, offsets, lengths);
    boolean[] results = new boolean[keys.size() - 5];
    String[] strings = keys.toArray(new String[0]);
    boolean[] expected = new boolean[results.length];
    live.mightContainAll(strings, 5, results.length, expected);
    assertThat(live.mightContainAllUtf8(data, offsets, lengths, 5, results.length, results))
        .isEqualTo(countTrue(expected));
    assertThat(results).isEqualTo(expected);
  }

  @Test
  void badRangesAndLongFiltersAreRefused() throws Exception {
    LiveBloomFilter<String> live = serve(FilterFormat.SPLIT_BLOCK, List.of("a"));
    byte[] data = {'a', 'b'};
    assertThatThrownBy(() -> live.mightContainUtf8(data, 1, 2))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> live.mightContainUtf8(data, -1, 1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    boolean[] results = {false, true};
    assertThatThrownBy(
            () -> live.mightContainAllUtf8(data, new int[] {0, 1}, new int[] {1, 2}, 0, 2, results))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(results).containsExactly(false, true);
    assertThat(live.lookups()).isZero();

    LiveBloomFilter<Long> longs = LiveBloomFilter.fixed("ids", LiveKeyType.LONG, List.of(1L));
    assertThatThrownBy(() -> longs.mightContainUtf8(data, 0, 1))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longs.mightContainUtf8(ByteBuffer.wrap(data)))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> longs.mightContainChars("1"))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(
            () -> longs.mightContainAllUtf8(data, new int[] {0}, new int[] {1}, 0, 1, results))
        .isInstanceOf(IllegalStateException.class);
  }

  private LiveBloomFilter<String> serve(FilterFormat format, List<String> keys) throws Exception {
    BloomFilterBits.Builder builder =
        format == FilterFormat.SPLIT_BLOCK
            ? BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(keys.size(), 0.01))
            : BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(keys.size(), 0.01));
    keys.forEach(builder::putString);
    Path payload = dir.resolve(format + ".payload");
    Files.write(payload, SnapshotEncoder.toByteArray(builder.build()));
    return LiveBloomFilter.fromFile("ids", LiveKeyType.STRING, format, payload);
  }

  /** ASCII and non-ASCII keys of lengths 0..70 (see the snapshot module's ByteKeyLookupTest). */
  private static List<String> keys(Random random, int count) {
    // Whole code points, and no unpaired surrogate: its UTF-8 bytes ('?') are not the same text,
    // so a key held locally with one cannot be asked for as bytes.
    String[] ascii = "abcdefghijklmnopqrstuvwxyz0123456789-@.".split("");
    String[] other = {"é", "ü", "日", "本", "😀"};
    List<String> keys = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      String[] alphabet = i % 2 == 0 ? ascii : other;
      StringBuilder key = new StringBuilder("k" + i + "-");
      for (int j = i % 71; j > 0; j--) {
        key.append(alphabet[random.nextInt(alphabet.length)]);
      }
      keys.add(key.toString());
    }
    return keys;
  }

  private static byte[] pack(List<String> keys, int[] offsets, int[] lengths) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (int i = 0; i < keys.size(); i++) {
      byte[] utf8 = keys.get(i).getBytes(StandardCharsets.UTF_8);
      offsets[i] = out.size();
      lengths[i] = utf8.length;
      out.writeBytes(utf8);
    }
    return out.toByteArray();
  }

  private static int countTrue(boolean[] answers) {
    int count = 0;
    for (boolean answer : answers) {
      count += answer ? 1 : 0;
    }
    return count;
  }
}
