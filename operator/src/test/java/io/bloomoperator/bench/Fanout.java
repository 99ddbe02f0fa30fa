package io.bloomoperator.bench;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.bench.DeltaBenchmark.Reader;
import io.bloomoperator.bench.DeltaBenchmark.StoreLink;
import io.bloomoperator.bench.DeltaBenchmark.Swaps;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * The readers of {@link ScaleBenchmark}'s filter {@code scale/products}: started one after another
 * (so their first loads do not all hold two arrays at once), then timed through refreshes the
 * operator publishes. Each reader has its own API client behind its own counting proxy and, when
 * the filter is in a store, its own {@link S3ObjectStore} behind another: the per-reader bytes are
 * what the API server and the store sent that reader.
 */
final class Fanout {

  private static final Duration TIMEOUT = Duration.ofMinutes(20);

  private final KubeCluster cluster;
  private final KubernetesClient admin;
  private final TcpProxy operatorProxy;
  private final AtomicLong putStart;
  private final S3Server s3;
  private final String bucket;
  private final Swaps swaps = new Swaps();
  private final List<Reader> readers = new ArrayList<>();

  Fanout(
      KubeCluster cluster,
      KubernetesClient admin,
      TcpProxy operatorProxy,
      AtomicLong putStart,
      S3Server s3,
      String bucket) {
    this.cluster = cluster;
    this.admin = admin;
    this.operatorProxy = operatorProxy;
    this.putStart = putStart;
    this.s3 = s3;
    this.bucket = bucket;
  }

  void startReaders(int count) throws InterruptedException {
    HeapPeak.reset();
    long[] loadMillis = new long[count];
    long start = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long t = System.nanoTime();
      Reader reader =
          Reader.start(cluster, "scale", "products", KeyType.STRING, swaps, storeLink());
      readers.add(reader);
      if (!reader.live().awaitReady(TIMEOUT)) {
        throw new IllegalStateException("reader " + i + " did not load");
      }
      loadMillis[i] = (System.nanoTime() - t) / 1_000_000;
    }
    long[] sorted = DeltaBenchmark.sorted(loadMillis);
    System.out.printf(
        Locale.ROOT,
        "readers              %d started one after another in %.1f s; load p50 %d ms, max %d"
            + " ms%n",
        count,
        (System.nanoTime() - start) / 1e9,
        DeltaBenchmark.percentile(sorted, 50),
        sorted[sorted.length - 1]);
    printBytes("first load", bytes(true, null), bytes(false, null));
    System.gc();
    System.out.printf(
        Locale.ROOT,
        "heap                 peak %.0f MB while they loaded; %.0f MB after GC, all serving (-Xmx"
            + " %.0f MB)%n",
        HeapPeak.bytes() / 1e6,
        usedHeap() / 1e6,
        Runtime.getRuntime().maxMemory() / 1e6);
  }

  /** Applies {@code change} to the export and times the operator's publish and every swap. */
  void refresh(double churn, Runnable change) throws InterruptedException {
    BloomFilter before = filter();
    long version = before.getStatus().getVersion() + 1;
    Swaps.Arrival arrival = swaps.expect(version, readers.size());
    long[] apiBefore = bytes(true, null);
    long[] storeBefore = bytes(false, null);
    long opTo = operatorProxy.bytesToTarget();
    long opFrom = operatorProxy.bytesFromTarget();
    putStart.set(0);
    HeapPeak.reset();
    long changed = System.nanoTime();
    change.run();
    BloomFilter after = awaitVersion(version);
    long published = System.nanoTime();
    if (!arrival.latch.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(
          (readers.size() - arrival.latch.getCount())
              + " readers of "
              + readers.size()
              + " swapped");
    }
    long t0 = putStart.get();
    var status = after.getStatus();
    System.out.printf(
        Locale.ROOT,
        "%n== refresh, churn %s (%s keys out, as many in): v%d, %s ==%n",
        churn,
        String.format(Locale.ROOT, "%,d", Math.round(churn * status.getKeys())),
        version,
        status.getDeltas() != null && status.getDeltas() > 0
            ? "a delta on v" + status.getBaseVersion() + " (" + status.getDeltas() + " in chain)"
            : "whole");
    System.out.printf(
        Locale.ROOT,
        "operator             build %.1f s; source change → Ready %.1f s; wire to API server"
            + " %,d B, from it %,d B%n",
        status.getLastBuildDurationMillis() / 1e3,
        (published - changed) / 1e9,
        operatorProxy.bytesToTarget() - opTo,
        operatorProxy.bytesFromTarget() - opFrom);
    if (t0 == 0) {
      System.out.println("  (no manifest PUT seen: swap times not measured)");
    } else {
      long[] swapMillis =
          DeltaBenchmark.sorted(
              arrival.all.stream().mapToLong(t -> (t - t0) / 1_000_000).toArray());
      System.out.printf(
          Locale.ROOT,
          "swap after PUT       p50 %d ms, p99 %d ms, last reader %d ms (%d readers, %d failed"
              + " loads so far)%n",
          DeltaBenchmark.percentile(swapMillis, 50),
          DeltaBenchmark.percentile(swapMillis, 99),
          swapMillis[swapMillis.length - 1],
          readers.size(),
          swaps.failures.get());
    }
    printBytes("refresh", bytes(true, apiBefore), bytes(false, storeBefore));
    System.out.printf(
        Locale.ROOT, "heap peak            %.0f MB (whole JVM)%n", HeapPeak.bytes() / 1e6);
    swaps.forget(version);
  }

  void close() {
    readers.forEach(Reader::close);
  }

  private StoreLink storeLink() {
    return s3 == null ? null : storeLink(s3, bucket, "scale-store");
  }

  /**
   * A reader's own client of {@code bucket} on {@code s3}, for BloomStore {@code storeName},
   * through its own counting proxy (root credentials).
   */
  static StoreLink storeLink(S3Server s3, String bucket, String storeName) {
    TcpProxy proxy = new TcpProxy("127.0.0.1", s3.port());
    S3ObjectStore store =
        S3ObjectStore.builder()
            .endpoint(URI.create("http://127.0.0.1:" + proxy.port()))
            .bucket(bucket)
            .region(S3Server.REGION)
            .credentials(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(s3.accessKey(), s3.secretKey())))
            .build();
    return new StoreLink(storeName, proxy, store);
  }

  /** Bytes each reader received so far from the API server (or the store), minus {@code base}. */
  private long[] bytes(boolean api, long[] base) {
    long[] out = new long[readers.size()];
    for (int i = 0; i < out.length; i++) {
      Reader r = readers.get(i);
      long now =
          api
              ? r.proxy().bytesFromTarget()
              : r.store() == null ? 0 : r.store().proxy().bytesFromTarget();
      out[i] = now - (base == null ? 0 : base[i]);
    }
    return out;
  }

  private static void printBytes(String what, long[] api, long[] store) {
    long[] a = DeltaBenchmark.sorted(api);
    long[] s = DeltaBenchmark.sorted(store);
    System.out.printf(
        Locale.ROOT,
        "bytes per reader     %s: API server p50 %,d B, max %,d B, all readers %,d B; store p50"
            + " %,d B, max %,d B, all readers %,d B%n",
        what,
        DeltaBenchmark.percentile(a, 50),
        a[a.length - 1],
        java.util.Arrays.stream(a).sum(),
        DeltaBenchmark.percentile(s, 50),
        s[s.length - 1],
        java.util.Arrays.stream(s).sum());
  }

  private BloomFilter filter() {
    return admin.resources(BloomFilter.class).inNamespace("scale").withName("products").get();
  }

  private BloomFilter awaitVersion(long version) throws InterruptedException {
    long deadline = System.nanoTime() + TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      BloomFilter f = filter();
      var ready = ReadyCondition.of(f);
      if (f.getStatus().getVersion() >= version
          && ready.isPresent()
          && "True".equals(ready.get().getStatus())) {
        return f;
      }
      if (ready.isPresent() && "False".equals(ready.get().getStatus())) {
        throw new IllegalStateException(
            "refresh failed: " + ready.get().getReason() + ": " + ready.get().getMessage());
      }
      Thread.sleep(200);
    }
    throw new IllegalStateException("v" + version + " not published in " + TIMEOUT);
  }

  private static long usedHeap() {
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }
}
