package io.bloomoperator.bench;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.publish.BuildRecord;
import io.bloomoperator.publish.DeltaPolicy;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.PublishedPayloads;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.SnapshotJanitor;
import io.bloomoperator.publish.SnapshotStore;
import io.bloomoperator.snapshot.BloomFilterBits;
import io.bloomoperator.snapshot.BloomFilterSizing;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.watch.BloomFilterListener;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.ObjectStore;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Delta snapshots against whole snapshots on the real kube-apiserver + etcd (issue 11), side by
 * side in one run:
 *
 * <ol>
 *   <li>Writer: a filter of N keys refreshed R times, each refresh adding C keys and removing C (a
 *       sliding window of key ids), published through the operator's {@link PublishPlan} with
 *       {@link DeltaPolicy#defaults()} and with {@link DeltaPolicy#WHOLE_SNAPSHOTS_ONLY}; the
 *       janitor runs between refreshes with no grace period. Per refresh: the chunk bytes created,
 *       the bytes the publisher's client sent and received on the wire, and etcd's database size
 *       (its own /metrics) before and after each mode.
 *   <li>Readers: M {@link LiveBloomFilter}s, each with its own client behind its own counting
 *       {@link TcpProxy}, follow the same refreshes: time from the manifest update to the last
 *       reader's swap, and bytes each reader received.
 *   <li>Cold start: a reader starting with nothing against base + 0, 4, 8, 16 deltas, and against
 *       one whole snapshot of the same content, for one or more churn rates.
 * </ol>
 *
 * <p>The versions are exactly what a full rebuild of each key window would publish: a Bloom filter
 * is the OR of its keys' bits, so the keys every window shares are hashed once and each version
 * adds only its own window edges to a copy.
 *
 * <pre>
 * mvn -q -pl operator test-compile exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-Xmx3g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dbloom.repoRoot=$PWD \
 *    -cp %classpath io.bloomoperator.bench.DeltaBenchmark --keys 20000000"
 * </pre>
 *
 * <p>Arguments (all optional): {@code --keys N} (default 20,000,000), {@code --key-type
 * long|string} (long), {@code --churn C} (10,000 added and C removed per refresh), {@code
 * --refreshes R} (20), {@code --readers M} (20), {@code --modes delta,whole}, {@code --cold-chains
 * 0,4,8,16}, {@code --cold-churn 10000,100000} (keys added and removed per delta of the cold-start
 * chains), {@code --cold-samples S} (3 cold readers per point).
 */
public final class DeltaBenchmark {

  static final int CHUNK_SIZE = 1_000_000;
  static final double FPP = 0.01;
  static final Duration SWAP_TIMEOUT = Duration.ofMinutes(3);
  static final long NAMESPACE_BUDGET = 1L << 40;

  /**
   * The cold-start chains must reach the longest chain asked for even at high churn: the default
   * single-delta limit, no limit on the chain's total size.
   */
  static DeltaPolicy coldPolicy(int maxChain) {
    return new DeltaPolicy(maxChain, DeltaPolicy.DEFAULT_MAX_DELTA_PERCENT, 1000);
  }

  private DeltaBenchmark() {}

  record Settings(
      long keys,
      KeyType keyType,
      int churn,
      int refreshes,
      int readers,
      List<String> modes,
      List<Integer> coldChains,
      List<Integer> coldChurn,
      int coldSamples) {}

  /** One refresh as measured. */
  record Refresh(
      long version,
      boolean delta,
      long chunkBytes,
      int chainLength,
      long wireUp,
      long wireDown,
      long publishNanos,
      long fromPutStartNanos,
      long fromReturnNanos,
      long[] readerBytes) {}

  /** etcd's database size. */
  record DbSize(double total, double inUse) {
    String describe() {
      return String.format(Locale.ROOT, "total %.1f MB, in use %.1f MB", total / 1e6, inUse / 1e6);
    }
  }

  /** One mode's run. */
  record ModeResult(
      String mode,
      long wholeBytes,
      List<Refresh> refreshes,
      DbSize before,
      DbSize after,
      DbSize afterCompaction,
      long failures) {}

  /** One cold-start point. */
  record ColdPoint(
      int churn,
      int chain,
      long storedBytes,
      double[] deltaSeconds,
      long[] deltaBytes,
      double[] wholeSeconds,
      long[] wholeBytes) {}

  public static void main(String[] args) throws Exception {
    Settings settings = parse(args);
    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(RealKubernetesExtension.repoRoot().resolve("crds"));
    Etcd etcd = Etcd.find();
    System.out.printf(
        Locale.ROOT,
        "keys %,d (%s), churn %,d added + %,d removed per refresh, %d refreshes, %d readers;"
            + " %d cores, max heap %.0f MB%netcd %s; kube-apiserver etcd flags: %s%n",
        settings.keys(),
        settings.keyType(),
        settings.churn(),
        settings.churn(),
        settings.refreshes(),
        settings.readers(),
        Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() / 1e6,
        etcd.url,
        Etcd.apiServerFlags());
    Keys keys =
        settings.modes().isEmpty()
            ? null
            : new Keys(settings.keys(), settings.keyType(), settings.refreshes(), settings.churn());
    List<ModeResult> results = new ArrayList<>();
    try (KubernetesClient admin = cluster.newClient()) {
      for (String mode : settings.modes()) {
        DeltaPolicy policy =
            "delta".equals(mode) ? DeltaPolicy.defaults() : DeltaPolicy.WHOLE_SNAPSHOTS_ONLY;
        results.add(runMode(cluster, admin, etcd, settings, keys, mode, policy));
      }
      keys = null; // the cold-start runs build their own windows
      List<ColdPoint> cold = new ArrayList<>();
      for (int churn : settings.coldChurn()) {
        cold.addAll(runColdStart(cluster, admin, settings, churn));
      }
      printWriterTable(results);
      if (settings.readers() > 0) {
        printReaderTable(results, settings.readers());
      }
      printColdTable(cold);
    }
    System.exit(0); // runs the cluster's shutdown hook; client threads must not keep the JVM alive
  }

  // ---- refresh runs (writer + readers) ----

  static ModeResult runMode(
      KubeCluster cluster,
      KubernetesClient admin,
      Etcd etcd,
      Settings settings,
      Keys keys,
      String mode,
      DeltaPolicy policy)
      throws Exception {
    String namespace = namespace(admin, "delta-bench-" + mode);
    BloomFilter owner = createFilter(admin, namespace, "products", settings);
    etcd.compactAndDefragment();
    DbSize before = etcd.size();
    System.out.printf("%n== %s: %s; etcd before: %s ==%n", mode, policy, before.describe());

    Swaps swaps = new Swaps();
    AtomicLong putStart = new AtomicLong();
    String manifestPath =
        "/namespaces/" + namespace + "/configmaps/" + SnapshotNames.manifestName("products");
    try (TcpProxy publisherProxy = proxy(cluster);
        KubernetesClient publisherClient =
            client(cluster, publisherProxy, manifestPutTimer(manifestPath, putStart))) {
      Publisher publisher = new Publisher(publisherClient, owner, policy);
      BloomFilterBits bits = keys.version(0);
      long wholeBytes = publisher.publish(bits).manifest().totalBytes();
      List<Reader> readers = new ArrayList<>();
      List<Refresh> refreshes = new ArrayList<>();
      try {
        for (int i = 0; i < settings.readers(); i++) {
          readers.add(Reader.start(cluster, namespace, "products", settings.keyType(), swaps));
        }
        for (Reader reader : readers) {
          if (!reader.live.awaitReady(SWAP_TIMEOUT)) {
            throw new IllegalStateException("a reader did not load version 1");
          }
        }
        System.out.printf(
            Locale.ROOT,
            "  v1 whole %,d bytes published; %d readers loaded it%n",
            wholeBytes,
            readers.size());
        for (int r = 1; r <= settings.refreshes(); r++) {
          bits = null; // drop the old version before the new one is built: one bit array less
          bits = keys.version(r);
          long version = publisher.version() + 1;
          Swaps.Arrival arrival = swaps.expect(version, readers.size());
          long[] readerBefore =
              readers.stream().mapToLong(x -> x.proxy.bytesFromTarget()).toArray();
          long upBefore = publisherProxy.bytesToTarget();
          long downBefore = publisherProxy.bytesFromTarget();
          putStart.set(0);
          long start = System.nanoTime();
          Manifest manifest = publisher.publish(bits).manifest();
          long returned = System.nanoTime();
          if (manifest.version() != version) {
            throw new IllegalStateException(
                "published v" + manifest.version() + ", not " + version);
          }
          if (!arrival.latch.await(SWAP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IllegalStateException(
                "v" + version + ": " + arrival.latch.getCount() + " readers did not swap");
          }
          long last = arrival.last.get();
          long[] readerBytes = new long[readers.size()];
          for (int i = 0; i < readers.size(); i++) {
            readerBytes[i] = readers.get(i).proxy.bytesFromTarget() - readerBefore[i];
          }
          publisher.clean(); // as the reconciler does before its next build; no grace period
          Refresh refresh =
              new Refresh(
                  version,
                  manifest.chained() && manifest.versionBytes() != manifest.totalBytes(),
                  manifest.versionBytes(),
                  manifest.deltas().size(),
                  publisherProxy.bytesToTarget() - upBefore,
                  publisherProxy.bytesFromTarget() - downBefore,
                  returned - start,
                  last - putStart.get(),
                  last - returned,
                  readerBytes);
          refreshes.add(refresh);
          System.out.printf(
              Locale.ROOT,
              "  v%-3d %-5s chunks %,11d B (chain %2d)  wire up %,11d down %,11d  publish %6.0f ms"
                  + "  last swap %6.0f ms after PUT start  reader bytes p50 %,11d%n",
              version,
              refresh.delta() ? "delta" : "whole",
              refresh.chunkBytes(),
              refresh.chainLength(),
              refresh.wireUp(),
              refresh.wireDown(),
              refresh.publishNanos() / 1e6,
              refresh.fromPutStartNanos() / 1e6,
              percentile(sorted(readerBytes), 50));
          swaps.forget(version - 1);
        }
      } finally {
        readers.forEach(Reader::close);
      }
      DbSize after = etcd.size();
      etcd.compactAndDefragment();
      DbSize compacted = etcd.size();
      System.out.printf(
          "  etcd after the run: %s; after compaction + defragmentation: %s%n",
          after.describe(), compacted.describe());
      deleteSnapshot(admin, namespace);
      return new ModeResult(
          mode, wholeBytes, refreshes, before, after, compacted, swaps.failures.get());
    }
  }

  // ---- cold start ----

  static List<ColdPoint> runColdStart(
      KubeCluster cluster, KubernetesClient admin, Settings settings, int churn) throws Exception {
    int maxChain = settings.coldChains().stream().mapToInt(Integer::intValue).max().orElse(0);
    Keys keys = new Keys(settings.keys(), settings.keyType(), maxChain, churn);
    DeltaPolicy coldPolicy = coldPolicy(maxChain);
    String namespace = namespace(admin, "delta-bench-cold");
    BloomFilter chainOwner = createFilter(admin, namespace, "chained", settings);
    BloomFilter wholeOwner = createFilter(admin, namespace, "whole", settings);
    System.out.printf(
        Locale.ROOT,
        "%n== cold start, %,d keys added + %,d removed per delta, %s ==%n",
        churn,
        churn,
        coldPolicy);
    List<ColdPoint> points = new ArrayList<>();
    try (KubernetesClient writer = cluster.newClient()) {
      Publisher chained = new Publisher(writer, chainOwner, coldPolicy);
      Publisher whole = new Publisher(writer, wholeOwner, DeltaPolicy.WHOLE_SNAPSHOTS_ONLY);
      for (int chain = 0; chain <= maxChain; chain++) {
        BloomFilterBits bits = keys.version(chain);
        Manifest manifest = chained.publish(bits).manifest();
        chained.clean();
        if (manifest.deltas().size() != chain) {
          throw new IllegalStateException(
              "expected a chain of " + chain + ", got " + manifest.deltas().size());
        }
        if (!settings.coldChains().contains(chain)) {
          continue;
        }
        whole.publish(bits);
        whole.clean();
        bits = null;
        int samples = settings.coldSamples();
        double[] deltaSeconds = new double[samples];
        long[] deltaBytes = new long[samples];
        double[] wholeSeconds = new double[samples];
        long[] wholeBytes = new long[samples];
        for (int s = 0; s < samples; s++) {
          long[] c =
              coldRead(cluster, namespace, "chained", settings.keyType(), manifest.version());
          deltaSeconds[s] = c[0] / 1e9;
          deltaBytes[s] = c[1];
          long[] w = coldRead(cluster, namespace, "whole", settings.keyType(), whole.version());
          wholeSeconds[s] = w[0] / 1e9;
          wholeBytes[s] = w[1];
        }
        ColdPoint point =
            new ColdPoint(
                churn,
                chain,
                manifest.storedBytes(),
                deltaSeconds,
                deltaBytes,
                wholeSeconds,
                wholeBytes);
        points.add(point);
        System.out.printf(
            Locale.ROOT,
            "  chain %2d (stored %,d B): cold base+chain %s s, %,d B; cold whole %s s, %,d B%n",
            chain,
            manifest.storedBytes(),
            Arrays.toString(round(deltaSeconds)),
            median(deltaBytes),
            Arrays.toString(round(wholeSeconds)),
            median(wholeBytes));
      }
    }
    deleteSnapshot(admin, namespace);
    return points;
  }

  /** Starts a reader with nothing loaded; returns {nanos to ready, bytes received}. */
  static long[] coldRead(
      KubeCluster cluster, String namespace, String filter, KeyType keyType, long version)
      throws Exception {
    Swaps swaps = new Swaps();
    long start = System.nanoTime();
    Reader reader = Reader.start(cluster, namespace, filter, keyType, swaps);
    try {
      if (!reader.live.awaitReady(SWAP_TIMEOUT)) {
        throw new IllegalStateException("cold reader of " + filter + " did not load");
      }
      long took = System.nanoTime() - start;
      if (reader.live.currentVersion() != version) {
        throw new IllegalStateException(
            "cold reader loaded v" + reader.live.currentVersion() + ", not v" + version);
      }
      return new long[] {took, reader.proxy.bytesFromTarget()};
    } finally {
      reader.close();
    }
  }

  // ---- fixtures ----

  /**
   * Key windows: version r holds the key ids [r·C, r·C + N). The ids every version of the run
   * shares are hashed once ({@code core}); a version is a copy of the core plus its own edges.
   */
  static final class Keys {
    private final long n;
    private final KeyType keyType;
    private final long churn;
    private final long sharedFrom;
    private final BloomFilterSizing sizing;
    private final BloomFilterBits core;

    Keys(long n, KeyType keyType, int maxVersion, long churn) {
      if ((long) maxVersion * churn >= n) {
        throw new IllegalArgumentException("refreshes × churn must stay below the key count");
      }
      this.n = n;
      this.keyType = keyType;
      this.churn = churn;
      this.sharedFrom = maxVersion * churn;
      this.sizing = BloomFilterSizing.forKeys(n, FPP);
      long start = System.nanoTime();
      BloomFilterBits.Builder builder = BloomFilterBits.builder(keyType, sizing);
      put(builder, sharedFrom, n);
      this.core = builder.build();
      System.out.printf(
          Locale.ROOT,
          "shared keys [%,d, %,d) hashed in %.1f s; numBits %,d, k %d%n",
          sharedFrom,
          n,
          (System.nanoTime() - start) / 1e9,
          core.numBits(),
          core.numHashFunctions());
    }

    /** Exactly the filter of the ids [r·C, r·C + N). */
    BloomFilterBits version(int r) {
      BloomFilterBits.Builder builder = BloomFilterBits.builder(core);
      put(builder, r * churn, sharedFrom);
      put(builder, n, n + r * churn);
      return builder.build();
    }

    private void put(BloomFilterBits.Builder builder, long from, long to) {
      for (long id = from; id < to; id++) {
        if (keyType == KeyType.LONG) {
          builder.putLong(id);
        } else {
          builder.putString("product-" + id);
        }
      }
    }
  }

  /** Publishes through the operator's own {@link PublishPlan} and cleans like the reconciler. */
  static final class Publisher {
    private final KubernetesClient client;
    private final BloomFilter owner;
    private final DeltaPolicy policy;
    private PublishedSnapshot current;

    /**
     * The payload last published, as the reconciler holds it; {@code -Dbloom.readBack=true}: none,
     * so every delta reads the published chain back (as before the operator held it).
     */
    private final PublishedPayloads payloads =
        Boolean.getBoolean("bloom.readBack") ? null : new PublishedPayloads(Long.MAX_VALUE);

    Publisher(KubernetesClient client, BloomFilter owner, DeltaPolicy policy) {
      this.client = client;
      this.owner = owner;
      this.policy = policy;
    }

    long version() {
      return current == null || current.manifest() == null ? 0 : current.manifest().version();
    }

    PublishedSnapshot publish(BloomFilterBits bits) throws Exception {
      Instant now = Instant.now();
      SnapshotStore store = new SnapshotStore(client, owner, null);
      String uid = owner.getMetadata().getUid();
      BloomFilterBits held =
          payloads == null || current == null ? null : payloads.of(uid, current.manifest());
      PublishPlan.Facts facts = store.facts(bits, current, policy, CHUNK_SIZE, held);
      PublishPlan plan =
          PublishPlan.plan(
              current == null ? null : current.manifest(),
              facts,
              policy,
              new PublishPlan.Budget(owner.getMetadata().getNamespace(), NAMESPACE_BUDGET, () -> 0),
              version(),
              now);
      if (!plan.newVersion()) {
        throw new IllegalStateException("the refresh changed nothing");
      }
      current =
          store.apply(
              plan,
              facts,
              bits,
              0,
              current,
              new BuildRecord("bench-" + now.toEpochMilli(), 1, now));
      if (payloads != null) {
        payloads.published(uid, current.manifest(), bits);
      }
      return current;
    }

    /** The janitor with retainPrevious 0: only the chunks the manifest names stay. */
    void clean() throws Exception {
      current =
          SnapshotJanitor.clean(
                  new SnapshotStore(client, owner, null), current, Duration.ZERO, Instant.now())
              .state();
    }
  }

  /** One application pod: its own client, through its own counting proxy. */
  record Reader(TcpProxy proxy, KubernetesClient client, LiveBloomFilter<?> live, StoreLink store) {

    static Reader start(
        KubeCluster cluster, String namespace, String filter, KeyType keyType, Swaps swaps) {
      return start(cluster, namespace, filter, keyType, swaps, null);
    }

    /** A reader that fetches chunks from {@code store} when a manifest names it (or null). */
    static Reader start(
        KubeCluster cluster,
        String namespace,
        String filter,
        KeyType keyType,
        Swaps swaps,
        StoreLink store) {
      TcpProxy proxy = DeltaBenchmark.proxy(cluster);
      KubernetesClient client = DeltaBenchmark.client(cluster, proxy, null);
      BloomFilterListener listener =
          new BloomFilterListener() {
            @Override
            public void onUpdate(long oldVersion, long newVersion, Duration loadDuration) {
              swaps.arrived(newVersion, System.nanoTime());
            }

            @Override
            public void onFailure(long version, Exception exception) {
              swaps.failures.incrementAndGet();
              System.out.printf("  a reader failed to load v%d: %s%n", version, exception);
            }
          };
      LiveBloomFilter<?> live =
          keyType == KeyType.LONG
              ? watch(
                  BloomFilterWatcher.builder(client, namespace, filter, LiveKeyType.LONG),
                  listener,
                  store)
              : watch(
                  BloomFilterWatcher.builder(client, namespace, filter, LiveKeyType.STRING),
                  listener,
                  store);
      return new Reader(proxy, client, live, store);
    }

    private static <K> LiveBloomFilter<K> watch(
        BloomFilterWatcher.Builder<K> builder, BloomFilterListener listener, StoreLink store) {
      builder.resync(Duration.ZERO).listener(listener);
      if (store != null) {
        builder.objectStore(store.name(), store.objectStore());
      }
      return builder.start();
    }

    void close() {
      live.close();
      client.close();
      proxy.close();
      if (store != null) {
        store.close();
      }
    }
  }

  /**
   * A reader's own object-store client, through its own counting proxy (the bytes it downloads).
   */
  record StoreLink(String name, TcpProxy proxy, ObjectStore objectStore) {
    void close() {
      if (objectStore instanceof AutoCloseable closeable) {
        try {
          closeable.close();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      proxy.close();
    }
  }

  /** When each reader swapped to each version. */
  static final class Swaps {
    static final class Arrival {
      final CountDownLatch latch;
      final AtomicLong last = new AtomicLong();
      final List<Long> all = Collections.synchronizedList(new ArrayList<>());

      Arrival(int readers) {
        latch = new CountDownLatch(readers);
      }
    }

    final Map<Long, Arrival> byVersion = new ConcurrentHashMap<>();
    final AtomicLong failures = new AtomicLong();

    Arrival expect(long version, int readers) {
      return byVersion.computeIfAbsent(version, v -> new Arrival(readers));
    }

    void arrived(long version, long nanos) {
      Arrival arrival = byVersion.get(version);
      if (arrival != null) {
        arrival.last.accumulateAndGet(nanos, Math::max);
        arrival.all.add(nanos);
        arrival.latch.countDown();
      }
    }

    void forget(long version) {
      byVersion.remove(version);
    }
  }

  static TcpProxy proxy(KubeCluster cluster) {
    URI api = URI.create(cluster.clientConfig().getMasterUrl());
    return new TcpProxy(api.getHost(), api.getPort());
  }

  static KubernetesClient client(KubeCluster cluster, TcpProxy proxy, Interceptor interceptor) {
    Config config = cluster.clientConfig();
    URI api = URI.create(config.getMasterUrl());
    config.setMasterUrl("https://" + api.getHost() + ":" + proxy.port());
    KubernetesClientBuilder builder = new KubernetesClientBuilder().withConfig(config);
    if (interceptor != null) {
      builder.withHttpClientBuilderConsumer(
          b -> b.addOrReplaceInterceptor("manifest-put", interceptor));
    }
    return builder.build();
  }

  /** Records when the manifest PUT is sent (t0 of "manifest update → last swap", upper bound). */
  static Interceptor manifestPutTimer(String manifestPath, AtomicLong putStart) {
    return new Interceptor() {
      @Override
      public void before(BasicBuilder request, HttpRequest original, RequestTags tags) {
        if ("PUT".equals(original.method())
            && original.uri().getPath().endsWith(manifestPath)
            && putStart.get() == 0) {
          putStart.set(System.nanoTime());
        }
      }
    };
  }

  static String namespace(KubernetesClient admin, String prefix) {
    String name = prefix + "-" + Long.toHexString(System.nanoTime() & 0xffffff);
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    return name;
  }

  /** A real BloomFilter resource, so the snapshot's ownerReferences are valid. Never built here. */
  static BloomFilter createFilter(
      KubernetesClient admin, String namespace, String name, Settings settings) {
    return admin
        .resources(BloomFilter.class)
        .inNamespace(namespace)
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: bloomoperator.io/v1alpha1
                kind: BloomFilter
                metadata: {name: %s}
                spec:
                  falsePositiveRate: %s
                  expectedInsertions: %d
                  keyType: %s
                  source:
                    configMap: {name: unused, key: ids.txt}
                """
                    .formatted(
                        name,
                        FPP,
                        settings.keys(),
                        settings.keyType() == KeyType.LONG ? "Long" : "String"),
                BloomFilter.class))
        .create();
  }

  /** Deletes every ConfigMap of the namespace (no namespace controller runs here). */
  static void deleteSnapshot(KubernetesClient admin, String namespace) {
    admin.configMaps().inNamespace(namespace).withLabel(SnapshotNames.LABEL_MANAGED_BY).delete();
    admin.resources(BloomFilter.class).inNamespace(namespace).delete();
  }

  /** The etcd kube-api-test started for this JVM: its /metrics, compaction, defragmentation. */
  static final class Etcd {
    private static final Pattern REVISION = Pattern.compile("\"revision\"\\s*:\\s*\"?(\\d+)");
    private final String url;
    private final HttpClient http = HttpClient.newHttpClient();

    private Etcd(String url) {
      this.url = url;
    }

    /** etcd is a child of this JVM: its client URL is on its command line. */
    static Etcd find() {
      for (ProcessHandle process : ProcessHandle.current().descendants().toList()) {
        String command = process.info().command().orElse("");
        String[] args = process.info().arguments().orElse(new String[0]);
        if (!command.endsWith("/etcd")) {
          continue;
        }
        for (int i = 0; i + 1 < args.length; i++) {
          if (args[i].equals("--listen-client-urls")) {
            String listen = args[i + 1].split(",")[0];
            return new Etcd(listen.replace("0.0.0.0", "127.0.0.1"));
          }
        }
      }
      throw new IllegalStateException("etcd started by kube-api-test not found among children");
    }

    static String apiServerFlags() {
      for (ProcessHandle process : ProcessHandle.current().descendants().toList()) {
        if (process.info().command().orElse("").endsWith("/kube-apiserver")) {
          return Arrays.stream(process.info().arguments().orElse(new String[0]))
              .filter(a -> a.contains("etcd") || a.contains("compaction"))
              .toList()
              .toString();
        }
      }
      return "n/a";
    }

    DbSize size() throws Exception {
      String metrics =
          http.send(
                  java.net.http.HttpRequest.newBuilder(URI.create(url + "/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      return new DbSize(
          metric(metrics, "etcd_mvcc_db_total_size_in_bytes"),
          metric(metrics, "etcd_mvcc_db_total_size_in_use_in_bytes"));
    }

    /** Compacts away every old revision, then defragments, so a run starts from live data. */
    void compactAndDefragment() throws Exception {
      String range = post("/v3/kv/range", "{\"key\":\"AA==\",\"limit\":1}");
      Matcher m = REVISION.matcher(range);
      if (!m.find()) {
        throw new IllegalStateException("no revision in " + range);
      }
      post("/v3/kv/compaction", "{\"revision\":\"" + m.group(1) + "\",\"physical\":true}");
      post("/v3/maintenance/defragment", "{}");
    }

    private String post(String path, String json) throws Exception {
      HttpResponse<String> response =
          http.send(
              java.net.http.HttpRequest.newBuilder(URI.create(url + path))
                  .POST(java.net.http.HttpRequest.BodyPublishers.ofString(json))
                  .header("Content-Type", "application/json")
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            path + ": " + response.statusCode() + " " + response.body());
      }
      return response.body();
    }

    /** The value of etcd's metric {@code name} (the first sample), NaN when absent. */
    double metric(String name) throws Exception {
      return metric(
          http.send(
                  java.net.http.HttpRequest.newBuilder(URI.create(url + "/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body(),
          name);
    }

    private static double metric(String metrics, String name) {
      for (String line : metrics.split("\n")) {
        if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
          return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
      return Double.NaN;
    }
  }

  // ---- report ----

  static void printWriterTable(List<ModeResult> results) {
    System.out.println();
    System.out.println("Writer, per refresh (mean over the refreshes; % of the whole payload)");
    System.out.println(
        "| mode | whole payload | chunk bytes created p50 | mean | wire bytes sent p50 | mean |"
            + " wire bytes received mean | publish p50 | etcd before | etcd after run |"
            + " etcd after compaction |");
    System.out.println(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |");
    for (ModeResult r : results) {
      double chunk = r.refreshes().stream().mapToLong(Refresh::chunkBytes).average().orElse(0);
      double up = r.refreshes().stream().mapToLong(Refresh::wireUp).average().orElse(0);
      double down = r.refreshes().stream().mapToLong(Refresh::wireDown).average().orElse(0);
      long[] publish = r.refreshes().stream().mapToLong(Refresh::publishNanos).sorted().toArray();
      long chunkP50 =
          percentile(r.refreshes().stream().mapToLong(Refresh::chunkBytes).sorted().toArray(), 50);
      long upP50 =
          percentile(r.refreshes().stream().mapToLong(Refresh::wireUp).sorted().toArray(), 50);
      System.out.printf(
          Locale.ROOT,
          "| %s | %,d B | %,d B (%.2f %%) | %,.0f B (%.2f %%) | %,d B (%.2f %%) | %,.0f B (%.2f %%)"
              + " | %,.0f B (%.1f %%) | %.0f ms | %s | %s | %s |%n",
          r.mode(),
          r.wholeBytes(),
          chunkP50,
          100.0 * chunkP50 / r.wholeBytes(),
          chunk,
          100 * chunk / r.wholeBytes(),
          upP50,
          100.0 * upP50 / r.wholeBytes(),
          up,
          100 * up / r.wholeBytes(),
          down,
          100 * down / r.wholeBytes(),
          percentile(publish, 50) / 1e6,
          r.before().describe(),
          r.after().describe(),
          r.afterCompaction().describe());
      long deltas = r.refreshes().stream().filter(Refresh::delta).count();
      System.out.printf(
          "  %s: %d of %d refreshes were deltas; failed reader loads: %d%n",
          r.mode(), deltas, r.refreshes().size(), r.failures());
    }
  }

  static void printReaderTable(List<ModeResult> results, int readers) {
    System.out.println();
    System.out.printf(
        "Readers (%d, own client each): manifest update -> last reader's swap; bytes received per"
            + " reader per refresh%n",
        readers);
    System.out.println(
        "| mode | n | last swap p50 / p99 from PUT start | from publish() return p50 / p99 |"
            + " bytes/reader p50 | p99 | mean (% of whole) |");
    System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (ModeResult r : results) {
      printReaderRow(r.mode() + ", all refreshes", r.refreshes(), r.wholeBytes());
      List<Refresh> deltas = r.refreshes().stream().filter(Refresh::delta).toList();
      if (!deltas.isEmpty() && deltas.size() < r.refreshes().size()) {
        printReaderRow(r.mode() + ", delta refreshes", deltas, r.wholeBytes());
        printReaderRow(
            r.mode() + ", new bases",
            r.refreshes().stream().filter(x -> !x.delta()).toList(),
            r.wholeBytes());
      }
    }
    System.out.println("percentiles are nearest-rank: with n <= 100, p99 is the maximum");
  }

  static void printReaderRow(String label, List<Refresh> refreshes, long wholeBytes) {
    long[] fromPut = refreshes.stream().mapToLong(Refresh::fromPutStartNanos).sorted().toArray();
    long[] fromReturn = refreshes.stream().mapToLong(Refresh::fromReturnNanos).sorted().toArray();
    long[] bytes =
        refreshes.stream().flatMapToLong(x -> Arrays.stream(x.readerBytes())).sorted().toArray();
    double mean = Arrays.stream(bytes).average().orElse(0);
    System.out.printf(
        Locale.ROOT,
        "| %s | %d | %.0f / %.0f ms | %.0f / %.0f ms | %,d B | %,d B | %,.0f B (%.2f %%) |%n",
        label,
        fromPut.length,
        percentile(fromPut, 50) / 1e6,
        percentile(fromPut, 99) / 1e6,
        percentile(fromReturn, 50) / 1e6,
        percentile(fromReturn, 99) / 1e6,
        percentile(bytes, 50),
        percentile(bytes, 99),
        mean,
        100 * mean / wholeBytes);
  }

  static void printColdTable(List<ColdPoint> points) {
    System.out.println();
    System.out.println("Cold start: new reader, nothing cached -> ready (median of the samples)");
    System.out.println(
        "| churn per delta | chain | stored bytes | base + chain: s | bytes received |"
            + " one whole snapshot: s | bytes received | time ratio |");
    System.out.println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (ColdPoint p : points) {
      double chain = median(p.deltaSeconds());
      double whole = median(p.wholeSeconds());
      System.out.printf(
          Locale.ROOT,
          "| %,d | %d | %,d | %.2f | %,d | %.2f | %,d | %.2f |%n",
          p.churn(),
          p.chain(),
          p.storedBytes(),
          chain,
          median(p.deltaBytes()),
          whole,
          median(p.wholeBytes()),
          chain / whole);
    }
  }

  static long[] sorted(long[] values) {
    long[] copy = values.clone();
    Arrays.sort(copy);
    return copy;
  }

  /** Nearest-rank percentile of sorted values. */
  static long percentile(long[] sorted, double p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }

  static double median(double[] values) {
    double[] copy = values.clone();
    Arrays.sort(copy);
    return copy[(copy.length - 1) / 2];
  }

  static long median(long[] values) {
    long[] copy = sorted(values);
    return copy[(copy.length - 1) / 2];
  }

  static double[] round(double[] values) {
    return Arrays.stream(values).map(v -> Math.round(v * 100) / 100.0).toArray();
  }

  static Settings parse(String[] args) {
    long keys = 20_000_000L;
    KeyType keyType = KeyType.LONG;
    int churn = 10_000;
    int refreshes = 20;
    int readers = 20;
    List<String> modes = List.of("delta", "whole");
    List<Integer> coldChains = List.of(0, 4, 8, 16);
    List<Integer> coldChurn = List.of(10_000, 100_000);
    int coldSamples = 3;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--keys" -> keys = Long.parseLong(args[++i]);
        case "--key-type" ->
            keyType = "string".equalsIgnoreCase(args[++i]) ? KeyType.STRING : KeyType.LONG;
        case "--churn" -> churn = Integer.parseInt(args[++i]);
        case "--refreshes" -> refreshes = Integer.parseInt(args[++i]);
        case "--readers" -> readers = Integer.parseInt(args[++i]);
        case "--modes" ->
            modes = Arrays.stream(args[++i].split(",")).filter(m -> !m.isBlank()).toList();
        case "--cold-chains" -> coldChains = ints(args[++i]);
        case "--cold-churn" -> coldChurn = ints(args[++i]);
        case "--cold-samples" -> coldSamples = Integer.parseInt(args[++i]);
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    return new Settings(
        keys, keyType, churn, refreshes, readers, modes, coldChains, coldChurn, coldSamples);
  }

  private static List<Integer> ints(String list) {
    if (list.isBlank()) {
      return List.of();
    }
    return Arrays.stream(list.split(",")).map(String::trim).map(Integer::parseInt).toList();
  }
}
