package io.bloomoperator.bench;

import com.sun.net.httpserver.HttpServer;
import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.settings.BuildLimits;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.snapshot.SnapshotNames;
import io.bloomoperator.source.EgressPolicy;
import io.bloomoperator.source.GeneratedLines;
import io.bloomoperator.source.HttpSourceSettings;
import io.bloomoperator.status.ReadyCondition;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TcpProxy;
import io.bloomoperator.testing.operator.TestStores;
import io.bloomoperator.testing.servers.S3Server;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * End-to-end scale run: an HTTP export of N keys (generated while it is served, never held) → the
 * operator in this JVM → a published snapshot on the real kube-apiserver + etcd. Prints build
 * keys/s, publish MB/s, end-to-end time, the peak heap (which the run's -Xmx caps) and the bytes of
 * the filter's ConfigMaps in etcd.
 *
 * <p>Second argument {@code store}: the chunks go to a BloomStore on a local versitygw (issue 19),
 * with the operator's default settings (only loopback allowed); otherwise to ConfigMaps, with the
 * snapshot limits raised as an administrator would for a filter of this size.
 *
 * <p>Options {@code readers=N} and {@code churn=f1,f2,…} (issue 19): after Ready, N readers start
 * one after another, each a {@link LiveBloomFilter} with its own API client behind its own counting
 * {@link TcpProxy} (and, in a store, its own {@code S3ObjectStore} behind another), all in this
 * JVM; then for each fraction f the export drops its lowest f·n keys and adds f·n new ones, the
 * operator (refreshInterval 10s) rebuilds and publishes, and the run prints the readers' swap times
 * from the operator's manifest PUT, the bytes the API server and the store sent each reader, and
 * the heap peak.
 *
 * <pre>
 * mvn -q -pl operator test-compile exec:exec -Dexec.executable=java -Dexec.classpathScope=test \
 *   "-Dexec.args=-Xmx640m -XX:+UseSerialGC -Dbloom.repoRoot=$PWD -cp %classpath io.bloomoperator.bench.ScaleBenchmark 100000000"
 *   (store: -Xmx768m, what the installs' 1 GiB limit gives, and arguments "100000000 store")
 * </pre>
 */
public final class ScaleBenchmark {

  private ScaleBenchmark() {}

  /** Bytes of {@code product-0\n} … {@code product-(m-1)\n}: an upper bound for any shift. */
  static long exportBytes(long m) {
    long bytes = m * ("product-".length() + 1 + 1); // prefix, newline, the first digit
    for (long low = 10; low < m; low *= 10) {
      bytes += m - low; // one more digit for every number >= low
    }
    return bytes;
  }

  public static void main(String[] args) throws Exception {
    long n = args.length > 0 ? Long.parseLong(args[0]) : 100_000_000L;
    boolean inStore = false;
    int readerCount = 0;
    List<Double> churns = new ArrayList<>();
    String format = null;
    String readTime = null;
    for (int i = 1; i < args.length; i++) {
      if ("store".equals(args[i])) {
        inStore = true;
      } else if (args[i].startsWith("format=")) {
        format = args[i].substring("format=".length());
      } else if (args[i].startsWith("readTime=")) {
        // BLOOM_HTTP_MAX_READ_TIME: 1B keys take longer than its 10 min default on 2 cores.
        readTime = args[i].substring("readTime=".length());
      } else if (args[i].startsWith("readers=")) {
        readerCount = Integer.parseInt(args[i].substring("readers=".length()));
      } else if (args[i].startsWith("churn=")) {
        for (String f : args[i].substring("churn=".length()).split(",")) {
          churns.add(Double.parseDouble(f));
        }
      } else {
        throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    double fpp = 0.01;
    AtomicLong first = new AtomicLong();
    HttpServer export = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    export.createContext(
        "/ids.txt",
        exchange -> {
          long from = first.get();
          exchange.getResponseHeaders().set("ETag", "\"export-" + n + "-" + from + "\"");
          if ("HEAD".equals(exchange.getRequestMethod())) {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
            return;
          }
          exchange.sendResponseHeaders(200, 0);
          // Generated as cheaply as a file is sent, so the export is not what bounds the build.
          try (OutputStream out = exchange.getResponseBody()) {
            new GeneratedLines("product-", from, n).transferTo(out);
          }
        });
    export.start();

    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(RealKubernetesExtension.repoRoot().resolve("crds"));
    KubernetesClient client = cluster.newClient();
    client
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName("scale").endMetadata().build())
        .create();
    // The export listens on loopback, which http sources may reach only when allowed; the http
    // limits stay at their defaults, which this export must fit. A 120 MB filter is above the
    // default per-filter and per-namespace snapshot limits (64 / 256 MiB): raised here, as an
    // administrator would for such a filter.
    // In a store, neither limit binds: the defaults.
    // The one default a store run raises: 1B keys of "product-<id>\n" are 17.9 GB of text, over
    // the http source's 8 GiB body limit (BLOOM_HTTP_MAX_BODY_BYTES).
    java.util.Map<String, String> env = new java.util.HashMap<>();
    long body = exportBytes(n + Math.round(churns.stream().mapToDouble(d -> d).sum() * n));
    if (body > HttpSourceSettings.DEFAULT_MAX_BODY_BYTES) {
      env.put("BLOOM_HTTP_MAX_BODY_BYTES", Long.toString(2 * body));
      System.out.printf(
          Locale.ROOT,
          "export of %,d B: BLOOM_HTTP_MAX_BODY_BYTES raised to %,d%n",
          body,
          2 * body);
    }
    if (!inStore) {
      env.put("BLOOM_MAX_SNAPSHOT_BYTES", Long.toString(256L << 20));
      env.put("BLOOM_MAX_NAMESPACE_BYTES", Long.toString(512L << 20));
    }
    // -Dbloom.publishWriters=1: chunks one after the other, as before the pool.
    env.put(
        "BLOOM_PUBLISH_WRITERS",
        System.getProperty(
            "bloom.publishWriters", Integer.toString(BuildLimits.DEFAULT_PUBLISH_WRITERS)));
    if (readTime != null) {
      env.put("BLOOM_HTTP_MAX_READ_TIME", readTime);
    }
    OperatorSettings settings = OperatorSettings.fromEnvironment(env);
    settings =
        settings.toBuilder()
            .http(settings.sources().http().withEgress(EgressPolicy.of("127.0.0.1", null)))
            .build();
    // Refreshes are timed from the operator's manifest PUT: the operator gets its own client,
    // through a counting proxy, that records when the PUT is sent.
    AtomicLong putStart = new AtomicLong();
    TcpProxy operatorProxy = churns.isEmpty() ? null : DeltaBenchmark.proxy(cluster);
    KubernetesClient operatorClient =
        operatorProxy == null
            ? client
            : DeltaBenchmark.client(
                cluster,
                operatorProxy,
                DeltaBenchmark.manifestPutTimer(
                    "/namespaces/scale/configmaps/" + SnapshotNames.manifestName("products"),
                    putStart));
    S3Server s3 = inStore ? S3Server.start() : null;
    String bucket = null;
    Operator operator;
    if (inStore) {
      bucket = s3.createBucket("scale");
      TestStores.writerCredentials(client, "bloom-system", s3);
      TestStores.store("scale-store").on(s3, bucket).allowing("scale").create(client);
      operator =
          OperatorMain.start(
              operatorClient,
              settings,
              StoreSettings.fromEnvironment(java.util.Map.of()).inNamespace("bloom-system"));
    } else {
      operator = OperatorMain.start(operatorClient, settings);
    }

    HeapPeak.reset();
    CpuTimeline cpu = CpuTimeline.start(java.time.Duration.ofMillis(250));
    long start = System.nanoTime();
    client
        .resources(BloomFilter.class)
        .inNamespace("scale")
        .resource(
            Serialization.unmarshal(
                """
        apiVersion: bloomoperator.io/v1alpha1
        kind: BloomFilter
        metadata: {name: products}
        spec:
          falsePositiveRate: %s
          expectedInsertions: %d
          source:
            http: {url: "http://127.0.0.1:%d/ids.txt"}
          %s
          %s
          %s
        """
                    .formatted(
                        fpp,
                        n,
                        export.getAddress().getPort(),
                        inStore ? "snapshot: {store: scale-store}" : "",
                        churns.isEmpty() ? "" : "refreshInterval: 10s",
                        format == null ? "" : "format: " + format),
                BloomFilter.class))
        .create();

    BloomFilter filter;
    long lastPrint = 0;
    while (true) {
      filter = client.resources(BloomFilter.class).inNamespace("scale").withName("products").get();
      if (filter.getStatus() == null) {
        Thread.sleep(200);
        continue;
      }
      var ready = ReadyCondition.of(filter);
      if (ready.isPresent() && "True".equals(ready.get().getStatus())) {
        break;
      }
      if (ready.isPresent() && "False".equals(ready.get().getStatus())) {
        throw new IllegalStateException(
            "failed: " + ready.get().getReason() + ": " + ready.get().getMessage());
      }
      if (System.nanoTime() - lastPrint > 5e9) {
        lastPrint = System.nanoTime();
        System.err.printf(
            "  phase=%s keysRead=%s%n",
            filter.getStatus().getPhase(), filter.getStatus().getKeysRead());
      }
      Thread.sleep(200);
    }
    long ready = System.nanoTime();
    double total = (ready - start) / 1e9;
    var status = filter.getStatus();
    double build = status.getLastBuildDurationMillis() / 1e3;
    double mb = status.getSizeBytes() / 1e6;
    System.out.printf(
        Locale.ROOT,
        "keys                 %,d at FPP target %s (expected %s)%n",
        status.getKeys(),
        fpp,
        status.getExpectedFpp());
    System.out.printf(
        Locale.ROOT, "snapshot             %.1f MB in %d chunks%n", mb, status.getChunks());
    System.out.printf(
        Locale.ROOT,
        "build (HTTP source)  %.1f s = %.2f M keys/s%n",
        build,
        status.getKeys() / build / 1e6);
    System.out.printf(
        Locale.ROOT,
        "publish + status     %.1f s = %.1f MB/s%n",
        total - build,
        mb / (total - build));
    System.out.printf(Locale.ROOT, "end to end           %.1f s (apply → Ready)%n", total);
    System.out.printf(
        Locale.ROOT,
        "peak heap            %.0f MB of -Xmx %.0f MB (bit array %.0f MB)%n",
        HeapPeak.bytes() / 1e6,
        Runtime.getRuntime().maxMemory() / 1e6,
        status.getNumBits() / 8e6);
    // The build's window is taken from the apply (the reconcile starts within a poll of it).
    long buildEnd = start + status.getLastBuildDurationMillis() * 1_000_000L;
    cpu.report("build (apply to apply + build duration)", start, buildEnd);
    cpu.report("publish + status (to Ready)", buildEnd, ready);
    cpu.close();

    // What etcd holds of the filter: its ConfigMaps as the API server serves them.
    var configMaps = client.configMaps().inNamespace("scale").list().getItems();
    long etcdBytes =
        configMaps.stream()
            .mapToLong(c -> Serialization.asJson(c).getBytes(StandardCharsets.UTF_8).length)
            .sum();
    System.out.printf(
        Locale.ROOT,
        "in etcd              %d ConfigMap(s), %,d bytes%n",
        configMaps.size(),
        etcdBytes);
    if (inStore) {
      String b = bucket;
      try (var root = s3.client()) {
        var objects = root.listObjectsV2Paginator(r -> r.bucket(b)).contents().stream().toList();
        System.out.printf(
            Locale.ROOT,
            "in the store         %d objects, %,d bytes%n",
            objects.size(),
            objects.stream().mapToLong(o -> o.size()).sum());
      }
    }

    if (readerCount > 0) {
      Fanout fanout =
          new Fanout(cluster, client, operatorProxy, putStart, inStore ? s3 : null, bucket);
      fanout.startReaders(readerCount);
      for (double churn : churns) {
        fanout.refresh(churn, () -> first.addAndGet(Math.round(churn * n)));
      }
      fanout.close();
    }

    operator.stop();
    if (s3 != null) {
      s3.close();
    }
    client.close();
    if (operatorProxy != null) {
      operatorClient.close();
      operatorProxy.close();
    }
    export.stop(0);
    cluster.close();
    System.exit(0);
  }
}
