package io.bloomoperator.bench;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.StoreObjectKeys;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.watch.ObjectStore;
import io.bloomoperator.watch.s3.S3ObjectStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * A reader's download and swap of a store-backed snapshot (issue 19), on a real versitygw: for each
 * payload size, the snapshot is uploaded once in the operator's 1 MB chunks at its {@link
 * StoreObjectKeys} keys, then read back through {@link S3ObjectStore} and the decoder (ranged GETs,
 * N chunks ahead, SHA-256 per chunk and for the payload) exactly as {@code LiveBloomFilter} does,
 * while the previous version is still held (what a swap costs). Prints, per size and parallelism:
 * download + verify time, throughput, the heap retained after the swap (served + new filter) and
 * the peak heap during the load (sum of the heap pools' peaks: an upper bound).
 *
 * <p>Arguments: {@code --bytes 120000000,1200000000 --parallelism 1,4,8}. Run with an -Xmx of at
 * least 2.2 times the largest size (see docs/benchmarks.md).
 */
public final class StoreReadBenchmark {

  private static final int CHUNK_SIZE = 1_000_000;
  private static final String NS = "bench";
  private static final String FILTER = "big";
  private static final String PREFIX = "bloom";

  private StoreReadBenchmark() {}

  public static void main(String[] args) throws Exception {
    List<Long> sizes = List.of(120_000_000L);
    List<Integer> parallelisms = List.of(1, 4, 8);
    for (int i = 0; i + 1 < args.length; i += 2) {
      switch (args[i]) {
        case "--bytes" -> sizes = split(args[i + 1]).stream().map(Long::parseLong).toList();
        case "--parallelism" ->
            parallelisms = split(args[i + 1]).stream().map(Integer::parseInt).toList();
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    S3Server server = S3Server.shared();
    String bucket = server.createBucket("bench");
    System.out.printf(
        "java %s, -Xmx %d MB, %d CPUs%n",
        System.getProperty("java.version"),
        Runtime.getRuntime().maxMemory() >> 20,
        Runtime.getRuntime().availableProcessors());
    System.out.println(
        "payload_MB,parallelism,load_ms,MB_per_s,served_MB_after_gc,retained_after_swap_MB,"
            + "peak_heap_during_load_MB");
    for (long bytes : sizes) {
      Manifest manifest;
      BloomFilterBits served;
      try (S3Client root = server.client()) {
        long started = System.nanoTime();
        manifest = upload(root, bucket, filter(bytes));
        System.err.printf(
            "uploaded %d MB in %d ms%n",
            manifest.totalBytes() >> 20, (System.nanoTime() - started) / 1_000_000);
      }
      served = null;
      for (int parallelism : parallelisms) {
        try (S3ObjectStore store =
            S3ObjectStore.builder()
                .endpoint(server.endpoint())
                .bucket(bucket)
                .prefix(PREFIX)
                .region(S3Server.REGION)
                .credentials(
                    StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(server.accessKey(), server.secretKey())))
                .parallelism(parallelism)
                .build()) {
          if (served == null) {
            served = load(store, manifest); // the filter a reader serves while it swaps
          }
          long servedHeap = usedAfterGc();
          resetPeaks();
          long started = System.nanoTime();
          BloomFilterBits loaded = load(store, manifest);
          long millis = (System.nanoTime() - started) / 1_000_000;
          long peak = heapPeaks();
          long retained = usedAfterGc();
          System.out.printf(
              "%d,%d,%d,%.1f,%d,%d,%d%n",
              manifest.totalBytes() / 1_000_000,
              parallelism,
              millis,
              manifest.totalBytes() / 1e6 / (millis / 1e3),
              servedHeap >> 20,
              retained >> 20,
              peak >> 20);
          if (loaded.numBits() != served.numBits()) {
            throw new IllegalStateException("loaded another filter");
          }
        }
      }
      served = null;
      System.gc();
    }
    System.exit(0);
  }

  private static BloomFilterBits filter(long payloadBytes) {
    BloomFilterBits.Builder builder =
        BloomFilterBits.builder(KeyType.LONG, (payloadBytes - 6) * 8, 7);
    for (long key = 0; key < 1_000_000; key++) {
      builder.putLong(key * 0x9E3779B97F4A7C15L);
    }
    return builder.build();
  }

  /** Uploads {@code bits} in 1 MB chunks to their keys and returns the manifest. */
  private static Manifest upload(S3Client root, String bucket, BloomFilterBits bits)
      throws Exception {
    String directory = StoreObjectKeys.filterDirectory(PREFIX, NS, FILTER);
    SnapshotEncoder.Result result =
        SnapshotEncoder.encode(
            bits,
            CHUNK_SIZE,
            (index, data, length, sha) ->
                root.putObject(
                    b ->
                        b.bucket(bucket)
                            .key(
                                StoreObjectKeys.key(
                                    directory,
                                    io.bloomoperator.snapshot.SnapshotNames.chunkName(
                                        FILTER, 1, index),
                                    sha)),
                    RequestBody.fromBytes(java.util.Arrays.copyOf(data, length))));
    return Manifest.of(FILTER, 1, bits, 1_000_000, result, Instant.now()).inStore("primary");
  }

  /** What the reader does: keys from its own namespace and filter, chunks in order, verified. */
  private static BloomFilterBits load(ObjectStore store, Manifest manifest) throws Exception {
    String directory = StoreObjectKeys.filterDirectory(store.prefix(), NS, FILTER);
    List<ObjectStore.Chunk> chunks = new ArrayList<>();
    Map<Manifest.ChunkRef, Integer> positions = new HashMap<>();
    for (Manifest.ChunkRef ref : manifest.chunks()) {
      positions.put(ref, chunks.size());
      chunks.add(
          new ObjectStore.Chunk(
              StoreObjectKeys.key(directory, ref.name(), ref.sha256()), ref.bytes()));
    }
    try (ObjectStore.Download download = store.open(chunks)) {
      return SnapshotDecoder.decode(manifest, (index, ref) -> download.load(positions.get(ref)));
    }
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

  private static List<String> split(String csv) {
    return List.of(csv.split(","));
  }
}
