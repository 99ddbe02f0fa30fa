package io.bloomoperator.watch.bench;

import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotConfigMaps;
import io.bloomoperator.snapshot.SnapshotDecoder;
import io.bloomoperator.snapshot.SnapshotEncoder;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.watch.BloomFilterListener;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Propagation benchmark on a real kube-apiserver + etcd (the test harness's {@link KubeCluster}):
 * the time from a manifest update to the swap in a running {@link LiveBloomFilter}, for a 1-chunk
 * (~1 MB) and a 50-chunk (~50 MB) snapshot, over repeated publishes; plus the publish throughput of
 * the chunk ConfigMaps.
 *
 * <p>Each round publishes version v exactly as the operator's {@code SnapshotStore} does (chunks
 * first, immutable, binaryData "chunk"; then the manifest updated with its resourceVersion as
 * precondition) and waits until the watcher's {@link BloomFilterListener#onUpdate} reports v.
 * Propagation is measured from just after the manifest update returned (the chunks already exist)
 * to that callback, both with {@link System#nanoTime()} in this JVM. The watcher has its own client
 * (own connection pool), as an application would. Chunks of versions older than v-1 are deleted
 * after each round so etcd does not fill up.
 *
 * <p>Filter contents are random bytes (about half the bits set, like a filter at its design
 * capacity) plus a few thousand fresh keys per version so every version has another digest. A
 * sparse filter would be mostly zero bytes and could look unrealistically fast if the HTTP layer
 * compresses responses.
 *
 * <pre>
 *   mvn -q -o -pl sidecar-lib test-compile exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *     "-Dexec.args=-Xmx2g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp %classpath \
 *      io.bloomoperator.watch.bench.PropagationBenchmark"
 * </pre>
 *
 * <p>Arguments (all optional): {@code --small-rounds N} (default 30), {@code --large-rounds N}
 * (default 15), {@code --warmup N} (default 2, per size), {@code --sizes 1,50} (chunk counts to
 * run).
 */
public final class PropagationBenchmark {

  /** The operator's chunk size. */
  static final int CHUNK_SIZE = 1_000_000;

  static final int NUM_HASH_FUNCTIONS = 7;
  static final int KEYS_PER_VERSION = 2_000;
  static final Duration SWAP_TIMEOUT = Duration.ofSeconds(120);

  private PropagationBenchmark() {}

  /** One size: how many chunks, and rounds. */
  record Case(int chunks, int warmup, int rounds) {
    /** The largest whole-word filter whose payload fits in exactly {@code chunks} chunks. */
    int numLongs() {
      return (int) (((long) chunks * CHUNK_SIZE - SnapshotEncoder.HEADER_BYTES) / Long.BYTES);
    }

    String label() {
      return chunks == 1 ? "~1 MB (1 chunk)" : "~" + chunks + " MB (" + chunks + " chunks)";
    }
  }

  /** Timings of one measured round. */
  record Round(
      long version,
      long payloadBytes,
      long chunkPhaseNanos,
      long manifestWriteNanos,
      long propagationNanos,
      long loadNanos) {}

  /** Everything measured for one size. */
  record Result(Case size, long payloadBytes, List<Round> rounds, long failures) {}

  public static void main(String[] args) throws Exception {
    int smallRounds = 30;
    int largeRounds = 15;
    int warmup = 2;
    List<Integer> sizes = List.of(1, 50);
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--small-rounds" -> smallRounds = Integer.parseInt(args[++i]);
        case "--large-rounds" -> largeRounds = Integer.parseInt(args[++i]);
        case "--warmup" -> warmup = Integer.parseInt(args[++i]);
        case "--sizes" ->
            sizes =
                Arrays.stream(args[++i].split(","))
                    .map(String::trim)
                    .map(Integer::parseInt)
                    .toList();
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }

    KubeCluster cluster = KubeCluster.shared();
    List<Result> results = new ArrayList<>();
    String namespace = "bench-propagation-" + Long.toHexString(System.nanoTime() & 0xffffff);
    try (KubernetesClient admin = cluster.newClient();
        KubernetesClient publisherClient = cluster.newClient();
        KubernetesClient watcherClient = cluster.newClient()) {
      admin
          .namespaces()
          .resource(
              new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .create();
      System.out.printf("namespace %s; etcd size before: %s%n", namespace, storageSize(admin));
      try {
        for (int chunks : sizes) {
          Case size = new Case(chunks, warmup, chunks <= 1 ? smallRounds : largeRounds);
          results.add(run(size, namespace, publisherClient, watcherClient));
          System.out.printf("etcd size after %s: %s%n", size.label(), storageSize(admin));
        }
      } finally {
        admin.namespaces().withName(namespace).delete();
      }
    }
    printTable(results);
    System.exit(0); // runs the cluster's shutdown hook; client threads must not keep the JVM alive
  }

  static Result run(
      Case size, String namespace, KubernetesClient publisherClient, KubernetesClient watcherClient)
      throws Exception {
    String filterName = "prop-" + size.chunks() + "c";
    SplittableRandom random = new SplittableRandom(size.chunks());
    BloomFilterBits bits = randomFilter(size.numLongs(), random);
    Publisher publisher = new Publisher(publisherClient, namespace, filterName);

    Map<Long, CompletableFuture<long[]>> swaps = new ConcurrentHashMap<>();
    AtomicLong failures = new AtomicLong();
    BloomFilterListener listener =
        new BloomFilterListener() {
          @Override
          public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
            long now = System.nanoTime();
            swaps
                .computeIfAbsent(newVersion, v -> new CompletableFuture<>())
                .complete(new long[] {now, loadDuration.toNanos()});
          }

          @Override
          public void onFailure(long version, Exception exception) {
            failures.incrementAndGet();
            System.out.printf("  load of v%d failed: %s%n", version, exception);
          }
        };

    System.out.printf(
        "%n== %s: payload %,d bytes, %d warm-up + %d measured rounds ==%n",
        size.label(), SnapshotEncoder.payloadSize(bits), size.warmup(), size.rounds());
    long version = 1;
    BloomFilterBits.Builder next = BloomFilterBits.builder(bits);
    addKeys(next, random);
    bits = next.build();
    Publisher.Timing first = publisher.publish(bits, keyCount(version), version);
    LiveBloomFilter<Long> live =
        BloomFilterWatcher.builder(watcherClient, namespace, filterName, LiveKeyType.LONG)
            .listener(listener)
            .start();
    List<Round> rounds = new ArrayList<>();
    try {
      if (!live.awaitReady(SWAP_TIMEOUT)) {
        throw new IllegalStateException("watcher did not load v1 within " + SWAP_TIMEOUT);
      }
      System.out.printf(
          "  v1 published (chunks %.0f ms) and loaded%n", first.chunkPhaseNanos() / 1e6);
      for (int i = 0; i < size.warmup() + size.rounds(); i++) {
        version++;
        next = BloomFilterBits.builder(bits);
        long probe = addKeys(next, random);
        bits = next.build();
        CompletableFuture<long[]> swapped =
            swaps.computeIfAbsent(version, v -> new CompletableFuture<>());
        Publisher.Timing timing = publisher.publish(bits, keyCount(version), version);
        long[] swap = swapped.get(SWAP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        if (live.currentVersion() < version || !live.mightContain(probe)) {
          throw new IllegalStateException("v" + version + " reported but not served");
        }
        Round round =
            new Round(
                version,
                timing.payloadBytes(),
                timing.chunkPhaseNanos(),
                timing.manifestWriteNanos(),
                swap[0] - timing.manifestWrittenAt(),
                swap[1]);
        boolean measured = i >= size.warmup();
        if (measured) {
          rounds.add(round);
        }
        System.out.printf(
            Locale.ROOT,
            "  %s v%-3d chunks %7.1f ms (%6.1f MB/s)  manifest write %5.1f ms  propagation %7.1f ms"
                + " (load %7.1f ms)%n",
            measured ? "   " : "wu ",
            version,
            round.chunkPhaseNanos() / 1e6,
            mbPerSecond(round.payloadBytes(), round.chunkPhaseNanos()),
            round.manifestWriteNanos() / 1e6,
            round.propagationNanos() / 1e6,
            round.loadNanos() / 1e6);
        swaps.remove(version - 1);
        if (version - 2 >= 1) {
          publisher.deleteChunks(version - 2); // keep v-1 (the operator's grace) and v
        }
      }
    } finally {
      live.close();
      for (long v = Math.max(1, version - 1); v <= version; v++) {
        publisher.deleteChunks(v);
      }
      publisher.deleteManifest();
    }
    return new Result(size, SnapshotEncoder.payloadSize(bits), rounds, failures.get());
  }

  /**
   * A filter whose words are random (about half the bits set), built through the public decoder
   * from a random payload with a valid header.
   */
  static BloomFilterBits randomFilter(int numLongs, SplittableRandom random) {
    byte[] payload = new byte[SnapshotEncoder.HEADER_BYTES + numLongs * Long.BYTES];
    ByteBuffer buffer = ByteBuffer.wrap(payload);
    buffer.put((byte) SnapshotEncoder.STRATEGY_MURMUR128_MITZ_64);
    buffer.put((byte) NUM_HASH_FUNCTIONS);
    buffer.putInt(numLongs);
    while (buffer.remaining() >= Long.BYTES) {
      buffer.putLong(random.nextLong());
    }
    try {
      return SnapshotDecoder.decodePayload(payload, KeyType.LONG);
    } catch (io.bloomoperator.snapshot.SnapshotVerificationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Adds fresh random keys so the version's digest differs; returns one of them as a probe. */
  static long addKeys(BloomFilterBits.Builder bits, SplittableRandom random) {
    long probe = 0;
    for (int i = 0; i < KEYS_PER_VERSION; i++) {
      probe = random.nextLong();
      bits.putLong(probe);
    }
    return probe;
  }

  /** Nominal key count of a version (only the manifest's keyCount / expectedFpp depend on it). */
  static long keyCount(long version) {
    return version * KEYS_PER_VERSION;
  }

  static double mbPerSecond(long bytes, long nanos) {
    return bytes / 1e6 / (nanos / 1e9);
  }

  /**
   * etcd's database size as the API server reports it (apiserver_storage_size_bytes), if exposed.
   */
  static String storageSize(KubernetesClient client) {
    try {
      String metrics = client.raw("/metrics");
      if (metrics == null) {
        return "n/a";
      }
      for (String line : metrics.split("\n")) {
        if (line.startsWith("apiserver_storage_size_bytes")) {
          double bytes = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
          return String.format(Locale.ROOT, "%.0f MB", bytes / 1e6);
        }
      }
      return "n/a";
    } catch (RuntimeException e) {
      return "n/a (" + e.getMessage() + ")";
    }
  }

  // ---- report ----

  static void printTable(List<Result> results) {
    System.out.println();
    System.out.println(
        "Propagation: manifest update returned -> LiveBloomFilter listener onUpdate (ms)");
    System.out.println(
        "| snapshot | payload bytes | n | p50 | p99 | min | max | load p50 (part of it) |"
            + " from PUT start p50 / p99 |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (Result r : results) {
      long[] propagation =
          r.rounds().stream().mapToLong(Round::propagationNanos).sorted().toArray();
      long[] load = r.rounds().stream().mapToLong(Round::loadNanos).sorted().toArray();
      long[] fromPutStart =
          r.rounds().stream()
              .mapToLong(x -> x.propagationNanos() + x.manifestWriteNanos())
              .sorted()
              .toArray();
      System.out.printf(
          Locale.ROOT,
          "| %s | %,d | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f / %.1f |%n",
          r.size().label(),
          r.payloadBytes(),
          propagation.length,
          ms(percentile(propagation, 50)),
          ms(percentile(propagation, 99)),
          ms(propagation[0]),
          ms(propagation[propagation.length - 1]),
          ms(percentile(load, 50)),
          ms(percentile(fromPutStart, 50)),
          ms(percentile(fromPutStart, 99)));
    }
    System.out.println();
    System.out.println(
        "Publish: encode + create all chunk ConfigMaps (MB = 10^6 bytes of payload);"
            + " manifest GET+PUT separately");
    System.out.println(
        "| snapshot | n | MB/s p50 | MB/s min | MB/s max | chunk phase p50 (ms) |"
            + " manifest write p50 (ms) |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (Result r : results) {
      double[] mbs =
          r.rounds().stream()
              .mapToDouble(x -> mbPerSecond(x.payloadBytes(), x.chunkPhaseNanos()))
              .sorted()
              .toArray();
      long[] chunkPhase = r.rounds().stream().mapToLong(Round::chunkPhaseNanos).sorted().toArray();
      long[] manifest = r.rounds().stream().mapToLong(Round::manifestWriteNanos).sorted().toArray();
      System.out.printf(
          Locale.ROOT,
          "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |%n",
          r.size().label(),
          mbs.length,
          mbs[(int) Math.ceil(mbs.length * 0.5) - 1],
          mbs[0],
          mbs[mbs.length - 1],
          ms(percentile(chunkPhase, 50)),
          ms(percentile(manifest, 50)));
    }
    long failures = results.stream().mapToLong(Result::failures).sum();
    System.out.printf("%nfailed loads reported by the watcher: %d%n", failures);
    System.out.println("percentiles are nearest-rank: with n <= 100, p99 is the maximum");
    System.out.println(
        "load = the watcher's own fetch + verify time (listener loadDuration); it can"
            + " exceed propagation because the watch event may arrive before the PUT response");
  }

  /** Nearest-rank percentile of sorted values. */
  static long percentile(long[] sorted, double p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }

  static double ms(long nanos) {
    return nanos / 1e6;
  }

  /**
   * Publishes snapshots the way the operator's {@code SnapshotStore} does
   * (io.bloomoperator.publish, in the operator module), with the same {@link SnapshotConfigMaps}
   * objects: every chunk created, never applied; then the manifest updated with the resourceVersion
   * read before as precondition, with the previous-version annotations. No ownerReference: there is
   * no BloomFilter resource here. (The test fixture {@code
   * io.bloomoperator.watch.SnapshotPublisher} is package-private, hence this class.)
   */
  static final class Publisher {

    /** When and how long: chunk phase = encode + create every chunk; manifest write = GET + PUT. */
    record Timing(
        long payloadBytes, long chunkPhaseNanos, long manifestWriteNanos, long manifestWrittenAt) {}

    private final KubernetesClient client;
    private final String namespace;
    private final String filterName;

    Publisher(KubernetesClient client, String namespace, String filterName) {
      this.client = client;
      this.namespace = namespace;
      this.filterName = filterName;
    }

    Timing publish(BloomFilterBits bits, long keyCount, long version) {
      // The operator reads the current manifest before it builds and publishes
      // (SnapshotStore.read()).
      ConfigMap current =
          client
              .configMaps()
              .inNamespace(namespace)
              .withName(SnapshotNames.manifestName(filterName))
              .get();
      long chunksStart = System.nanoTime();
      SnapshotEncoder.Result encoded;
      try {
        encoded =
            SnapshotEncoder.encode(
                bits,
                CHUNK_SIZE,
                (index, data, length, sha256) ->
                    client
                        .configMaps()
                        .inNamespace(namespace)
                        .resource(
                            SnapshotConfigMaps.chunk(
                                namespace, filterName, version, index, data, length))
                        .create());
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      long chunksEnd = System.nanoTime();
      Instant now = Instant.now();
      Manifest manifest = Manifest.of(filterName, version, bits, keyCount, encoded, now);
      long writeStart = System.nanoTime();
      writeManifest(manifest, current, now);
      long written = System.nanoTime();
      return new Timing(
          encoded.totalBytes(), chunksEnd - chunksStart, written - writeStart, written);
    }

    private void writeManifest(Manifest manifest, ConfigMap current, Instant now) {
      Map<String, String> annotations = new HashMap<>();
      Manifest previous = parse(current);
      if (previous != null) {
        SnapshotConfigMaps.putSuperseded(annotations, previous.referencedVersions(), now);
      }
      ConfigMap desired = SnapshotConfigMaps.manifest(namespace, manifest, null, annotations);
      if (current == null) {
        client.configMaps().inNamespace(namespace).resource(desired).create();
      } else {
        desired.getMetadata().setResourceVersion(current.getMetadata().getResourceVersion());
        client.configMaps().inNamespace(namespace).resource(desired).update();
      }
    }

    private static Manifest parse(ConfigMap configMap) {
      String json = configMap == null ? null : SnapshotConfigMaps.manifestJson(configMap);
      try {
        return json == null ? null : Manifest.fromJson(json);
      } catch (io.bloomoperator.snapshot.SnapshotVerificationException e) {
        return null;
      }
    }

    void deleteChunks(long version) {
      client
          .configMaps()
          .inNamespace(namespace)
          .withLabelSelector(SnapshotNames.chunkSelector(filterName, version))
          .delete();
    }

    void deleteManifest() {
      client
          .configMaps()
          .inNamespace(namespace)
          .withName(SnapshotNames.manifestName(filterName))
          .delete();
    }
  }
}
