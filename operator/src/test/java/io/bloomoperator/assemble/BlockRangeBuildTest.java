package io.bloomoperator.assemble;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.source.BodySource;
import io.bloomoperator.source.KeySource;
import io.bloomoperator.source.LineParser;
import io.bloomoperator.source.SourceException;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A split-block build with keys routed by block range to the thread that holds the range ({@link
 * BlockRangeInserts}) gives the payload of one thread setting each key's bits as it comes, byte for
 * byte (same sha256), on any number of threads (1 too: hashes buffered) and any number of blocks
 * (also fewer than the threads, or not a multiple of them); every key inserted is found; what it
 * holds of hashes stays within its bound; and a failing source leaves no thread writing.
 */
class BlockRangeBuildTest {

  private static final int[] THREADS = {1, 2, 3, 4, 7};

  /** Block counts: one, fewer than 7 threads, primes, and one not a multiple of 2, 3, 4 or 7. */
  private static final long[] BLOCKS = {1, 3, 6, 1_009, 65_537, 100_003};

  @ParameterizedTest
  @EnumSource(KeyType.class)
  void sameSha256AsOneThreadForAnyThreadsAndBlocks(KeyType type) throws Exception {
    byte[] body = ParallelBuildTest.body(new Random(17), 300_000);
    for (long blocks : BLOCKS) {
      Built one = fill(BodySource.of(body, 1024), type, blocks, 0);
      for (int threads : THREADS) {
        for (KeySource source :
            List.of(
                BodySource.of(body, 1024),
                ParallelBuildTest.smallReads(() -> new ByteArrayInputStream(body)))) {
          Built built = fill(source, type, blocks, threads);
          assertThat(built.sha256)
              .as("%s keys, %d blocks, %d threads", type, blocks, threads)
              .isEqualTo(one.sha256);
          assertThat(built.keys).isEqualTo(one.keys);
          assertThat(built.malformed).isEqualTo(one.malformed);
          assertThat(built.peakHashBytes).as("hashes were routed").isPositive();
        }
      }
    }
  }

  /** The operator's path: sized by the request, counts and progress those of one thread. */
  @ParameterizedTest
  @EnumSource(KeyType.class)
  void theBuildOfTheOperatorGivesThePayloadCountsAndProgressOfOneThread(KeyType type)
      throws Exception {
    byte[] body = ParallelBuildTest.body(new Random(7), 1_500_000);
    FilterBuilder.Request request =
        new FilterBuilder.Request(
            type, 0.01, null, 1_000_000, 1L << 30, null, FilterFormat.SPLIT_BLOCK);
    List<Long> expectedProgress = new ArrayList<>();
    FilterBuilder.Result expected =
        new FilterBuilder(expectedProgress::add)
            .build(ParallelBuildTest.lineByLine(BodySource.of(body, 1024)), request);
    assertThat(expected.keys()).isGreaterThan(FilterBuilder.PROGRESS_EVERY);
    long distinct = distinctKeys(body, type);
    Built oneByOne = oneByOne(BodySource.of(body, 1024), request, expected.keys());
    assertThat(SnapshotEncoder.sha256(expected.bits())).isEqualTo(oneByOne.sha256);
    assertThat(expected.probableDuplicates())
        .as("exact on one thread")
        .isEqualTo(oneByOne.unchanged);

    for (int threads : THREADS) {
      List<Long> progress = new ArrayList<>();
      FilterBuilder.Result built =
          new FilterBuilder(progress::add, BuildWorkers.of(threads, 1))
              .build(BodySource.of(body, 1024), request);
      assertThat(SnapshotEncoder.sha256(built.bits()))
          .as("%d threads", threads)
          .isEqualTo(SnapshotEncoder.sha256(expected.bits()));
      assertThat(built.keys()).isEqualTo(expected.keys());
      assertThat(built.malformed()).isEqualTo(expected.malformed());
      assertThat(built.nulls()).isEqualTo(expected.nulls());
      assertThat(progress).isEqualTo(expectedProgress);
      // One thread at a time sets a block's bits, so a key's second insert always finds them set.
      assertThat(built.probableDuplicates())
          .as("%d threads", threads)
          .isGreaterThanOrEqualTo(built.keys() - distinct)
          .isLessThanOrEqualTo(expected.probableDuplicates() + expected.keys() / 100);
    }
  }

  /** Random key sets, block counts, threads and read sizes; every key inserted is found. */
  @Test
  void randomKeySetsGiveTheBitsOfOneThreadAndNoFalseNegative() throws Exception {
    Random seeds = new Random(31);
    for (int round = 0; round < 24; round++) {
      long seed = seeds.nextLong();
      Random random = new Random(seed);
      KeyType type = random.nextBoolean() ? KeyType.STRING : KeyType.LONG;
      int count = random.nextInt(120_000);
      List<String> keys = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        keys.add(
            i > 0 && random.nextInt(10) == 0
                ? keys.get(random.nextInt(i))
                : randomKey(random, type));
      }
      byte[] body = lines(keys);
      long blocks = 1 + random.nextInt(random.nextBoolean() ? 12 : 20_000);
      int threads = 2 + random.nextInt(6);
      KeySource source =
          random.nextBoolean()
              ? BodySource.of(body, 1024)
              : ParallelBuildTest.smallReads(() -> new ByteArrayInputStream(body));
      String what =
          String.format(
              "seed %d: %d %s keys, %d blocks, %d threads", seed, count, type, blocks, threads);

      Built one = fill(BodySource.of(body, 1024), type, blocks, 0);
      Built built = fill(source, type, blocks, threads);
      assertThat(built.sha256).as(what).isEqualTo(one.sha256);
      assertThat(built.keys).as(what).isEqualTo(count);
      for (String key : keys) {
        boolean found =
            type == KeyType.STRING
                ? built.bits.mightContainString(key)
                : built.bits.mightContainLong(Long.parseLong(key));
        assertThat(found).as("%s: key %s", what, key).isTrue();
      }
    }
  }

  /** Rows one by one (JDBC) then blocks: the reader's rows go through the same routes. */
  @ParameterizedTest
  @EnumSource(KeyType.class)
  void rowsThenBlocksGiveTheBitsOfOneThread(KeyType type) throws Exception {
    byte[] body = ParallelBuildTest.body(new Random(13), 600_000);
    FilterBuilder.Request request =
        new FilterBuilder.Request(
            type, 0.01, 2_000_000L, 1_000_000, 1L << 30, null, FilterFormat.SPLIT_BLOCK);
    for (KeySource source :
        new KeySource[] {
          ParallelBuildTest.rows(type, 400_000, null), ParallelBuildTest.rows(type, 400_000, body)
        }) {
      FilterBuilder.Result expected = new FilterBuilder().build(source, request);
      assertThat(SnapshotEncoder.sha256(expected.bits()))
          .isEqualTo(oneByOne(source, request, 2_000_000L).sha256);
      for (int threads : new int[] {2, 3, 7}) {
        FilterBuilder.Result built =
            new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1)).build(source, request);
        assertThat(SnapshotEncoder.sha256(built.bits()))
            .as("%d threads", threads)
            .isEqualTo(SnapshotEncoder.sha256(expected.bits()));
        assertThat(built.keys()).isEqualTo(expected.keys());
        assertThat(built.nulls()).isEqualTo(expected.nulls()).isEqualTo(400);
        assertThat(built.malformed()).isEqualTo(expected.malformed());
      }
    }
  }

  @Test
  void theMalformedKeyLimitFailsAtTheSameLine() throws Exception {
    byte[] body = ParallelBuildTest.body(new Random(11), 1_200_000);
    for (long max : new long[] {0, 3, 1000}) {
      FilterBuilder.Request request =
          new FilterBuilder.Request(
              KeyType.LONG, 0.01, 2_000_000L, max, 1L << 30, null, FilterFormat.SPLIT_BLOCK);
      String expected =
          ParallelBuildTest.failure(
              new FilterBuilder(),
              ParallelBuildTest.lineByLine(BodySource.of(body, 1024)),
              request);
      assertThat(expected).contains("MalformedKeys");
      for (int threads : new int[] {2, 7}) {
        assertThat(
                ParallelBuildTest.failure(
                    new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1)),
                    BodySource.of(body, 1024),
                    request))
            .isEqualTo(expected);
      }
    }
  }

  /**
   * Hash buffers held at once stay within threads × (threads + 1) × 8 KiB (what docs/security.md
   * adds to a build slot's source data), whatever the number of keys; the source data held keeps
   * its own bound.
   */
  @Test
  void theHashesHeldStayWithinTheirBound() throws Exception {
    for (int threads : new int[] {1, 2, 3, 4, 7}) {
      for (long blocks : new long[] {5, 200_003}) {
        Built built =
            fill(BodySource.generated("key-", 2_000_000), KeyType.STRING, blocks, threads);
        long bound = (long) threads * (threads + 1) * BlockRangeInserts.BUFFER_HASHES * Long.BYTES;
        System.out.printf(
            "block ranges, %d threads, %d blocks: peak hashes held %d bytes (bound %d),"
                + " source data %d bytes%n",
            threads, blocks, built.peakHashBytes, bound, built.peakHeldBytes);
        assertThat(built.peakHashBytes)
            .as("%d threads, %d blocks", threads, blocks)
            .isPositive()
            .isLessThanOrEqualTo(bound);
        assertThat(built.peakHeldBytes)
            .isLessThanOrEqualTo(2L * threads * (BlockBatch.BYTES + 512 * 1024));
        assertThat(built.keys).isEqualTo(2_000_000);
      }
    }
  }

  /**
   * A source whose threads put their keys through lanes (a partitioned jdbc read: each reading
   * thread hashes its own keys and routes them to the range claimants): the payload and counts of
   * one thread for 1, 2 and 4 parts on builds of 1, 2 and 4 threads, through the operator's path
   * too; the hashes held stay within threads × (threads + parts + 1) × 8 KiB, each reading thread
   * adding one buffer per range (docs/security.md).
   */
  @ParameterizedTest
  @EnumSource(KeyType.class)
  void aSourceReadingOnSeveralThreadsGivesThePayloadOfOneThreadWithinTheBound(KeyType type)
      throws Exception {
    byte[] body = ParallelBuildTest.body(new Random(23), 100_000);
    for (int parts : new int[] {1, 2, 4}) {
      Built one = fill(ParallelBuildTest.lanes(400_000, body, 0, parts), type, 100_003, 0);
      for (int threads : new int[] {1, 2, 4}) {
        Built built =
            fill(ParallelBuildTest.lanes(400_000, body, parts, parts), type, 100_003, threads);
        String what = String.format("%s keys, %d parts, %d threads", type, parts, threads);
        assertThat(built.sha256).as(what).isEqualTo(one.sha256);
        assertThat(built.keys).as(what).isEqualTo(one.keys);
        assertThat(built.malformed).as(what).isEqualTo(one.malformed);
        long bound =
            (long) threads * (threads + parts + 1) * BlockRangeInserts.BUFFER_HASHES * Long.BYTES;
        System.out.printf(
            "block ranges, %d threads, %d source threads: peak hashes held %d bytes (bound %d)%n",
            threads, parts, built.peakHashBytes, bound);
        assertThat(built.peakHashBytes).as(what).isPositive().isLessThanOrEqualTo(bound);

        FilterBuilder.Request request =
            new FilterBuilder.Request(
                type, 0.01, null, 1_000_000, 1L << 30, null, FilterFormat.SPLIT_BLOCK);
        FilterBuilder.Result expected =
            new FilterBuilder().build(ParallelBuildTest.lanes(400_000, body, 0, parts), request);
        FilterBuilder.Result operator =
            new FilterBuilder(k -> {}, BuildWorkers.of(threads, 1))
                .build(ParallelBuildTest.lanes(400_000, body, parts, parts), request);
        assertThat(SnapshotEncoder.sha256(operator.bits()))
            .as(what)
            .isEqualTo(SnapshotEncoder.sha256(expected.bits()));
        assertThat(operator.keys()).isEqualTo(expected.keys());
        assertThat(operator.malformed()).isEqualTo(expected.malformed());
        assertThat(operator.nulls()).isEqualTo(expected.nulls()).isEqualTo(400);
      }
    }
  }

  @Test
  void aFailingSourceLeavesNoThreadWriting() throws Exception {
    KeySource failing = ParallelBuildTest.resetAfter(2_000_000);
    for (int threads : new int[] {2, 4, 7}) {
      BloomFilterBits.Builder builder = BloomFilterBits.splitBlockBuilder(KeyType.STRING, 30_011);
      ParallelFill fill = fill(builder, KeyType.STRING, threads);
      try (fill) {
        assertThatThrownBy(() -> failing.readKeys(fill)).hasMessageContaining("connection reset");
      }
      BloomFilterBits bits = builder.build();
      String atClose = SnapshotEncoder.sha256(bits);
      long setAtClose = bits.bitCount();
      Thread.sleep(50);
      assertThat(SnapshotEncoder.sha256(bits)).isEqualTo(atClose);
      assertThat(setAtClose).as("keys were inserted before the failure").isPositive();
    }
    FilterBuilder.Request request =
        new FilterBuilder.Request(
            KeyType.STRING, 0.01, 3_000_000L, 0, 1L << 30, null, FilterFormat.SPLIT_BLOCK);
    assertThat(
            ParallelBuildTest.failure(
                new FilterBuilder(k -> {}, BuildWorkers.of(4, 1)), failing, request))
        .contains("connection reset");
  }

  @Test
  void rangesAreContiguousDisjointAndAsManyAsBlocksAtMost() {
    for (long blocks : new long[] {1, 2, 3, 6, 7, 1_009, 4_194_301, 536_870_909}) {
      for (int owners : THREADS) {
        BlockRanges ranges = new BlockRanges(blocks, owners);
        assertThat(ranges.count()).isEqualTo((int) Math.min(owners, blocks));
        assertThat(ranges.rangeOfBlock(0)).isZero();
        assertThat(ranges.rangeOfBlock(blocks - 1)).isBetween(0, ranges.count() - 1);
        long step = Math.max(1, blocks / 5_000);
        int previous = 0;
        for (long b = 0; b < blocks; b += step) {
          int range = ranges.rangeOfBlock(b);
          assertThat(range).as("block %d of %d", b, blocks).isBetween(previous, previous + 1);
          previous = range;
        }
        if (blocks <= 10_000) {
          assertThat(ranges.rangeOfBlock(blocks - 1)).isEqualTo(ranges.count() - 1);
        }
      }
    }
    Random random = new Random(3);
    BlockRanges ranges = new BlockRanges(1_009, 4);
    for (int i = 0; i < 100_000; i++) {
      long hash = random.nextLong();
      assertThat(ranges.rangeOf(hash))
          .isEqualTo(ranges.rangeOfBlock(SplitBlockBits.blockOf(hash, 1_009)));
    }
  }

  /** What one fill produced. */
  private record Built(
      BloomFilterBits bits,
      String sha256,
      long keys,
      long malformed,
      long unchanged,
      long peakHashBytes,
      long peakHeldBytes) {}

  /**
   * {@code source} into a split-block filter of {@code blocks} blocks, by block range on {@code
   * threads}, or with 0: one thread setting each key's bits as it comes (the reference).
   */
  private static Built fill(KeySource source, KeyType type, long blocks, int threads)
      throws SourceException {
    return fill(source, BloomFilterBits.splitBlockBuilder(type, blocks), threads);
  }

  /** The reference for {@code request}, sized for {@code keys} as the operator sizes it. */
  private static Built oneByOne(KeySource source, FilterBuilder.Request request, long keys)
      throws SourceException {
    return fill(
        source,
        SplitBlockGeometry.builder(request.keyType(), FilterBuilder.geometry(request, keys)),
        0);
  }

  private static Built fill(KeySource source, BloomFilterBits.Builder builder, int threads)
      throws SourceException {
    ParallelFill fill = fill(builder, builder.keyType(), threads);
    try (fill) {
      source.readKeys(fill);
      fill.finish();
    }
    BloomFilterBits bits = builder.build();
    return new Built(
        bits,
        SnapshotEncoder.sha256(bits),
        fill.parser().keys(),
        fill.parser().malformed(),
        fill.unchanged(),
        fill.peakHashBytes(),
        fill.peakHeldBytes());
  }

  /**
   * A fill into {@code builder} as the operator's build makes one (no malformed-key limit), or with
   * 0 threads the reference: plain writes key by key on one thread.
   */
  private static ParallelFill fill(BloomFilterBits.Builder builder, KeyType type, int threads) {
    return new ParallelFill(
        type,
        Long.MAX_VALUE,
        () ->
            threads == 0
                ? ParallelFill.Inserters.of(builder)
                : ParallelFill.Inserters.partitioned(new BlockRangeInserts(builder, threads)),
        BuildWorkers.of(Math.max(1, threads), 1),
        k -> {});
  }

  private static String randomKey(Random random, KeyType type) {
    if (type == KeyType.LONG) {
      return Long.toString(random.nextInt(4) == 0 ? random.nextInt(1000) : random.nextLong());
    }
    StringBuilder key = new StringBuilder();
    int length = 1 + random.nextInt(random.nextInt(8) == 0 ? 200 : 24);
    for (int i = 0; i < length; i++) {
      int kind = random.nextInt(20);
      if (kind == 0) {
        key.append((char) (0xe0 + random.nextInt(30))); // 2-byte UTF-8
      } else if (kind == 1) {
        key.appendCodePoint(0x1f600 + random.nextInt(50)); // 4-byte UTF-8
      } else {
        key.append((char) ('!' + random.nextInt(94)));
      }
    }
    // Keys are lines: no leading '#' (a comment) and no blank ends to strip.
    return key.charAt(0) == '#' ? "k" + key : key.toString();
  }

  private static byte[] lines(List<String> keys) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (String key : keys) {
      out.writeBytes(key.getBytes(StandardCharsets.UTF_8));
      out.write('\n');
    }
    return out.toByteArray();
  }

  /** The distinct keys of a {@link ParallelBuildTest#body} as one thread parses them. */
  private static long distinctKeys(byte[] body, KeyType type) throws SourceException {
    Set<Object> keys = new HashSet<>();
    LineParser parser =
        new LineParser(
            type,
            new LineParser.KeyConsumer() {
              @Override
              public void putString(String key) {
                keys.add(key);
              }

              @Override
              public void putLong(long key) {
                keys.add(key);
              }
            },
            Long.MAX_VALUE);
    ParallelBuildTest.lineByLine(BodySource.of(body, 1024)).readKeys(parser);
    return keys.size();
  }
}
