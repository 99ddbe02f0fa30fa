package io.bloomoperator.watch;

import io.bloomoperator.snapshot.AnnouncedManifest;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomLookup;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotDelta;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotLimits;
import io.bloomoperator.snapshot.TrustedKeys;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * What a swap of a large filter costs a reader in heap mode and in memory-mapped mode (issue 19),
 * through the reader's own load path ({@link SnapshotFetcher}, and {@link MappedPayloads} for the
 * mapped mode): chunks come from files on disk (one 1 MB chunk per file, read when the decoder asks
 * for it, as a GET would hand it over), so the heap holds only what the reader holds.
 *
 * <pre>
 *   prepare DIR BYTES    a Guava-layout Long filter of BYTES payload bytes (1M keys, k = 7), in
 *                        1 MB chunks, as v1, and v2 = v1 plus 1,000 keys as a delta on it
 *   run DIR heap|mapped  loads v1 (served), then while it is served: a whole load of v1 again
 *                        and a delta swap to v2; prints time, heap after GC with the served
 *                        filter only, heap peak during each swap, process RSS (anonymous and
 *                        file-backed), and single-thread lookups per second from the served bits;
 *                        beside the whole load, the JDK's SHA-256 throughput on this machine
 *                        (the bound of a load that hashes every byte) and, in mapped mode, the
 *                        whole load's phases timed one by one; in heap mode, if a mapped run
 *                        left v1's file, present-key lookups alternating between the heap bits
 *                        and that file mapped, in one process
 * </pre>
 *
 * <p>Run {@code prepare} with an {@code -Xmx} of 3 times BYTES; {@code run heap} needs about 2.3
 * times BYTES, {@code run mapped} a small heap (docs/benchmarks.md).
 */
public final class MappedSwapBenchmark {

  private static final String NS = "bench";
  private static final String FILTER = "big";
  private static final int CHUNK = 1_000_000;
  private static final int KEYS = 1_000_000;
  private static final int ADDED = 1_000;
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  private MappedSwapBenchmark() {}

  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[1]);
    if (args[0].equals("prepare")) {
      prepare(dir, Long.parseLong(args[2]));
    } else {
      run(dir, args[2].equals("mapped"));
    }
    System.exit(0);
  }

  private static void prepare(Path dir, long bytes) throws Exception {
    Path chunks = Files.createDirectories(dir.resolve("chunks"));
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, (bytes - SnapshotEncoder.HEADER_BYTES) * 8, 7);
    for (long key = 0; key < KEYS; key++) {
      builder.putLong(key * GOLDEN);
    }
    BloomFilterBits v1 = builder.build();
    SnapshotEncoder.Result encoded =
        SnapshotEncoder.encode(
            v1,
            CHUNK,
            (index, data, length, sha) ->
                Files.write(
                    chunks.resolve(
                        io.bloomoperator.snapshot.SnapshotNames.chunkName(FILTER, 1, index)),
                    Arrays.copyOf(data, length)));
    Manifest m1 = Manifest.of(FILTER, 1, v1, KEYS, encoded, Instant.now());
    BloomFilterBits.Builder next = BloomFilterBits.builder(v1);
    for (long key = KEYS; key < KEYS + ADDED; key++) {
      next.putLong(key * GOLDEN);
    }
    BloomFilterBits v2 = next.build();
    SnapshotDelta.Result delta =
        SnapshotDelta.encode(
            v1,
            v2,
            CHUNK,
            (index, data, length, sha) ->
                Files.write(
                    chunks.resolve(
                        io.bloomoperator.snapshot.SnapshotNames.deltaChunkName(FILTER, 2, index)),
                    Arrays.copyOf(data, length)));
    Manifest m2 =
        Manifest.withDelta(
            m1, 2, v2, KEYS + ADDED, SnapshotEncoder.sha256(v2), delta, Instant.now());
    Files.writeString(dir.resolve("v1.json"), m1.toJson(), StandardCharsets.UTF_8);
    Files.writeString(dir.resolve("v2.json"), m2.toJson(), StandardCharsets.UTF_8);
    System.out.printf(
        "prepared %d bytes in %d chunks, delta %d bytes (%d bits)%n",
        m1.totalBytes(), m1.chunks().size(), delta.totalBytes(), delta.changedBits());
  }

  private static void run(Path dir, boolean mapped) throws Exception {
    Path chunks = dir.resolve("chunks");
    SnapshotDecoder.ChunkSource source =
        (index, ref) -> Files.readAllBytes(chunks.resolve(ref.name()));
    AnnouncedManifest v1 = announced(dir.resolve("v1.json"));
    AnnouncedManifest v2 = announced(dir.resolve("v2.json"));
    Path local = Files.createDirectories(dir.resolve(mapped ? "local-mapped" : "local-heap"));
    LocalSnapshotCache cache =
        new LocalSnapshotCache(
            local,
            new Acceptance(
                NS,
                FILTER,
                KeyType.LONG,
                SnapshotLimits.forThisHeap().withMaxTotalBytes(SnapshotLimits.FORMAT_MAX_BYTES),
                TrustedKeys.none(),
                null),
            mapped ? MappedPayloads.FILE_STORE : null);
    SnapshotFetcher fetcher = new SnapshotFetcher(source, NS, FILTER, Map.of(), cache.mapped());
    System.out.printf(
        "java %s, -Xmx %d MB, %d CPUs, mode %s, payload %d bytes%n",
        System.getProperty("java.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors(),
        mapped ? "mapped" : "heap",
        v1.manifest().totalBytes());
    System.out.println("step,ms,heap_served_only_MB,heap_peak_during_MB,rss_anon_MB,rss_file_MB");

    double sha256 = sha256MegabytesPerSecond();
    System.out.printf("sha256,%.0f MB/s (best of 3, 1 GB in 1 MB updates)%n", sha256);

    long started = System.nanoTime();
    ServedSnapshot served = fetcher.fetch(v1, null);
    report("first load (nothing served)", started, -1, -1);

    long servedHeap = usedAfterGc();
    resetPeaks();
    started = System.nanoTime();
    // Not handed the served snapshot, so nothing is copied from it: a whole download and verify,
    // as for a new full version, while the served one stays reachable (used below).
    ServedSnapshot whole = fetcher.fetch(v1, null);
    long wholeNanos = System.nanoTime() - started;
    report("whole load while v1 is served", started, servedHeap, heapPeaks());
    double payloadMb = v1.manifest().totalBytes() / 1e6;
    double wholeRate = payloadMb / (wholeNanos / 1e9);
    System.out.printf(
        "whole load vs sha256,%.0f MB in %.2f s = %.0f MB/s; sha256 %.0f MB/s; ratio %.2f"
            + " (every byte is hashed twice: its chunk's digest and the payload's)%n",
        payloadMb, wholeNanos / 1e9, wholeRate, sha256, wholeRate / sha256);
    if (whole.bits().numBits() != served.bits().numBits()) {
      throw new IllegalStateException("loaded another filter");
    }
    served = whole;
    whole = null;

    servedHeap = usedAfterGc();
    resetPeaks();
    started = System.nanoTime();
    ServedSnapshot updated = fetcher.fetch(v2, served);
    report("delta swap to v2 (1,000 keys added)", started, servedHeap, heapPeaks());
    served = updated;
    updated = null;
    usedAfterGc();

    lookups(served.bits());
    if (mapped) {
      phases(v1.manifest(), source, local);
      return;
    }
    // Beside the heap bits, v1's file left by a mapped run, if any: lookups alternate between the
    // two in this one process, so both see the same machine (other work moves either by 2x).
    Path file = dir.resolve("local-mapped").resolve(NS + "." + FILTER + ".v1.payload");
    if (Files.exists(file)) {
      try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(file)) {
        interleaved(
            served.bits(),
            io.bloomoperator.snapshot.SnapshotFiles.mapVerified(
                v1.manifest(), in, v1.manifest().sha256()));
      }
    }
  }

  /** Present-key lookups, heap then mapped, five times; each line gives both and their ratio. */
  private static void interleaved(BloomLookup heap, BloomLookup mapped) {
    int n = 5_000_000;
    long[] present = new long[1 << 20];
    SplittableRandom random = new SplittableRandom(2);
    for (int i = 0; i < present.length; i++) {
      present[i] = random.nextInt(KEYS) * GOLDEN;
    }
    for (int round = 0; round < 6; round++) {
      double[] nanos = new double[2];
      for (int side = 0; side < 2; side++) {
        BloomLookup bits = side == 0 ? heap : mapped;
        long hits = 0;
        long started = System.nanoTime();
        for (int i = 0; i < n; i++) {
          hits += bits.mightContainLong(present[i & (present.length - 1)]) ? 1 : 0;
        }
        nanos[side] = (double) (System.nanoTime() - started) / n;
        if (hits != n) {
          throw new IllegalStateException("a present key was answered absent");
        }
      }
      if (round > 0) { // the first warms both up
        System.out.printf(
            "interleaved present lookups,heap %.0f ns,mapped %.0f ns,mapped/heap %.2f%n",
            nanos[0], nanos[1], nanos[1] / nanos[0]);
      }
    }
  }

  /**
   * The JDK's SHA-256 throughput in MB/s: 1 GB in 1 MB updates, best of 3. The updates cycle over a
   * 64 MB array, larger than this machine's caches, so the bytes come from memory as a load's do,
   * and small enough for the mapped run's 128 MB heap.
   */
  private static double sha256MegabytesPerSecond() throws Exception {
    byte[] data = new byte[64 << 20];
    new SplittableRandom(3).nextBytes(data);
    int update = 1 << 20;
    int updates = 1 << 10;
    double best = 0;
    for (int round = 0; round < 3; round++) {
      java.security.MessageDigest digest = java.security.MessageDigest.getInstance("SHA-256");
      long started = System.nanoTime();
      for (int i = 0; i < updates; i++) {
        digest.update(data, (i * update) & (data.length - 1), update);
      }
      digest.digest();
      best =
          Math.max(best, (double) updates * update / 1e6 / ((System.nanoTime() - started) / 1e9));
    }
    return best;
  }

  /**
   * A mapped whole load's work, one phase at a time, on the same chunks: read every chunk from
   * disk; hash each twice (its own digest and the payload's, as the load does); write them to a
   * file; flush it to disk. Their sum against the load's time shows where it goes.
   */
  private static void phases(Manifest manifest, SnapshotDecoder.ChunkSource source, Path local)
      throws Exception {
    List<Manifest.ChunkRef> refs = manifest.chunks();
    long read = 0;
    long hashed = 0;
    long written = 0;
    Path file = Files.createTempFile(local, "phases", ".tmp");
    try (java.nio.channels.FileChannel out =
        java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
      java.security.MessageDigest chunk = java.security.MessageDigest.getInstance("SHA-256");
      java.security.MessageDigest total = java.security.MessageDigest.getInstance("SHA-256");
      long position = 0;
      for (int i = 0; i < refs.size(); i++) {
        long t0 = System.nanoTime();
        byte[] data = source.load(i, refs.get(i));
        long t1 = System.nanoTime();
        chunk.update(data);
        chunk.digest();
        total.update(data);
        long t2 = System.nanoTime();
        java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(data);
        while (buffer.hasRemaining()) {
          position += out.write(buffer, position);
        }
        long t3 = System.nanoTime();
        read += t1 - t0;
        hashed += t2 - t1;
        written += t3 - t2;
      }
      total.digest();
      long t4 = System.nanoTime();
      out.force(true);
      long forced = System.nanoTime() - t4;
      System.out.printf(
          "phases (mapped whole load, one at a time),read chunks %d ms,sha256 twice %d ms,"
              + "write %d ms,fsync %d ms%n",
          read / 1_000_000, hashed / 1_000_000, written / 1_000_000, forced / 1_000_000);
    } finally {
      Files.deleteIfExists(file);
    }
  }

  private static void lookups(BloomLookup bits) {
    int n = 20_000_000;
    long[] present = new long[1 << 20];
    long[] absent = new long[1 << 20];
    SplittableRandom random = new SplittableRandom(1);
    for (int i = 0; i < present.length; i++) {
      present[i] = random.nextInt(KEYS) * GOLDEN;
      absent[i] = random.nextLong();
    }
    for (int round = 0; round < 3; round++) {
      for (long[] keys : List.of(present, absent)) {
        long hits = 0;
        long started = System.nanoTime();
        for (int i = 0; i < n; i++) {
          hits += bits.mightContainLong(keys[i & (keys.length - 1)]) ? 1 : 0;
        }
        long nanos = System.nanoTime() - started;
        if (round == 2) {
          System.out.printf(
              "lookups,%s,%.2f M/s,%.0f ns each,%d maybe%n",
              keys == present ? "present" : "random absent",
              n / (nanos / 1e3),
              (double) nanos / n,
              hits);
        }
      }
    }
  }

  private static AnnouncedManifest announced(Path file) throws Exception {
    String json = Files.readString(file, StandardCharsets.UTF_8);
    return new AnnouncedManifest(Manifest.fromJson(json), json, null);
  }

  private static void report(String step, long started, long servedHeap, long peak)
      throws Exception {
    long millis = (System.nanoTime() - started) / 1_000_000;
    Map<String, Long> rss = rss();
    System.out.printf(
        "%s,%d,%s,%s,%d,%d%n",
        step,
        millis,
        servedHeap < 0 ? "-" : Long.toString(servedHeap >> 20),
        peak < 0 ? "-" : Long.toString(peak >> 20),
        rss.getOrDefault("RssAnon", 0L) >> 10,
        rss.getOrDefault("RssFile", 0L) >> 10);
  }

  /** RssAnon and RssFile of this process, in kB, from /proc/self/status (Linux). */
  private static Map<String, Long> rss() throws Exception {
    Map<String, Long> values = new java.util.HashMap<>();
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      String[] parts = line.split("\\s+");
      if (parts.length >= 2 && (line.startsWith("RssAnon:") || line.startsWith("RssFile:"))) {
        values.put(parts[0].substring(0, parts[0].length() - 1), Long.parseLong(parts[1]));
      }
    }
    return values;
  }

  private static long usedAfterGc() {
    System.gc();
    System.gc();
    Runtime runtime = Runtime.getRuntime();
    return runtime.totalMemory() - runtime.freeMemory();
  }

  private static void resetPeaks() {
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        pool.resetPeakUsage();
      }
    }
  }

  private static long heapPeaks() {
    long sum = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        sum += pool.getPeakUsage().getUsed();
      }
    }
    return sum;
  }
}
