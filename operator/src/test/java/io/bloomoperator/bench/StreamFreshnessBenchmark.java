package io.bloomoperator.bench;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.bench.DeltaBenchmark.Reader;
import io.bloomoperator.bench.DeltaBenchmark.StoreLink;
import io.bloomoperator.bench.DeltaBenchmark.Swaps;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.KeyType;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.ServedLatencies;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.KafkaServer;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.bloomoperator.testing.servers.S3Server;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.bloomoperator.watch.ObjectStore;
import io.bloomoperator.watch.s3.S3ObjectStore;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * Freshness of a change stream (issue 29): the time from a key's produce (acknowledged by the
 * broker, or its row committed) to the moment every one of {@code readers} sidecar-lib readers
 * answers "maybe present" for it. One BloomFilter sized for {@code expected} keys with {@code
 * spec.changes} and {@code publishEvery}; a real API server, a real Kafka broker or PostgreSQL, and
 * with {@code store} a versitygw object store, each in its own process; the operator in this JVM
 * (or in its own with {@code operatorJvm=…}) and the readers in this JVM. Keys are produced in
 * batches of {@code batch} (default 1) at {@code rate} keys per second for {@code seconds}; the
 * last key of every batch is timed: a checker looks at every reader every 10 ms, so figures are at
 * most that much late.
 *
 * <p>Options after the five numbers:
 *
 * <ul>
 *   <li>{@code kafka} (default) or {@code postgres}: with {@code postgres} the keys are rows
 *       inserted into a table of a real PostgreSQL 15 started with {@code wal_level = logical} and
 *       streamed with {@code spec.changes.postgresLogical}; "produce" is the commit.
 *   <li>{@code store}: the snapshot goes to a BloomStore on a local versitygw (defined as an
 *       administrator does, the filter names it), readers fetch chunks from it.
 *   <li>{@code table=N} (postgres): the bulk source is a table of N {@code bigint} ids 1..N
 *       (keyType Long), filled once with {@code generate_series} (timed apart); the stream inserts
 *       N+1, N+2, … one statement per batch. {@code pgdata=DIR} keeps the server's data directory
 *       across runs, so the table is filled only by the first. The table's {@code
 *       pg_stat_user_tables} scans are reported from after the first build to the end.
 *   <li>{@code meter}: every reader gets its own API client (and store client) behind its own
 *       counting proxy, started one after another; the run reports bytes per reader per second,
 *       etcd's written bytes and database size, and CPU by process and thread group.
 *   <li>{@code operatorJvm=-Xmx2g,…}: the operator runs {@link OperatorMain#main} in a JVM of its
 *       own with these options, so its CPU and memory are process figures.
 *   <li>{@code env.NAME=VALUE}: an operator setting (docs/configuration.md).
 *   <li>{@code change=N} (with {@code table}): after the run, the same N new rows once through the
 *       stream and once through a full rebuild (changes removed, {@code bloomoperator.io/rebuild}):
 *       time until every reader serves them, and the table's rows read.
 * </ul>
 *
 * <pre>
 * java ... io.bloomoperator.bench.StreamFreshnessBenchmark readers rate seconds expected
 *     publishEvery [kafka|postgres] [store] [table=N] [batch=N] [pgdata=DIR] [meter]
 *     [operatorJvm=OPTS] [env.NAME=VALUE ...] [change=N]
 * </pre>
 */
public final class StreamFreshnessBenchmark {

  private static final String NS = "fresh";
  private static final String FILTER = "ids";
  private static final String STORE = "fresh-store";
  private static final String OPERATOR_NAMESPACE = "bloom-system";
  private static final int CLIENTS = 8;

  private StreamFreshnessBenchmark() {}

  /** The run's settings, from the command line. */
  private record Options(
      int readers,
      int rate,
      int seconds,
      long expected,
      String publishEvery,
      boolean postgres,
      boolean store,
      long table,
      int batch,
      Path pgdata,
      boolean meter,
      List<String> operatorJvm,
      Map<String, String> env,
      int change) {

    static Options parse(String[] args) {
      boolean postgres = false;
      boolean store = false;
      long table = 0;
      int batch = 1;
      Path pgdata = null;
      boolean meter = false;
      List<String> operatorJvm = null;
      Map<String, String> env = new TreeMap<>();
      int change = 0;
      for (int i = 5; i < args.length; i++) {
        String a = args[i];
        if (a.equals("postgres") || a.equals("kafka")) {
          postgres = a.equals("postgres");
        } else if (a.equals("store")) {
          store = true;
        } else if (a.equals("meter")) {
          meter = true;
        } else if (a.startsWith("table=")) {
          table = Long.parseLong(a.substring(6));
        } else if (a.startsWith("batch=")) {
          batch = Integer.parseInt(a.substring(6));
        } else if (a.startsWith("pgdata=")) {
          pgdata = Path.of(a.substring(7));
        } else if (a.startsWith("operatorJvm=")) {
          operatorJvm = List.of(a.substring(12).split(","));
        } else if (a.startsWith("env.")) {
          int eq = a.indexOf('=');
          env.put(a.substring(4, eq), a.substring(eq + 1));
        } else if (a.startsWith("change=")) {
          change = Integer.parseInt(a.substring(7));
        } else {
          throw new IllegalArgumentException("unknown option " + a);
        }
      }
      if (table > 0 && !postgres) {
        throw new IllegalArgumentException("table=N needs postgres");
      }
      return new Options(
          args.length > 0 ? Integer.parseInt(args[0]) : 50,
          args.length > 1 ? Integer.parseInt(args[1]) : 10,
          args.length > 2 ? Integer.parseInt(args[2]) : 60,
          args.length > 3 ? Long.parseLong(args[3]) : 1_000_000,
          args.length > 4 ? args[4] : "1s",
          postgres,
          store,
          table,
          batch,
          pgdata,
          meter,
          operatorJvm,
          env,
          change);
    }
  }

  public static void main(String[] args) throws Exception {
    int exit = 1;
    try {
      run(Options.parse(args));
      exit = 0;
    } finally {
      // The readers', clients' and servers' threads would keep the JVM alive after a failure.
      System.exit(exit);
    }
  }

  private static void run(Options o) throws Exception {
    Source source =
        !o.postgres()
            ? new KafkaSource()
            : o.table() > 0 ? new BulkTableSource(o.table(), o.pgdata()) : new PostgresSource();
    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(RealKubernetesExtension.repoRoot().resolve("crds"));
    KubernetesClient admin = cluster.newClient();
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();

    Map<String, String> env = new LinkedHashMap<>();
    env.put("BLOOM_HTTP_ALLOW", "127.0.0.1/32");
    env.put("BLOOM_MIN_PUBLISH_INTERVAL", "0s");
    env.putAll(o.env());
    S3Server s3 = null;
    String bucket = null;
    TcpProxy operatorStore = null;
    if (o.store()) {
      s3 = S3Server.start();
      bucket = s3.createBucket("fresh");
      TestStores.writerCredentials(admin, OPERATOR_NAMESPACE, s3);
      // The operator reaches the store through a counting proxy: the bytes it uploads.
      operatorStore = new TcpProxy("127.0.0.1", s3.port());
      TestStores.store(STORE)
          .at("http://127.0.0.1:" + operatorStore.port(), bucket)
          .allowing(NS)
          .create(admin);
      env.put("BLOOM_OPERATOR_NAMESPACE", OPERATOR_NAMESPACE);
    }
    Operator operator = null;
    OperatorProcess operatorProcess = null;
    if (o.operatorJvm() != null) {
      Path log = Files.createTempFile("bloom-operator-", ".log");
      operatorProcess = OperatorProcess.start(cluster.kubeconfig(), env, o.operatorJvm(), log);
      System.out.printf("operator in its own JVM (pid %d), log %s%n", operatorProcess.pid(), log);
    } else {
      operator =
          OperatorMain.start(
              cluster.newClient(),
              OperatorSettings.fromEnvironment(env),
              StoreSettings.fromEnvironment(env),
              null,
              new RuntimeOptions(0, false, null, "embedded", false),
              ReaderSettings.defaults());
    }
    System.out.printf("operator settings: %s%n", env);
    source.prepare(admin);
    long applied = System.nanoTime();
    admin
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: bloomoperator.io/v1alpha1
                kind: BloomFilter
                metadata: {name: %s, namespace: %s}
                spec:
                  falsePositiveRate: 0.01
                  expectedInsertions: %d
                %s%s
                """
                    .formatted(
                        FILTER,
                        NS,
                        o.expected(),
                        o.store() ? "  snapshot: {store: " + STORE + "}\n" : "",
                        source.spec(o.publishEvery()).indent(2)),
                BloomFilter.class))
        .create();

    // Readers.
    Swaps swaps = new Swaps();
    List<Reader> metered = new ArrayList<>();
    List<LiveBloomFilter<?>> live = new ArrayList<>();
    List<Predicate<String>> contains = new ArrayList<>();
    LiveKeyType<?> keyType = source.longKeys() ? LiveKeyType.LONG : LiveKeyType.STRING;
    if (o.meter()) {
      awaitFirstVersion(admin, Duration.ofMinutes(15));
      System.out.printf(
          Locale.ROOT,
          "first version: apply -> published %.1f s; %s%n",
          (System.nanoTime() - applied) / 1e9,
          describe(filter(admin)));
      long t = System.nanoTime();
      for (int i = 0; i < o.readers(); i++) {
        StoreLink link = o.store() ? Fanout.storeLink(s3, bucket, STORE) : null;
        Reader r =
            Reader.start(
                cluster,
                NS,
                FILTER,
                source.longKeys() ? KeyType.LONG : KeyType.STRING,
                swaps,
                link);
        if (!r.live().awaitReady(Duration.ofMinutes(5))) {
          throw new IllegalStateException("reader " + i + " did not load");
        }
        metered.add(r);
        live.add(r.live());
      }
      System.out.printf(
          Locale.ROOT,
          "%d readers loaded one after another in %.1f s; heap after GC %.0f MB%n",
          o.readers(),
          (System.nanoTime() - t) / 1e9,
          usedHeapAfterGc() / 1e6);
    } else {
      List<KubernetesClient> clients = new ArrayList<>();
      List<ObjectStore> stores = new ArrayList<>();
      for (int i = 0; i < CLIENTS; i++) {
        clients.add(cluster.newClient());
        if (o.store()) {
          stores.add(storeClient(s3, bucket));
        }
      }
      for (int i = 0; i < o.readers(); i++) {
        var builder = BloomFilterWatcher.builder(clients.get(i % CLIENTS), NS, FILTER, keyType);
        if (o.store()) {
          builder.objectStore(STORE, stores.get(i % CLIENTS));
        }
        live.add(builder.start());
      }
      // Before its first version a reader answers "maybe present" for every key.
      for (LiveBloomFilter<?> l : live) {
        if (!l.awaitReady(Duration.ofMinutes(5))) {
          throw new IllegalStateException("a reader did not load the first version");
        }
      }
    }
    for (LiveBloomFilter<?> l : live) {
      contains.add(containsPredicate(l, source.longKeys()));
    }
    Predicate<String> servedByAll = key -> contains.stream().allMatch(c -> c.test(key));
    long deadline = System.nanoTime() + Duration.ofMinutes(15).toNanos();
    while (!servedByAll.test(source.seed())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the readers did not load the first version");
      }
      Thread.sleep(50);
    }
    // Wait for the stream to be running: one key through it first (not measured).
    source.produce(0, 1);
    while (!servedByAll.test(source.key(0))) {
      Thread.sleep(20);
    }
    System.out.printf(
        Locale.ROOT,
        "%d readers, %,d keys/s in batches of %d for %d s, filter of %,d expected keys (%s),"
            + " publishEvery %s, %s%n",
        o.readers(),
        o.rate(),
        o.batch(),
        o.seconds(),
        o.expected(),
        o.store() ? "object store" : "ConfigMaps",
        o.publishEvery(),
        o.postgres() ? "postgresLogical" : "kafka");

    // The measured window.
    Meter meter =
        new Meter(admin, metered, operatorProcess, operatorStore, source, o.meter(), o.store());
    ServedLatencies served = new ServedLatencies(servedByAll);
    double periodNanos = 1e9 * o.batch() / o.rate();
    long start = System.nanoTime();
    meter.begin(start);
    long next = 1;
    long batches = 0;
    long lateBatches = 0;
    while (System.nanoTime() - start < Duration.ofSeconds(o.seconds()).toNanos()) {
      source.produce(next, o.batch());
      next += o.batch();
      served.produced(source.key(next - 1));
      batches++;
      long due = start + Math.round(batches * periodNanos);
      long sleep = due - System.nanoTime();
      if (sleep > 0) {
        Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
      } else if (sleep < -1_000_000_000L) {
        lateBatches++;
      }
    }
    long produceEnd = System.nanoTime();
    long produced = next - 1;
    long drain = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (served.pending() > 0 && System.nanoTime() < drain) {
      Thread.sleep(50);
    }
    served.close();
    long end = System.nanoTime();
    System.out.printf(
        Locale.ROOT,
        "produced %,d keys in %.1f s (%,.0f keys/s; %d batches more than 1 s behind schedule);"
            + " timed %d (the last of each batch), served by all %d readers: %d, never: %d%n",
        produced,
        (produceEnd - start) / 1e9,
        produced / ((produceEnd - start) / 1e9),
        lateBatches,
        batches,
        o.readers(),
        served.sorted().size(),
        served.pending());
    System.out.printf(
        Locale.ROOT,
        "produce (%s) -> served by all readers: %s%n",
        o.postgres() ? "committed" : "acked",
        served.summary());
    meter.end(start, end, (produceEnd - start) / 1e9);
    BloomFilter after = filter(admin);
    System.out.printf(
        Locale.ROOT,
        "versions published: %d; %s; status.stream: %s; reader load failures: %d%n",
        after.getStatus().getVersion(),
        describe(after),
        Serialization.asJson(after.getStatus().getStream()),
        swaps.failures.get());
    long inPlace = live.stream().mapToLong(LiveBloomFilter::deltasAppliedInPlace).sum();
    long loads = live.stream().mapToLong(LiveBloomFilter::loads).sum();
    System.out.printf(
        Locale.ROOT,
        "readers: %d deltas applied in place, %d loads (swaps) in all%n",
        inPlace,
        loads);

    if (o.change() > 0 && source instanceof BulkTableSource bulk) {
      changeBothWays(admin, bulk, servedByAll, next, o.change());
    }
    metered.forEach(Reader::close);
    live.forEach(LiveBloomFilter::close);
    if (operator != null) {
      operator.stop();
    }
    if (operatorProcess != null) {
      operatorProcess.close();
    }
  }

  /**
   * The same {@code count} new rows through the stream, then through a full rebuild: the time from
   * the commit until every reader serves them, and the table's rows the source read.
   */
  private static void changeBothWays(
      KubernetesClient admin,
      BulkTableSource bulk,
      Predicate<String> servedByAll,
      long next,
      int count)
      throws Exception {
    // Through the stream: one statement inserts them all.
    TableScans before = bulk.scans();
    bulk.produce(next, count);
    double stream = awaitServed(servedByAll, bulk, next, count, System.nanoTime());
    Thread.sleep(2_000); // PostgreSQL flushes a backend's counters at most once a second
    TableScans afterStream = bulk.scans();
    System.out.printf(
        Locale.ROOT,
        "%n== the same %,d-row change (%.2f %% of the table) ==%nstream: commit -> served by all"
            + " readers %.2f s; table rows read %s%n",
        count,
        100.0 * count / bulk.rows,
        stream,
        afterStream.minus(before));
    next += count;
    // Through a full rebuild: the stream removed first, so only the build can bring them. The
    // spec change itself makes a full build (it reads the table: waited for, not counted).
    String lastBuild = filter(admin).getStatus().getLastBuildTime();
    admin
        .resources(BloomFilter.class)
        .inNamespace(NS)
        .withName(FILTER)
        .edit(
            f -> {
              f.getSpec().setChanges(null);
              return f;
            });
    long settle = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (System.nanoTime() < settle) {
      BloomFilter f = filter(admin);
      if (!java.util.Objects.equals(lastBuild, f.getStatus().getLastBuildTime())
          && !"Building".equals(f.getStatus().getPhase())) {
        break;
      }
      Thread.sleep(200);
    }
    Thread.sleep(5_000);
    System.out.printf("after the spec change (changes removed): %s%n", describe(filter(admin)));
    long version = filter(admin).getStatus().getVersion();
    TableScans beforeBuild = bulk.scans();
    bulk.produce(next, count);
    long committed = System.nanoTime();
    admin
        .resources(BloomFilter.class)
        .inNamespace(NS)
        .withName(FILTER)
        .edit(
            f -> {
              Map<String, String> annotations = new java.util.HashMap<>();
              if (f.getMetadata().getAnnotations() != null) {
                annotations.putAll(f.getMetadata().getAnnotations());
              }
              annotations.put("bloomoperator.io/rebuild", Long.toString(committed));
              f.getMetadata().setAnnotations(annotations);
              return f;
            });
    double rebuild = awaitServed(servedByAll, bulk, next, count, committed);
    Thread.sleep(2_000);
    TableScans afterBuild = bulk.scans();
    BloomFilter f = filter(admin);
    System.out.printf(
        Locale.ROOT,
        "full rebuild: commit -> served by all readers %.2f s (build %.1f s, v%d -> v%d, %s);"
            + " table rows read %s%n",
        rebuild,
        f.getStatus().getLastBuildDurationMillis() / 1e3,
        version,
        f.getStatus().getVersion(),
        describe(f),
        afterBuild.minus(beforeBuild));
  }

  /**
   * Seconds from {@code t0} until every reader serves 100 keys spread over the batch from {@code
   * first}, its first and last included.
   */
  private static double awaitServed(
      Predicate<String> servedByAll, Source source, long first, int count, long t0)
      throws InterruptedException {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      keys.add(source.key(first + (long) i * (count - 1) / 99));
    }
    long deadline = t0 + Duration.ofMinutes(10).toNanos();
    while (!keys.stream().allMatch(servedByAll)) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the change was not served in 10 min");
      }
      Thread.sleep(10);
    }
    return (System.nanoTime() - t0) / 1e9;
  }

  /** What the measured window cost: bytes per reader, etcd, the operator, the table's scans. */
  private static final class Meter {
    private final KubernetesClient admin;
    private final List<Reader> readers;
    private final OperatorProcess operator;
    private final TcpProxy operatorStore;
    private final Source source;
    private final boolean full;
    private final boolean store;
    private DeltaBenchmark.Etcd etcd;
    private CpuTimeline cpu;
    private long[] apiBefore;
    private long[] storeBefore;
    private double walBefore;
    private DeltaBenchmark.DbSize dbBefore;
    private double operatorCpuBefore;
    private Map<Long, Map.Entry<String, Double>> serversBefore;
    private double operatorEtcdBefore;
    private long uploadBefore;
    private long versionBefore;
    private TableScans scansBefore;
    private final AtomicLong maxRss = new AtomicLong();
    private final AtomicLong bases = new AtomicLong();
    private final AtomicLong maxLag = new AtomicLong();
    private Thread sampler;

    Meter(
        KubernetesClient admin,
        List<Reader> readers,
        OperatorProcess operator,
        TcpProxy operatorStore,
        Source source,
        boolean full,
        boolean store) {
      this.admin = admin;
      this.readers = readers;
      this.operator = operator;
      this.operatorStore = operatorStore;
      this.source = source;
      this.full = full;
      this.store = store;
    }

    void begin(long now) throws Exception {
      versionBefore = version(admin);
      if (source instanceof BulkTableSource bulk) {
        scansBefore = bulk.scans();
      }
      if (!full) {
        return;
      }
      etcd = DeltaBenchmark.Etcd.find();
      walBefore = etcd.metric("etcd_disk_wal_write_bytes_total");
      dbBefore = etcd.size();
      apiBefore = bytes(true);
      storeBefore = bytes(false);
      uploadBefore = operatorStore == null ? 0 : operatorStore.bytesToTarget();
      if (operator != null) {
        operatorCpuBefore = operator.cpuSeconds();
        operatorEtcdBefore = operator.metric("bloomoperator_etcd_written_bytes_total");
      }
      serversBefore = serverCpu();
      cpu = CpuTimeline.start(Duration.ofSeconds(1));
      sampler =
          new Thread(
              () -> {
                // A compaction writes the published version again as a new whole base (the
                // version then published is a delta on it): a change of the base version.
                long lastBase = -1;
                while (!Thread.currentThread().isInterrupted()) {
                  try {
                    BloomFilter f = filter(admin);
                    var s = f.getStatus();
                    long base =
                        s.getDeltas() != null && s.getDeltas() > 0
                            ? s.getBaseVersion()
                            : s.getVersion();
                    if (lastBase >= 0 && base != lastBase) {
                      bases.incrementAndGet();
                    }
                    lastBase = base;
                    if (s.getStream() != null && s.getStream().getLag() != null) {
                      maxLag.accumulateAndGet(s.getStream().getLag(), Math::max);
                    }
                    if (operator != null) {
                      maxRss.accumulateAndGet(operator.memory("VmRSS"), Math::max);
                    }
                    Thread.sleep(250);
                  } catch (InterruptedException e) {
                    return;
                  } catch (RuntimeException e) {
                    // A failed poll: the next one counts.
                  }
                }
              },
              "meter");
      sampler.setDaemon(true);
      sampler.start();
    }

    void end(long start, long end, double produceSeconds) throws Exception {
      double seconds = (end - start) / 1e9;
      long versions = version(admin) - versionBefore;
      System.out.printf(
          Locale.ROOT,
          "window %.1f s (producing %.1f s, then until served): %d versions published (%.2f/s)%n",
          seconds,
          produceSeconds,
          versions,
          versions / seconds);
      if (scansBefore != null) {
        Thread.sleep(2_000); // PostgreSQL flushes a backend's counters at most once a second
        System.out.printf(
            "table %s, in the window: %s%n",
            ((BulkTableSource) source).table,
            ((BulkTableSource) source).scans().minus(scansBefore));
      }
      if (!full) {
        return;
      }
      sampler.interrupt();
      System.out.printf(
          Locale.ROOT,
          "new whole bases written in the window (base version changes, status polled every 250"
              + " ms): %d; max stream lag %d events%n",
          bases.get(),
          maxLag.get());
      perReader("API server", bytes(true), apiBefore, seconds);
      if (store) {
        perReader("store", bytes(false), storeBefore, seconds);
        long up = operatorStore.bytesToTarget() - uploadBefore;
        System.out.printf(
            Locale.ROOT,
            "operator -> store: %,d B in %.1f s = %,.0f B/s = %.2f GB/h (wire, HTTP included)%n",
            up,
            seconds,
            up / seconds,
            up / seconds * 3600 / 1e9);
      }
      double wal = etcd.metric("etcd_disk_wal_write_bytes_total") - walBefore;
      DeltaBenchmark.DbSize dbAfter = etcd.size();
      System.out.printf(
          Locale.ROOT,
          "etcd: WAL bytes written %,.0f (%,.0f B/s = %.1f MB/h), db size before %s, after %s%n",
          wal,
          wal / seconds,
          wal / seconds * 3600 / 1e6,
          dbBefore.describe(),
          dbAfter.describe());
      if (operator != null) {
        double etcdBytes =
            operator.metric("bloomoperator_etcd_written_bytes_total") - operatorEtcdBefore;
        double cpuSeconds = operator.cpuSeconds() - operatorCpuBefore;
        System.out.printf(
            Locale.ROOT,
            "operator (own JVM): CPU %.1f s in %.1f s = %.2f cores; RSS max in window %.0f MB,"
                + " peak (VmHWM) %.0f MB, now %.0f MB; its etcd write budget charged %,.0f B"
                + " (%.1f MB/h)%n",
            cpuSeconds,
            seconds,
            cpuSeconds / seconds,
            maxRss.get() / 1e6,
            operator.memory("VmHWM") / 1e6,
            operator.memory("VmRSS") / 1e6,
            etcdBytes,
            etcdBytes / seconds * 3600 / 1e6);
      }
      Map<String, Double> servers = new TreeMap<>();
      serverCpu()
          .forEach(
              (pid, now) -> {
                var before = serversBefore.get(pid);
                servers.merge(
                    now.getKey(),
                    now.getValue() - (before == null ? 0 : before.getValue()),
                    Double::sum);
              });
      servers.forEach(
          (name, cpuSeconds) ->
              System.out.printf(
                  Locale.ROOT,
                  "    %-44s %.2f cores (its processes alive at the end)%n",
                  "server " + name,
                  cpuSeconds / seconds));
      cpu.report("the window", start, end);
      cpu.close();
    }

    /**
     * CPU seconds of each process of the servers that are not this JVM's children (PostgreSQL's,
     * which pg_ctl detaches, and versitygw), by pid: its command name and CPU so far.
     */
    private static Map<Long, Map.Entry<String, Double>> serverCpu() {
      Map<Long, Map.Entry<String, Double>> out = new TreeMap<>();
      ProcessHandle.allProcesses()
          .forEach(
              p -> {
                String command = p.info().command().orElse("");
                String name = command.substring(command.lastIndexOf('/') + 1);
                if (name.equals("postgres") || name.startsWith("versitygw")) {
                  p.info()
                      .totalCpuDuration()
                      .ifPresent(d -> out.put(p.pid(), Map.entry(name, d.toNanos() / 1e9)));
                }
              });
      return out;
    }

    private long[] bytes(boolean api) {
      long[] out = new long[readers.size()];
      for (int i = 0; i < out.length; i++) {
        Reader r = readers.get(i);
        out[i] =
            api
                ? r.proxy().bytesFromTarget()
                : r.store() == null ? 0 : r.store().proxy().bytesFromTarget();
      }
      return out;
    }

    private static void perReader(String what, long[] now, long[] before, double seconds) {
      long[] d = new long[now.length];
      for (int i = 0; i < d.length; i++) {
        d[i] = now[i] - before[i];
      }
      long[] sorted = DeltaBenchmark.sorted(d);
      System.out.printf(
          Locale.ROOT,
          "%s -> each reader: p50 %,d B (%,.0f B/s), max %,d B (%,.0f B/s); all readers %,d B"
              + " (%,.0f B/s)%n",
          what,
          DeltaBenchmark.percentile(sorted, 50),
          DeltaBenchmark.percentile(sorted, 50) / seconds,
          sorted[sorted.length - 1],
          sorted[sorted.length - 1] / seconds,
          Arrays.stream(d).sum(),
          Arrays.stream(d).sum() / seconds);
    }
  }

  private static Predicate<String> containsPredicate(LiveBloomFilter<?> live, boolean longKeys) {
    if (longKeys) {
      @SuppressWarnings("unchecked")
      LiveBloomFilter<Long> l = (LiveBloomFilter<Long>) live;
      return key -> l.mightContain(Long.parseLong(key));
    }
    @SuppressWarnings("unchecked")
    LiveBloomFilter<String> l = (LiveBloomFilter<String>) live;
    return l::mightContain;
  }

  private static ObjectStore storeClient(S3Server s3, String bucket) {
    return S3ObjectStore.builder()
        .endpoint(URI.create("http://127.0.0.1:" + s3.port()))
        .bucket(bucket)
        .region(S3Server.REGION)
        .credentials(
            StaticCredentialsProvider.create(
                AwsBasicCredentials.create(s3.accessKey(), s3.secretKey())))
        .build();
  }

  /**
   * The published version; a status written without one (a race with a status write) is retried.
   */
  private static long version(KubernetesClient admin) throws InterruptedException {
    for (int i = 0; ; i++) {
      var status = filter(admin).getStatus();
      if (status != null && status.getVersion() != null) {
        return status.getVersion();
      }
      if (i == 50) {
        throw new IllegalStateException("no version in the status");
      }
      Thread.sleep(100);
    }
  }

  private static BloomFilter filter(KubernetesClient admin) {
    return admin.resources(BloomFilter.class).inNamespace(NS).withName(FILTER).get();
  }

  private static void awaitFirstVersion(KubernetesClient admin, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      BloomFilter f = filter(admin);
      if (f.getStatus() != null
          && f.getStatus().getVersion() != null
          && f.getStatus().getVersion() > 0) {
        return;
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("no version published in " + timeout);
  }

  private static String describe(BloomFilter f) {
    var s = f.getStatus();
    return String.format(
        Locale.ROOT,
        "v%d, %s keys, %s B, %s chunks, %s, build %s ms",
        s.getVersion(),
        s.getKeys(),
        s.getSizeBytes(),
        s.getChunks(),
        s.getDeltas() != null && s.getDeltas() > 0
            ? "a delta on v" + s.getBaseVersion() + " (" + s.getDeltas() + " in chain)"
            : "whole",
        s.getLastBuildDurationMillis());
  }

  private static long usedHeapAfterGc() {
    System.gc();
    return java.lang.management.ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Where the keys come from: a Kafka topic, or rows of a PostgreSQL table. */
  private interface Source {
    /** Creates what the filter reads (and what it needs in its namespace). */
    void prepare(KubernetesClient admin) throws Exception;

    /** The filter's {@code source} and {@code changes}, as YAML under {@code spec}. */
    String spec(String publishEvery);

    /** A key of the first version. */
    String seed();

    /** Whether keys are Longs (keyType Long) rather than text. */
    default boolean longKeys() {
      return false;
    }

    /** The key produced as number {@code index}. */
    default String key(long index) {
      return "key-" + index;
    }

    /**
     * Produces keys {@code first} … {@code first + count - 1}, acknowledged (Kafka) or committed
     * (PostgreSQL) on return.
     */
    void produce(long first, int count) throws Exception;
  }

  private static final class KafkaSource implements Source {
    private final KafkaServer kafka = KafkaServer.shared();
    private final String topic = "fresh-ids";

    @Override
    public void prepare(KubernetesClient admin) {
      kafka.createTopic(topic, 3, Map.of());
    }

    @Override
    public String spec(String publishEvery) {
      return """
          source: {inline: [seed]}
          changes:
            publishEvery: %s
            kafka: {bootstrapServers: ["%s"], topic: %s}
          """
          .formatted(publishEvery, kafka.bootstrap(), topic);
    }

    @Override
    public String seed() {
      return "seed";
    }

    @Override
    public void produce(long first, int count) {
      for (long i = first; i < first + count; i++) {
        kafka.produce(topic, (int) (i % 3), null, key(i));
      }
    }
  }

  private static final class PostgresSource implements Source {
    private final PostgresServer pg = LogicalPostgres.shared();
    private PreparedStatement insert;

    @Override
    public void prepare(KubernetesClient admin) throws Exception {
      pg.execute(
          "CREATE TABLE fresh_ids (id text PRIMARY KEY)",
          "INSERT INTO fresh_ids VALUES ('seed')",
          "GRANT SELECT ON fresh_ids TO " + LogicalPostgres.ROLE);
      pg.executeAsSuperuser("CREATE PUBLICATION fresh_ids FOR TABLE fresh_ids (id)");
      LogicalPostgres.replicationSecret(admin, NS, "pg-repl");
      insert = pg.connect().prepareStatement("INSERT INTO fresh_ids VALUES (?)");
    }

    @Override
    public String spec(String publishEvery) {
      return """
          source:
            jdbc: {url: "%s", query: select id from fresh_ids, credentialsSecret: pg-repl}
          changes:
            publishEvery: %s
            postgresLogical: {publication: fresh_ids, slot: fresh_ids, keyColumn: id}
          """
          .formatted(pg.url(), publishEvery);
    }

    @Override
    public String seed() {
      return "seed";
    }

    @Override
    public void produce(long first, int count) throws Exception {
      for (long i = first; i < first + count; i++) {
        insert.setString(1, key(i));
        insert.executeUpdate();
      }
    }
  }

  /** Scan counters of a table ({@code pg_stat_user_tables}). */
  private record TableScans(
      long seqScans, long seqRowsRead, long indexScans, long indexRowsFetched, long inserted) {
    TableScans minus(TableScans before) {
      return new TableScans(
          seqScans - before.seqScans,
          seqRowsRead - before.seqRowsRead,
          indexScans - before.indexScans,
          indexRowsFetched - before.indexRowsFetched,
          inserted - before.inserted);
    }

    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "seq_scan %d, seq_tup_read %,d, idx_scan %d, idx_tup_fetch %,d, n_tup_ins %,d",
          seqScans,
          seqRowsRead,
          indexScans,
          indexRowsFetched,
          inserted);
    }
  }

  /**
   * A table {@code big_ids} of {@code rows} bigint ids 1..rows (primary key, so the replica
   * identity), filled once; the stream inserts ids above them, one statement per batch.
   */
  private static final class BulkTableSource implements Source {
    private final String table = "big_ids";
    private final long rows;
    private final PostgresServer pg;
    private Connection writer;
    private PreparedStatement insert;

    BulkTableSource(long rows, Path pgdata) {
      this.rows = rows;
      this.pg =
          pgdata == null
              ? LogicalPostgres.shared()
              : LogicalPostgres.startPersistent(
                  pgdata, "max_wal_size=8GB", "checkpoint_timeout=30min");
    }

    @Override
    public void prepare(KubernetesClient admin) throws Exception {
      writer = pg.connect();
      writer.setAutoCommit(true);
      boolean filled = false;
      try (Statement s = writer.createStatement();
          ResultSet r = s.executeQuery("SELECT n FROM bench_filled WHERE t = '" + table + "'")) {
        filled = r.next() && r.getLong(1) == rows;
      } catch (java.sql.SQLException e) {
        // No marker table yet: never filled.
      }
      if (!filled) {
        long t = System.nanoTime();
        pg.execute(
            "DROP TABLE IF EXISTS " + table,
            "CREATE TABLE IF NOT EXISTS bench_filled (t text PRIMARY KEY, n bigint)",
            "DELETE FROM bench_filled WHERE t = '" + table + "'",
            "CREATE UNLOGGED TABLE " + table + " (id bigint NOT NULL)",
            "INSERT INTO " + table + " SELECT generate_series(1, " + rows + ")",
            "SET maintenance_work_mem = '1GB'",
            "ALTER TABLE " + table + " ADD PRIMARY KEY (id)",
            "ALTER TABLE " + table + " SET LOGGED",
            "VACUUM ANALYZE " + table,
            "INSERT INTO bench_filled VALUES ('" + table + "', " + rows + ")");
        System.out.printf(
            Locale.ROOT,
            "filled %s with %,d rows in %.1f s%n",
            table,
            rows,
            (System.nanoTime() - t) / 1e9);
      } else {
        System.out.printf(Locale.ROOT, "%s: %,d rows from an earlier run%n", table, rows);
      }
      // Rows and slots an earlier run's stream left behind.
      pg.execute("DELETE FROM " + table + " WHERE id > " + rows);
      pg.executeAsSuperuser(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots"
              + " WHERE slot_name = '"
              + table
              + "' AND NOT active",
          "DROP PUBLICATION IF EXISTS " + table,
          "CREATE PUBLICATION " + table + " FOR TABLE " + table + " (id)",
          "GRANT SELECT ON " + table + " TO " + LogicalPostgres.ROLE);
      LogicalPostgres.replicationSecret(admin, NS, "pg-repl", pg);
      insert = writer.prepareStatement("INSERT INTO " + table + " SELECT generate_series(?, ?)");
      try (Statement s = writer.createStatement();
          ResultSet r =
              s.executeQuery("SELECT pg_size_pretty(pg_total_relation_size('" + table + "'))")) {
        r.next();
        System.out.printf("table %s: %s with its index%n", table, r.getString(1));
      }
    }

    @Override
    public String spec(String publishEvery) {
      return """
          keyType: Long
          refreshInterval: 24h
          source:
            jdbc: {url: "%s", query: select id from %s, credentialsSecret: pg-repl}
          changes:
            publishEvery: %s
            postgresLogical: {publication: %s, slot: %s, keyColumn: id}
          """
          .formatted(pg.url(), table, publishEvery, table, table);
    }

    @Override
    public String seed() {
      return "1";
    }

    @Override
    public boolean longKeys() {
      return true;
    }

    @Override
    public String key(long index) {
      return Long.toString(rows + 1 + index);
    }

    @Override
    public void produce(long first, int count) throws Exception {
      insert.setLong(1, rows + 1 + first);
      insert.setLong(2, rows + first + count);
      insert.executeUpdate();
    }

    TableScans scans() throws Exception {
      try (Statement s = writer.createStatement()) {
        s.execute("SELECT pg_stat_clear_snapshot()");
        try (ResultSet r =
            s.executeQuery(
                "SELECT seq_scan, seq_tup_read, coalesce(idx_scan, 0),"
                    + " coalesce(idx_tup_fetch, 0), n_tup_ins FROM pg_stat_user_tables"
                    + " WHERE relname = '"
                    + table
                    + "'")) {
          r.next();
          return new TableScans(
              r.getLong(1), r.getLong(2), r.getLong(3), r.getLong(4), r.getLong(5));
        }
      }
    }
  }
}
