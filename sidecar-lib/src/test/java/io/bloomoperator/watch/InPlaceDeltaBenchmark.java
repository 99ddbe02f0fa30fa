package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.InPlaceDeltas;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What a stream delta of 1,000 keys costs a reader, before (the swap path: a copy of the served
 * bits, the delta applied to it, the whole payload hashed) and after (the in-place path: the
 * delta's chunks verified and parsed, its bits ORed into the served array), side by side in one
 * JVM, through the reader's own load path ({@link SnapshotFetcher#fetch(AnnouncedManifest,
 * ServedSnapshot, boolean)}; the in-place bits set as {@link WatchLoop} sets them). Wall time and
 * CPU of the applying thread ({@link ThreadMXBean#getCurrentThreadCpuTime()}); the payload check of
 * {@link PayloadChecks} (a copy, then a hash on another thread) measured once as well.
 *
 * <pre>
 *   java -Xmx8g -cp $CP io.bloomoperator.watch.InPlaceDeltaBenchmark KEYS FORMAT ROUNDS
 * </pre>
 *
 * <p>The served filter is sized for KEYS keys at 1 % (Guava or SplitBlock) and filled with random
 * words (half the bits set, as a filter at its design load has), which keeps a 1B-key setup at
 * seconds instead of a 10-minute build; the lookups and the delta do not depend on which bits are
 * set. Each round the writer adds 1,000 new String keys to its copy, publishes the delta (1 MB
 * chunks in memory) with the new payload's SHA-256, and the reader applies it both ways: the swap
 * path's copy is dropped, the in-place path advances the served array to the new version, which is
 * what the next round's delta is relative to. Heap: about 4 times the filter.
 */
public final class InPlaceDeltaBenchmark {

  private static final String FILTER = "bench";
  private static final int CHUNK = 1_000_000;
  private static final int ADDED = 1_000;

  private InPlaceDeltaBenchmark() {}

  public static void main(String[] args) throws Exception {
    long keys = Long.parseLong(args[0]);
    FilterFormat format = FilterFormat.valueOf(args[1]);
    int rounds = Integer.parseInt(args[2]);
    ThreadMXBean cpu = ManagementFactory.getThreadMXBean();

    BloomFilterBits writer = randomFilter(keys, format);
    Map<String, byte[]> chunks = new HashMap<>();
    SnapshotDecoder.ChunkSource source = (index, ref) -> chunks.get(ref.name());
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(writer, CHUNK, (index, data, length, sha) -> {});
    Manifest manifest = Manifest.of(FILTER, 1, writer, keys, encoded, Instant.now());
    AnnouncedManifest announced = new AnnouncedManifest(manifest, manifest.toJson(), null);
    ServedSnapshot served = new ServedSnapshot(announced, InPlaceDeltas.stableCopy(writer));
    BloomFilterBits servedBits = served.heapBits();
    SnapshotFetcher fetcher = new SnapshotFetcher(source);
    System.out.printf(
        "filter: %,d keys at 1 %%, %s, %,d payload bytes; delta: %,d new keys per round%n",
        keys, format, manifest.totalBytes(), ADDED);

    List<long[]> before = new ArrayList<>(); // wall ns, cpu ns
    List<long[]> after = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      long version = round + 2;
      BloomFilterBits.Builder next = BloomFilterBits.builder(writer);
      for (int i = 0; i < ADDED; i++) {
        next.putString("stream-" + version + "-" + i);
      }
      BloomFilterBits nextBits = next.build();
      SnapshotDelta.Result delta =
          SnapshotDelta.encode(
              writer,
              nextBits,
              CHUNK,
              (index, data, length, sha) ->
                  chunks.put(
                      SnapshotNames.deltaChunkName(FILTER, version, index),
                      Arrays.copyOf(data, length)));
      writer = nextBits;
      manifest =
          Manifest.withDelta(
              manifest,
              version,
              writer,
              keys + version * ADDED,
              SnapshotEncoder.sha256(writer),
              delta,
              Instant.now());
      AnnouncedManifest next2 = new AnnouncedManifest(manifest, manifest.toJson(), null);

      // Before: a copy, the delta, the whole payload hashed (then dropped).
      System.gc();
      long wall = System.nanoTime();
      long cpu0 = cpu.getCurrentThreadCpuTime();
      ServedSnapshot swapped = fetcher.fetch(next2, served, false).snapshot();
      before.add(new long[] {System.nanoTime() - wall, cpu.getCurrentThreadCpuTime() - cpu0});
      if (swapped.heapBits() == servedBits) {
        throw new AssertionError("the swap path returned the served array");
      }
      swapped = null;

      // After: verified, parsed, ORed into the served array.
      System.gc();
      wall = System.nanoTime();
      cpu0 = cpu.getCurrentThreadCpuTime();
      SnapshotFetcher.Fetched fetched = fetcher.fetch(next2, served, true);
      fetched.inPlace().setBits();
      after.add(new long[] {System.nanoTime() - wall, cpu.getCurrentThreadCpuTime() - cpu0});
      served = fetched.snapshot();
      System.out.printf(
          "round %d: delta %,d B, %,d bits; before %,.1f ms (cpu %,.1f ms), after %,.3f ms"
              + " (cpu %,.3f ms)%n",
          round + 1,
          delta.totalBytes(),
          delta.changedBits(),
          before.get(round)[0] / 1e6,
          before.get(round)[1] / 1e6,
          after.get(round)[0] / 1e6,
          after.get(round)[1] / 1e6);
    }
    String finalSha = SnapshotEncoder.sha256(servedBits);
    if (!finalSha.equals(manifest.sha256())) {
      throw new AssertionError("served array is not the last version's payload");
    }
    System.out.println("served array after all rounds: sha256 equals the manifest's " + finalSha);

    // The payload check PayloadChecks runs at most once per interval: a copy on the watcher
    // thread, the hash on another.
    System.gc();
    long wall = System.nanoTime();
    long cpu0 = cpu.getCurrentThreadCpuTime();
    BloomFilterBits copy = InPlaceDeltas.stableCopy(servedBits);
    long copyWall = System.nanoTime() - wall;
    long copyCpu = cpu.getCurrentThreadCpuTime() - cpu0;
    wall = System.nanoTime();
    cpu0 = cpu.getCurrentThreadCpuTime();
    SnapshotEncoder.sha256(copy);
    System.out.printf(
        "payload check: copy %,.1f ms (cpu %,.1f ms), hash %,.1f ms (cpu %,.1f ms)%n",
        copyWall / 1e6,
        copyCpu / 1e6,
        (System.nanoTime() - wall) / 1e6,
        (cpu.getCurrentThreadCpuTime() - cpu0) / 1e6);
    summary("before (copy + delta + whole SHA-256)", before);
    summary("after (verified delta ORed in place)", after);
    System.exit(0);
  }

  private static void summary(String what, List<long[]> rounds) {
    // The first round of each path warms it up: not counted.
    List<long[]> counted = rounds.subList(Math.min(1, rounds.size() - 1), rounds.size());
    long[] wall = counted.stream().mapToLong(r -> r[0]).sorted().toArray();
    long[] cpu = counted.stream().mapToLong(r -> r[1]).sorted().toArray();
    System.out.printf(
        "%s, %d rounds after the first: wall median %,.3f ms, max %,.3f ms; cpu median %,.3f ms,"
            + " max %,.3f ms%n",
        what,
        counted.size(),
        wall[wall.length / 2] / 1e6,
        wall[wall.length - 1] / 1e6,
        cpu[cpu.length / 2] / 1e6,
        cpu[cpu.length - 1] / 1e6);
  }

  /** A filter sized for {@code keys} at 1 % with each bit set at random with probability 1/2. */
  private static BloomFilterBits randomFilter(long keys, FilterFormat format) throws Exception {
    byte[] payload;
    SplittableRandom random = new SplittableRandom(keys);
    if (format == FilterFormat.SPLIT_BLOCK) {
      long blocks = SplitBlockSizing.forKeys(keys, 0.01).numBlocks();
      payload = new byte[Math.toIntExact(blocks * SplitBlockSizing.BYTES_PER_BLOCK)];
    } else {
      long numBits = io.bloomoperator.snapshot.BloomFilterSizing.forKeys(keys, 0.01).numBits();
      int numLongs = Math.toIntExact((numBits + 63) / 64);
      payload = new byte[SnapshotEncoder.HEADER_BYTES + numLongs * Long.BYTES];
      payload[0] = (byte) SnapshotEncoder.STRATEGY_MURMUR128_MITZ_64;
      payload[1] =
          (byte) io.bloomoperator.snapshot.BloomFilterSizing.forKeys(keys, 0.01).numHashFunctions();
      payload[2] = (byte) (numLongs >>> 24);
      payload[3] = (byte) (numLongs >>> 16);
      payload[4] = (byte) (numLongs >>> 8);
      payload[5] = (byte) numLongs;
    }
    int from = format == FilterFormat.SPLIT_BLOCK ? 0 : SnapshotEncoder.HEADER_BYTES;
    java.nio.ByteBuffer words = java.nio.ByteBuffer.wrap(payload, from, payload.length - from);
    while (words.remaining() >= Long.BYTES) {
      words.putLong(random.nextLong());
    }
    return SnapshotDecoder.decodePayload(payload, KeyType.STRING, format);
  }
}
