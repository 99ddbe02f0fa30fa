package io.bloomoperator.watch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application loads an exported payload (what {@code kubectl bloom export} writes: Guava's
 * {@code writeTo} bytes, or Parquet's split-block bitset) and gets the answers of the filter that
 * wrote it, without a cluster.
 */
class LiveBloomFilterFromFileTest {

  @TempDir Path dir;

  @Test
  void servesWhatGuavaWrote() throws IOException {
    BloomFilter<CharSequence> guava =
        BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), 10_000, 0.01);
    for (int i = 0; i < 10_000; i++) {
      guava.put("product-" + i);
    }
    Path file = dir.resolve("products.bin");
    try (OutputStream out = Files.newOutputStream(file)) {
      guava.writeTo(out);
    }

    LiveBloomFilter<String> filter =
        LiveBloomFilter.fromFile("products", LiveKeyType.STRING, FilterFormat.GUAVA, file);

    assertThat(filter.isReady()).isTrue();
    for (int i = 0; i < 10_000; i++) {
      assertThat(filter.mightContain("product-" + i)).isTrue();
    }
    for (int i = 0; i < 10_000; i++) {
      String absent = "absent-" + i;
      assertThat(filter.mightContain(absent)).as(absent).isEqualTo(guava.mightContain(absent));
    }
    assertThat(filter.currentManifest().orElseThrow().keyCount()).isBetween(9_500L, 10_500L);
  }

  @Test
  void servesWhatParquetWrote() throws IOException {
    long blocks = SplitBlockSizing.forKeys(5_000, 0.01).numBlocks();
    BlockSplitBloomFilter parquet = new BlockSplitBloomFilter((int) (blocks * 32));
    for (long i = 0; i < 5_000; i++) {
      parquet.insertHash(parquet.hash(i * 7919));
    }
    Path file = dir.resolve("ids.bin");
    try (OutputStream out = Files.newOutputStream(file)) {
      parquet.writeTo(out);
    }

    LiveBloomFilter<Long> filter =
        LiveBloomFilter.fromFile("ids", LiveKeyType.LONG, FilterFormat.SPLIT_BLOCK, file);

    for (long i = 0; i < 5_000; i++) {
      assertThat(filter.mightContain(i * 7919)).isTrue();
    }
    for (long i = 1; i < 5_000; i++) {
      long absent = -i;
      assertThat(filter.mightContain(absent)).isEqualTo(parquet.findHash(parquet.hash(absent)));
    }
  }

  @Test
  void refusesAFileThatIsNotAPayloadOfTheLayout() throws IOException {
    Path file = dir.resolve("garbage.bin");
    Files.write(file, new byte[] {1, 3, 0, 0, 0, 9, 0, 0}); // a header announcing 9 words, 2 bytes
    assertThatThrownBy(
            () -> LiveBloomFilter.fromFile("x", LiveKeyType.STRING, FilterFormat.GUAVA, file))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("is not a Guava payload");
    Path odd = dir.resolve("odd.bin");
    Files.write(odd, new byte[33]); // not whole 32-byte blocks
    assertThatThrownBy(
            () -> LiveBloomFilter.fromFile("x", LiveKeyType.LONG, FilterFormat.SPLIT_BLOCK, odd))
        .isInstanceOf(IOException.class);
  }

  @Test
  void sameAnswersAsTheBitsItWasWrittenFrom() throws IOException {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(1_000, 0.001));
    for (int i = 0; i < 1_000; i++) {
      builder.putString("k" + i);
    }
    BloomFilterBits bits = builder.build();
    Path file = dir.resolve("split.bin");
    try (OutputStream out = Files.newOutputStream(file)) {
      io.bloomoperator.snapshot.SnapshotEncoder.writeTo(bits, out);
    }
    LiveBloomFilter<String> filter =
        LiveBloomFilter.fromFile("split", LiveKeyType.STRING, FilterFormat.SPLIT_BLOCK, file);
    for (int i = 0; i < 5_000; i++) {
      assertThat(filter.mightContain("k" + i)).isEqualTo(bits.mightContainString("k" + i));
    }
  }
}
