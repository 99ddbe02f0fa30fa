package io.bloomoperator.bench;

import io.bloomoperator.changes.CountingShadow;
import io.bloomoperator.changes.CountingShadows;
import io.bloomoperator.changes.StreamPosition;
import io.bloomoperator.snapshot.BitPositions;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyInserter;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.SplitBlockSizing;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Counting deletions (issue 29 §2), docs/benchmarks.md: the shadow's memory per key, and what
 * deleting keys through it does to the false-positive rate. Builds a filter of {@code keys} keys at
 * 1 % counting into a shadow (as a full build does), deletes {@code deletes} of them in stream
 * batches of 10,000 ({@link CountingShadow#apply}), each followed by its publish (the bits whose
 * counter reached 0 cleared as the stream delta does; the time includes copying the array), and
 * measures on 1M keys never added and on the deleted keys: how many are answered "maybe present",
 * against a plain filter built from the remaining keys, and checks that no remaining key is
 * answered "absent". Then the reviewer's attack: every probe key never added that the filter still
 * answers present (all its counters above 0) is deleted too, and again no remaining key may be
 * answered "absent". Memory per key is both files: counters and key fingerprints.
 *
 * <p>Args: {@code keys deletes [layout: Guava|SplitBlock]}.
 */
public final class CountingDeletionsBenchmark {

  private static final int BATCH = 10_000;
  private static final int PROBES = 1_000_000;

  public static void main(String[] args) throws Exception {
    long keys = Long.parseLong(args[0]);
    int deletes = Integer.parseInt(args[1]);
    boolean split = args.length > 2 && args[2].equalsIgnoreCase("SplitBlock");
    double fpp = 0.01;
    Path dir = Files.createTempDirectory("counting-bench");
    BloomFilterBits.Builder b = builder(split, keys, fpp);
    try (CountingShadows shadows = new CountingShadows(dir, Long.MAX_VALUE, Long.MAX_VALUE)) {
      CountingShadow shadow =
          shadows
              .reserve(
                  "bench",
                  "bench",
                  BitPositions.of(b.format(), b.numBits(), b.numHashFunctions()),
                  KeyType.STRING,
                  keys)
              .shadow();
      long t0 = System.nanoTime();
      KeyInserter counting = shadow.counting(b);
      for (long i = 0; i < keys; i++) {
        counting.putString("key-" + i);
      }
      double buildSeconds = (System.nanoTime() - t0) / 1e9;
      BloomFilterBits bits = b.build();
      shadows.follow("bench", shadow, StreamPosition.start(), "bench");

      double before = answered(bits, "never-", PROBES);
      long t1 = System.nanoTime();
      long removed = 0;
      long cleared = 0;
      BloomFilterBits after = bits;
      for (int from = 0; from < deletes; from += BATCH) {
        List<CountingShadow.Deletion> batch = new ArrayList<>(BATCH);
        for (int i = from; i < Math.min(deletes, from + BATCH); i++) {
          batch.add(new CountingShadow.Deletion("key-" + i, 0, i, true, 0));
        }
        removed +=
            shadow
                .apply(List.of(), batch, StreamPosition.start().with(0, from + batch.size()))
                .removed();
        // Each batch is one stream publish: its clears go out and the shadow follows the result.
        long[] clears = shadow.clears();
        cleared += clears.length;
        after = BitPositions.withCleared(after, clears, clears.length);
        shadow.published("bench-" + from);
      }
      double deleteSeconds = (System.nanoTime() - t1) / 1e9;

      long lost = 0;
      for (long i = deletes; i < keys; i++) {
        if (!after.mightContainString("key-" + i)) {
          lost++;
        }
      }
      double neverAfter = answered(after, "never-", PROBES);
      double deletedAfter = answered(after, "key-", Math.min(deletes, PROBES));
      BloomFilterBits.Builder fresh = builder(split, keys, fpp);
      for (long i = deletes; i < keys; i++) {
        fresh.putString("key-" + i);
      }
      BloomFilterBits rebuilt = fresh.build();
      double neverRebuilt = answered(rebuilt, "never-", PROBES);
      double deletedRebuilt = answered(rebuilt, "key-", Math.min(deletes, PROBES));
      long counterBytes = Files.size(dir.resolve("bench.counts"));
      long printBytes = Files.size(dir.resolve("bench.prints"));
      long fileBytes = counterBytes + printBytes;

      // The attack: deletes of keys never added whose counters are all above 0.
      List<CountingShadow.Deletion> forged = new ArrayList<>();
      for (int i = 0; i < PROBES; i++) {
        if (after.mightContainString("never-" + i)) {
          forged.add(new CountingShadow.Deletion("never-" + i, 0, deletes + i, true, 0));
        }
      }
      CountingShadow.Applied attack =
          shadow.apply(List.of(), forged, StreamPosition.start().with(0, deletes + PROBES));
      long[] attackClears = shadow.clears();
      BloomFilterBits attacked = BitPositions.withCleared(after, attackClears, attackClears.length);
      long lostToAttack = 0;
      for (long i = deletes; i < keys; i++) {
        if (!attacked.mightContainString("key-" + i)) {
          lostToAttack++;
        }
      }

      System.out.printf(
          Locale.ROOT,
          "layout=%s keys=%,d bits=%,d k=%d target fpp=%.4f%n",
          split ? "SplitBlock" : "Guava",
          keys,
          bits.numBits(),
          bits.numHashFunctions(),
          fpp);
      System.out.printf(
          Locale.ROOT,
          "shadow: %,d bytes = %.2f bytes/key (counters %.2f, fingerprints %.2f; filter %.2f"
              + " bytes/key); counted build %.1f s (%.0f ns/key)%n",
          fileBytes,
          fileBytes / (double) keys,
          counterBytes / (double) keys,
          printBytes / (double) keys,
          bits.numBits() / 8.0 / keys,
          buildSeconds,
          buildSeconds * 1e9 / keys);
      System.out.printf(
          Locale.ROOT,
          "%,d deletes applied and cleared in %.2f s (%.0f ns/delete), %,d removed, %,d bits cleared%n",
          deletes,
          deleteSeconds,
          deleteSeconds * 1e9 / deletes,
          removed,
          cleared);
      System.out.printf(
          Locale.ROOT,
          "fpp on keys never added: before %.4f, after deletes %.4f, plain build of the rest %.4f%n",
          before,
          neverAfter,
          neverRebuilt);
      System.out.printf(
          Locale.ROOT,
          "deleted keys answered present: counting %.4f, plain build of the rest %.4f,"
              + " Rebuild until the next full build 1.0000%n",
          deletedAfter,
          deletedRebuilt);
      System.out.printf(Locale.ROOT, "remaining keys answered absent: %d%n", lost);
      System.out.printf(
          Locale.ROOT,
          "attack: %,d deletes of keys never added with every counter above 0: %,d applied,"
              + " %,d waiting, %,d bits cleared; remaining keys answered absent: %d%n",
          forged.size(),
          attack.removed(),
          attack.waiting(),
          attackClears.length,
          lostToAttack);
      if (lost != 0 || lostToAttack != 0) {
        throw new AssertionError(lost + lostToAttack + " false negatives");
      }
    } finally {
      try (var files = Files.list(dir)) {
        files.forEach(p -> p.toFile().delete());
      }
      Files.deleteIfExists(dir);
    }
  }

  private static BloomFilterBits.Builder builder(boolean split, long keys, double fpp) {
    return split
        ? BloomFilterBits.builder(KeyType.STRING, SplitBlockSizing.forKeys(keys, fpp))
        : BloomFilterBits.builder(KeyType.STRING, BloomFilterSizing.forKeys(keys, fpp));
  }

  private static double answered(BloomFilterBits bits, String prefix, int probes) {
    long yes = 0;
    for (int i = 0; i < probes; i++) {
      if (bits.mightContainString(prefix + i)) {
        yes++;
      }
    }
    return yes / (double) probes;
  }
}
