package io.bloomoperator.watch.bench;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SplitBlockBits;
import io.bloomoperator.snapshot.SplitBlockSizing;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Issue 31's lookups "at the limit for the keys applications really have": the key is hot (just
 * parsed), the filter is not. Guava and ours side by side in one run, at 10M and 100M keys (1 %
 * FPP; 50 % present / 50 % absent keys in random order).
 *
 * <p>Why the key is parsed per lookup and not taken from a small set of String objects reused: a
 * reused key probes the same block every time, so a small set of keys would keep its blocks in the
 * cache too and measure a hot filter. Instead each lookup writes its key's 16 varying hex digits
 * into a reused request buffer, as a parser does ({@code "user-" + 16 hex digits + "@example.com"},
 * 33 bytes), from a precomputed array of ids read in order (8 MB, which the prefetcher streams):
 * the key's bytes are in L1, the filter block it picks is random. Rows:
 *
 * <ul>
 *   <li>{@code bytes*}: the key stays in the buffer ({@code byte[]} entry points, no allocation);
 *       {@code chars*}: in a reused {@link StringBuilder} ({@code CharSequence} entry points);
 *       {@code string*}: the parser makes a new {@code String} of it per lookup (as most
 *       applications do; 1 String + 1 byte[] allocated per key by the parse, not the lookup).
 *   <li>{@code *Parse}: the parse alone, the part of each row that is not the lookup.
 *   <li>{@code bytesHash}: parse + XXH64 of the key alone.
 *   <li>{@code floorRead*}: the physical floor of a split-block lookup: one 32-byte read at a
 *       random block of an array as large as the split-block filter (one DRAM miss once the array
 *       is far beyond the caches), block indexes precomputed and read in order.
 *   <li>{@code cold*}: today's case (FormatLookupBenchmark), 1M distinct query Strings made in
 *       advance, each a cache miss before its first byte is hashed.
 *   <li>{@code live*}: the same through {@link LiveBloomFilter} serving the split-block bits, with
 *       the local-add overlay empty (the default) or holding 10,000 keys never asked for.
 * </ul>
 *
 * <p>Filters are built once per size and key type and cached in {@code
 * java.io.tmpdir/bloom-hotkey-bench}: JMH forks a JVM per row, and a 100M-key build takes minutes.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class HotKeyLookupBenchmark {

  private static final int QUERIES = 1 << 20;
  private static final int BATCH = 64;
  private static final byte[] PREFIX = "user-".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] SUFFIX = "@example.com".getBytes(StandardCharsets.US_ASCII);
  private static final int DIGITS_AT = PREFIX.length;
  static final int KEY_LENGTH = PREFIX.length + 16 + SUFFIX.length;
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final Path CACHE =
      Path.of(System.getProperty("java.io.tmpdir"), "bloom-hotkey-bench");

  /** The ids and cursor both key types share, and the floor's array and block indexes. */
  abstract static class Queries {
    long[] ids = new long[QUERIES];
    long[] floorWords;
    int[] floorBlocks = new int[QUERIES];
    boolean[] results = new boolean[BATCH];
    int next;

    void makeQueries(long seed, int numLongs, int n) {
      SplittableRandom random = new SplittableRandom(seed);
      for (int i = 0; i < QUERIES; i++) {
        long id = mix(random.nextLong(n));
        ids[i] = random.nextBoolean() ? id : absent(id);
      }
      floorWords = new long[numLongs];
      for (int i = 0; i < numLongs; i++) {
        floorWords[i] = random.nextLong();
      }
      int blocks = numLongs / 4;
      for (int i = 0; i < QUERIES; i++) {
        floorBlocks[i] = random.nextInt(blocks) * 4;
      }
    }

    int nextIndex() {
      return next++ & (QUERIES - 1);
    }

    int nextBatch() {
      int from = next & (QUERIES - 1);
      next += BATCH;
      return from;
    }
  }

  @State(Scope.Benchmark)
  public static class Strings extends Queries {
    @Param({"10000000", "100000000"})
    public int n;

    BloomFilter<CharSequence> guava;
    BloomFilterBits split;
    String[] cold;
    byte[] buffer = newKeyBuffer(1);
    StringBuilder chars = new StringBuilder(new String(buffer, StandardCharsets.US_ASCII));
    byte[] batchData = newKeyBuffer(BATCH);
    int[] offsets = new int[BATCH];
    int[] lengths = new int[BATCH];
    String[] batchKeys = new String[BATCH];
    long lastRead; // floorReadDependent's chain

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      byte[] key = newKeyBuffer(1);
      ensureCached(
          "string-" + n + "-guava",
          () -> {
            BloomFilterBits.Builder b =
                BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(n, 0.01));
            for (long i = 0; i < n; i++) {
              writeDigits(key, 0, mix(i));
              b.putUtf8(key, 0, KEY_LENGTH);
            }
            return b.build();
          });
      try (InputStream in =
          new BufferedInputStream(
              Files.newInputStream(CACHE.resolve("string-" + n + "-guava")), 1 << 20)) {
        guava = BloomFilter.readFrom(in, Funnels.stringFunnel(StandardCharsets.UTF_8));
      }
      split =
          cached(
              "string-" + n + "-split",
              KeyType.STRING,
              FilterFormat.SPLIT_BLOCK,
              () -> {
                BloomFilterBits.Builder b =
                    BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(n, 0.01));
                for (long i = 0; i < n; i++) {
                  writeDigits(key, 0, mix(i));
                  b.putUtf8(key, 0, KEY_LENGTH);
                }
                return b.build();
              });
      makeQueries(42, split.numLongs(), n);
      cold = new String[QUERIES];
      for (int i = 0; i < QUERIES; i++) {
        writeDigits(key, 0, ids[i]);
        cold[i] = new String(key, StandardCharsets.UTF_8);
      }
      for (int i = 0; i < BATCH; i++) {
        offsets[i] = i * KEY_LENGTH;
        lengths[i] = KEY_LENGTH;
      }
    }

    /** Parses query {@code i} into the reused buffer. */
    byte[] parse(int i) {
      writeDigits(buffer, 0, ids[i]);
      return buffer;
    }

    /** Parses query {@code i} into a new String, as most applications' parsers do. */
    String parseString(int i) {
      writeDigits(buffer, 0, ids[i]);
      return new String(buffer, 0, KEY_LENGTH, StandardCharsets.ISO_8859_1);
    }

    /** Parses query {@code i} into the reused StringBuilder. */
    StringBuilder parseChars(int i) {
      long id = ids[i];
      for (int d = 0; d < 16; d++) {
        chars.setCharAt(DIGITS_AT + d, (char) HEX[(int) (id >>> (60 - 4 * d)) & 15]);
      }
      return chars;
    }

    /** Parses queries {@code [from, from + BATCH)} into the batch buffer. */
    byte[] parseBatch(int from) {
      for (int i = 0; i < BATCH; i++) {
        writeDigits(batchData, i * KEY_LENGTH, ids[from + i]);
      }
      return batchData;
    }

    /** Parses queries {@code [from, from + BATCH)} into new Strings. */
    String[] parseStrings(int from) {
      for (int i = 0; i < BATCH; i++) {
        writeDigits(buffer, 0, ids[from + i]);
        batchKeys[i] = new String(buffer, 0, KEY_LENGTH, StandardCharsets.ISO_8859_1);
      }
      return batchKeys;
    }
  }

  @State(Scope.Benchmark)
  public static class Longs extends Queries {
    @Param({"10000000", "100000000"})
    public int n;

    BloomFilter<Long> guava;
    BloomFilterBits split;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      ensureCached(
          "long-" + n + "-guava",
          () -> {
            BloomFilterBits.Builder b =
                BloomFilterBits.builder(KeyType.LONG, BloomFilterSizing.forKeys(n, 0.01));
            for (long i = 0; i < n; i++) {
              b.putLong(mix(i));
            }
            return b.build();
          });
      try (InputStream in =
          new BufferedInputStream(
              Files.newInputStream(CACHE.resolve("long-" + n + "-guava")), 1 << 20)) {
        guava = BloomFilter.readFrom(in, Funnels.longFunnel());
      }
      split =
          cached(
              "long-" + n + "-split",
              KeyType.LONG,
              FilterFormat.SPLIT_BLOCK,
              () -> {
                BloomFilterBits.Builder b =
                    BloomFilterBits.builder(KeyType.LONG, SplitBlockSizing.forKeys(n, 0.01));
                for (long i = 0; i < n; i++) {
                  b.putLong(mix(i));
                }
                return b.build();
              });
      makeQueries(43, split.numLongs(), n);
    }
  }

  /** A LiveBloomFilter serving the split-block String filter, overlay empty or holding keys. */
  @State(Scope.Benchmark)
  public static class LiveStrings {
    @Param({"0", "10000"})
    public int held;

    LiveBloomFilter<String> live;

    @Setup(Level.Trial)
    public void setUp(Strings s) throws IOException {
      live =
          LiveBloomFilter.fromFile(
              "bench",
              LiveKeyType.STRING,
              FilterFormat.SPLIT_BLOCK,
              CACHE.resolve("string-" + s.n + "-split"));
      for (int i = 0; i < held; i++) {
        live.addLocal("held-" + i); // never asked for: only their presence bits are met
      }
    }
  }

  /** {@link LiveStrings} for the Long filter. */
  @State(Scope.Benchmark)
  public static class LiveLongs {
    @Param({"0", "10000"})
    public int held;

    LiveBloomFilter<Long> live;

    @Setup(Level.Trial)
    public void setUp(Longs s) throws IOException {
      live =
          LiveBloomFilter.fromFile(
              "bench",
              LiveKeyType.LONG,
              FilterFormat.SPLIT_BLOCK,
              CACHE.resolve("long-" + s.n + "-split"));
      for (long i = 0; i < held; i++) {
        live.addLocal(absent(mix(-1 - i))); // ids no query uses
      }
    }
  }

  // ---- String keys, hot: parsed into a reused buffer, or into a new String per lookup ----

  @Benchmark
  public byte[] bytesParse(Strings s) {
    return s.parse(s.nextIndex());
  }

  @Benchmark
  public long bytesHash(Strings s) {
    return SplitBlockBits.hashUtf8(s.parse(s.nextIndex()), 0, KEY_LENGTH);
  }

  @Benchmark
  public boolean bytesSplit(Strings s) {
    return s.split.mightContainUtf8(s.parse(s.nextIndex()), 0, KEY_LENGTH);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public boolean[] bytesSplitBatch(Strings s) {
    s.split.mightContainUtf8s(
        s.parseBatch(s.nextBatch()), s.offsets, s.lengths, 0, BATCH, s.results);
    return s.results;
  }

  @Benchmark
  public StringBuilder charsParse(Strings s) {
    return s.parseChars(s.nextIndex());
  }

  @Benchmark
  public boolean charsSplit(Strings s) {
    return s.split.mightContainChars(s.parseChars(s.nextIndex()));
  }

  @Benchmark
  public boolean charsGuava(Strings s) {
    return s.guava.mightContain(s.parseChars(s.nextIndex()));
  }

  @Benchmark
  public String stringParse(Strings s) {
    return s.parseString(s.nextIndex());
  }

  @Benchmark
  public boolean stringGuava(Strings s) {
    return s.guava.mightContain(s.parseString(s.nextIndex()));
  }

  @Benchmark
  public boolean stringSplit(Strings s) {
    return s.split.mightContainString(s.parseString(s.nextIndex()));
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public String[] stringParseBatch(Strings s) {
    return s.parseStrings(s.nextBatch());
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public boolean[] stringSplitBatch(Strings s) {
    s.split.mightContainStrings(s.parseStrings(s.nextBatch()), 0, BATCH, s.results);
    return s.results;
  }

  // ---- String keys, cold: today's case ----

  @Benchmark
  public boolean coldGuava(Strings s) {
    return s.guava.mightContain(s.cold[s.nextIndex()]);
  }

  @Benchmark
  public boolean coldSplit(Strings s) {
    return s.split.mightContainString(s.cold[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public boolean[] coldSplitBatch(Strings s) {
    s.split.mightContainStrings(s.cold, s.nextBatch(), BATCH, s.results);
    return s.results;
  }

  // ---- the floor: one random 32-byte read of an array as large as the filter ----

  @Benchmark
  public long floorRead(Strings s) {
    long[] w = s.floorWords;
    int b = s.floorBlocks[s.nextIndex()];
    return w[b] ^ w[b + 1] ^ w[b + 2] ^ w[b + 3];
  }

  /**
   * The latency of one miss: each read's block depends on the value the previous read returned, so
   * no two are in flight at once. A lookup of an application (one per request, other work between)
   * cannot overlap its miss with the next lookup's either; {@link #floorRead} lets the CPU run
   * ahead through many independent reads, the floor of a batch.
   */
  @Benchmark
  public long floorReadDependent(Strings s) {
    long[] w = s.floorWords;
    // Clearing bit 2 or not, as the last value read says, keeps the block random and in range.
    int b = s.floorBlocks[s.nextIndex()] & ~((int) (s.lastRead >>> 63) << 2);
    long x = w[b] ^ w[b + 1] ^ w[b + 2] ^ w[b + 3];
    s.lastRead = x;
    return x;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public long floorReadBatch(Strings s) {
    long[] w = s.floorWords;
    int[] blocks = s.floorBlocks;
    int from = s.nextBatch();
    long x = 0;
    for (int i = from; i < from + BATCH; i++) {
      int b = blocks[i];
      x += w[b] ^ w[b + 1] ^ w[b + 2] ^ w[b + 3];
    }
    return x;
  }

  // ---- through the reader's LiveBloomFilter, overlay empty or holding 10,000 keys ----

  @Benchmark
  public boolean liveString(Strings s, LiveStrings l) {
    return l.live.mightContain(s.parseString(s.nextIndex()));
  }

  @Benchmark
  public boolean liveBytes(Strings s, LiveStrings l) {
    return l.live.mightContainUtf8(s.parse(s.nextIndex()), 0, KEY_LENGTH);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int liveBytesBatch(Strings s, LiveStrings l) {
    return l.live.mightContainAllUtf8(
        s.parseBatch(s.nextBatch()), s.offsets, s.lengths, 0, BATCH, s.results);
  }

  // ---- Long keys (always hot: a primitive in a register) ----

  @Benchmark
  public boolean longGuava(Longs s) {
    return s.guava.mightContain(s.ids[s.nextIndex()]); // boxes, as every Guava caller must
  }

  @Benchmark
  public long longHash(Longs s) {
    return SplitBlockBits.hashLong(s.ids[s.nextIndex()]);
  }

  @Benchmark
  public boolean longSplit(Longs s) {
    return s.split.mightContainLong(s.ids[s.nextIndex()]);
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public boolean[] longSplitBatch(Longs s) {
    s.split.mightContainLongs(s.ids, s.nextBatch(), BATCH, s.results);
    return s.results;
  }

  @Benchmark
  @OperationsPerInvocation(BATCH)
  public int liveLongBatch(Longs s, LiveLongs l) {
    return l.live.mightContainAllLongs(s.ids, s.nextBatch(), BATCH, s.results);
  }

  // ---- keys and the filter cache ----

  /** {@code count} keys' worth of "user-0000000000000000@example.com", one after the other. */
  static byte[] newKeyBuffer(int count) {
    byte[] buffer = new byte[count * KEY_LENGTH];
    for (int k = 0; k < count; k++) {
      int at = k * KEY_LENGTH;
      System.arraycopy(PREFIX, 0, buffer, at, PREFIX.length);
      java.util.Arrays.fill(buffer, at + DIGITS_AT, at + DIGITS_AT + 16, (byte) '0');
      System.arraycopy(SUFFIX, 0, buffer, at + DIGITS_AT + 16, SUFFIX.length);
    }
    return buffer;
  }

  /** Writes the 16 hex digits of {@code id} into the key at {@code at}: the "parse". */
  static void writeDigits(byte[] buffer, int at, long id) {
    int d0 = at + DIGITS_AT;
    for (int d = 0; d < 16; d++) {
      buffer[d0 + d] = HEX[(int) (id >>> (60 - 4 * d)) & 15];
    }
  }

  /** The id of present key i: SplitMix64's finaliser, a bijection. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /** An id no present key has, with overwhelming odds. */
  static long absent(long presentId) {
    return presentId ^ 0x5555_5555_5555_5555L;
  }

  /** Builds the filter and caches it under {@code name} unless it is there already. */
  static Path ensureCached(String name, Supplier<BloomFilterBits> build) throws IOException {
    Path file = CACHE.resolve(name);
    if (!Files.exists(file)) {
      Files.createDirectories(CACHE);
      BloomFilterBits bits = build.get();
      Path partial = CACHE.resolve(name + ".partial");
      try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(partial), 1 << 20)) {
        SnapshotEncoder.writeTo(bits, out);
      }
      Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE);
    }
    return file;
  }

  /** The filter cached under {@code name}, built (and cached) first if it is not there. */
  static BloomFilterBits cached(
      String name, KeyType keyType, FilterFormat format, Supplier<BloomFilterBits> build)
      throws IOException {
    Path file = ensureCached(name, build);
    try {
      return SnapshotDecoder.decodePayload(Files.readAllBytes(file), keyType, format);
    } catch (io.bloomoperator.snapshot.SnapshotVerificationException e) {
      throw new IOException(file + " is not a " + format + " payload", e);
    }
  }
}
