package io.bloomoperator.bench;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.ReaderStatus;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.operator.ReaderPods;
import io.bloomoperator.watch.SimulatedReader;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;

/**
 * What reader acknowledgements (docs/reader-protocol.md) cost the API server with many readers, and
 * how soon status.readers shows a publish served by all of them: one BloomFilter, {@code readers}
 * Pod objects (no kubelet: Pending, but live, with their own names and UIDs), and for each pod
 * sidecar-lib's own ReaderReporter ({@link SimulatedReader}: its thread, its heartbeat jitter, its
 * writes; no filter loaded). The operator runs in this JVM with its default reader settings.
 *
 * <p>Writes are what the API server counted itself ({@code apiserver_request_total} on its
 * /metrics), not what a client thinks it sent.
 *
 * <pre>
 * java ... io.bloomoperator.bench.ReaderAckBenchmark [readers=1000] [heartbeat-s=10]
 *     [window-s=60] [publishes=3]
 * </pre>
 */
public final class ReaderAckBenchmark {

  private static final String NS = "acks";
  private static final String FILTER = "ids";

  /** Readers share this many API clients (one each would be 1,000 HTTP clients in one JVM). */
  private static final int CLIENTS = 16;

  private ReaderAckBenchmark() {}

  public static void main(String[] args) throws Exception {
    int readers = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
    Duration heartbeat = Duration.ofSeconds(args.length > 1 ? Long.parseLong(args[1]) : 10);
    int window = args.length > 2 ? Integer.parseInt(args[2]) : 60;
    int publishes = args.length > 3 ? Integer.parseInt(args[3]) : 3;

    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(RealKubernetesExtension.repoRoot().resolve("crds"));
    KubernetesClient admin = cluster.newClient();
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();
    ReaderSettings readerSettings = ReaderSettings.defaults();
    KubernetesClient operatorClient = cluster.newClient();
    Operator operator =
        OperatorMain.start(
            operatorClient,
            OperatorSettings.fromEnvironment(Map.of()),
            StoreSettings.fromEnvironment(Map.of()),
            null,
            new RuntimeOptions(0, false, null, "embedded", false),
            readerSettings);
    CpuTimeline cpu = CpuTimeline.start(Duration.ofMillis(500));
    List<KubernetesClient> clients = new ArrayList<>();
    List<SimulatedReader> simulated = new ArrayList<>();
    try {
      admin
          .resources(BloomFilter.class)
          .inNamespace(NS)
          .resource(
              Serialization.unmarshal(
                  """
                  apiVersion: bloomoperator.io/v1alpha1
                  kind: BloomFilter
                  metadata: {name: %s}
                  spec:
                    falsePositiveRate: 0.01
                    source: {inline: [a, b]}
                  """
                      .formatted(FILTER),
                  BloomFilter.class))
          .create();
      long v1 =
          await(admin, f -> f.getStatus() != null && f.getStatus().getVersion() != null)
              .getStatus()
              .getVersion();

      long t = System.nanoTime();
      List<Pod> pods = createPods(admin, readers);
      System.out.printf(
          Locale.ROOT, "pods                 %d created in %.1f s%n", readers, secondsSince(t));

      for (int i = 0; i < CLIENTS; i++) {
        clients.add(cluster.newClient());
      }
      t = System.nanoTime();
      for (int i = 0; i < readers; i++) {
        Pod pod = pods.get(i);
        SimulatedReader reader =
            SimulatedReader.start(
                clients.get(i % CLIENTS),
                NS,
                FILTER,
                pod.getMetadata().getName(),
                pod.getMetadata().getUid(),
                heartbeat);
        reader.swapTo(v1); // its first load
        simulated.add(reader);
      }
      ReaderStatus first =
          awaitReaders(admin, r -> r.getVersion() == v1 && r.getCurrent() == readers);
      System.out.printf(
          Locale.ROOT,
          "readers              %d started; status.readers %s after %.1f s (status interval %d s)%n",
          readers,
          first.getServing(),
          secondsSince(t),
          readerSettings.statusInterval().toSeconds());

      // Heartbeats only, after two heartbeats of warm-up so the jitter has spread the writes of
      // readers started together.
      Thread.sleep(heartbeat.multipliedBy(2).toMillis());
      System.gc();
      Map<String, Double> before = ApiRequests.scrape(admin);
      long from = System.nanoTime();
      Thread.sleep(window * 1000L);
      long to = System.nanoTime();
      Map<String, Double> after = ApiRequests.scrape(admin);
      double seconds = (to - from) / 1e9;
      double leaseWrites = ApiRequests.writes(before, after, "leases", "");
      double filterWrites = ApiRequests.writes(before, after, "bloomfilters", null);
      double podGets = ApiRequests.count(before, after, "pods", "GET");
      double perSecond = leaseWrites / seconds;
      System.out.printf(
          Locale.ROOT,
          "%n== steady state, heartbeats only: %d readers, heartbeat %d s, %.0f s window ==%n",
          readers,
          heartbeat.toSeconds(),
          seconds);
      System.out.printf(
          Locale.ROOT,
          "Lease writes         %.0f = %.1f /s (%.2f per reader and heartbeat); at 60 s: %.1f /s%n",
          leaseWrites,
          perSecond,
          perSecond * heartbeat.toSeconds() / readers,
          perSecond * heartbeat.toSeconds() / 60.0);
      System.out.printf(
          Locale.ROOT,
          "BloomFilter writes   %.0f in %.0f s (status and all else, any client)%n",
          filterWrites,
          seconds);
      System.out.printf(
          Locale.ROOT,
          "Pod GETs             %.0f in %.0f s (the operator's pod checks)%n",
          podGets,
          seconds);
      cpu.report("steady state (operator + simulated readers, one JVM)", from, to);
      System.gc();
      Runtime rt = Runtime.getRuntime();
      System.out.printf(
          Locale.ROOT,
          "heap                 %.0f MB after GC (operator, %d simulated readers, %d clients)%n",
          (rt.totalMemory() - rt.freeMemory()) / 1e6,
          readers,
          CLIENTS);

      // Publishes: the simulated readers swap when they see the new status.version (a real reader
      // swaps when it has loaded the manifest's chunks, a few ms later for this small filter).
      long version = v1;
      for (int p = 0; p < publishes; p++) {
        long previous = version;
        Map<String, Double> pBefore = ApiRequests.scrape(admin);
        long changed = System.nanoTime();
        admin
            .resources(BloomFilter.class)
            .inNamespace(NS)
            .withName(FILTER)
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"source\":{\"inline\":[\"a\",\"b\",\"p%d\"]}}}".formatted(p));
        version = await(admin, f -> f.getStatus().getVersion() > previous).getStatus().getVersion();
        long published = System.nanoTime();
        long next = version;
        simulated.forEach(r -> r.swapTo(next));
        ReaderStatus done =
            awaitReaders(admin, r -> r.getVersion() == next && r.getCurrent() == readers);
        long served = System.nanoTime();
        Map<String, Double> pAfter = ApiRequests.scrape(admin);
        System.out.printf(
            Locale.ROOT,
            "%n== publish %d: v%d ==%n"
                + "source change → status.version %.2f s; status.version → status.readers %s %.2f"
                + " s%n"
                + "API server writes from change to %s: Lease %.0f, BloomFilter %.0f%n",
            p + 1,
            version,
            (published - changed) / 1e9,
            done.getServing(),
            (served - published) / 1e9,
            done.getServing(),
            ApiRequests.writes(pBefore, pAfter, "leases", ""),
            ApiRequests.writes(pBefore, pAfter, "bloomfilters", null));
      }
    } finally {
      simulated.forEach(SimulatedReader::close);
      cpu.close();
      operator.stop();
      clients.forEach(KubernetesClient::close);
      admin.namespaces().withName(NS).delete();
      operatorClient.close();
      admin.close();
    }
    System.exit(0);
  }

  private static List<Pod> createPods(KubernetesClient admin, int count) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Pod>> futures = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String name = "app-" + i;
        futures.add(pool.submit(() -> ReaderPods.pod(admin, NS, name)));
      }
      List<Pod> pods = new ArrayList<>();
      for (Future<Pod> f : futures) {
        pods.add(f.get());
      }
      return pods;
    } finally {
      pool.shutdown();
    }
  }

  private static BloomFilter await(KubernetesClient admin, Predicate<BloomFilter> condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (System.nanoTime() < deadline) {
      BloomFilter f = admin.resources(BloomFilter.class).inNamespace(NS).withName(FILTER).get();
      if (f != null && f.getStatus() != null && condition.test(f)) {
        return f;
      }
      Thread.sleep(50);
    }
    throw new IllegalStateException("timed out waiting for " + FILTER);
  }

  private static ReaderStatus awaitReaders(KubernetesClient admin, Predicate<ReaderStatus> done)
      throws InterruptedException {
    return await(
            admin, f -> f.getStatus().getReaders() != null && done.test(f.getStatus().getReaders()))
        .getStatus()
        .getReaders();
  }

  private static double secondsSince(long nanos) {
    return (System.nanoTime() - nanos) / 1e9;
  }

  /** The API server's own count of the requests it served: {@code apiserver_request_total}. */
  static final class ApiRequests {

    private ApiRequests() {}

    /** Every series of apiserver_request_total, by its label set. */
    static Map<String, Double> scrape(KubernetesClient admin) {
      String url = admin.getMasterUrl().toString().replaceAll("/+$", "") + "/metrics";
      Map<String, Double> out = new java.util.HashMap<>();
      for (String line : admin.raw(url).split("\n")) {
        if (line.startsWith("apiserver_request_total{")) {
          int space = line.lastIndexOf(' ');
          out.put(line.substring(0, space), Double.parseDouble(line.substring(space + 1)));
        }
      }
      return out;
    }

    /**
     * Writes (POST, PUT, PATCH, DELETE) on {@code resource}, its {@code subresource} only ("" the
     * object itself) or any (null).
     */
    static double writes(
        Map<String, Double> before, Map<String, Double> after, String resource, String sub) {
      double sum = 0;
      for (String verb : List.of("POST", "PUT", "PATCH", "DELETE")) {
        sum += count(before, after, resource, verb, sub);
      }
      return sum;
    }

    static double count(
        Map<String, Double> before, Map<String, Double> after, String resource, String verb) {
      return count(before, after, resource, verb, null);
    }

    private static double count(
        Map<String, Double> before,
        Map<String, Double> after,
        String resource,
        String verb,
        String sub) {
      double sum = 0;
      for (var e : after.entrySet()) {
        String labels = e.getKey();
        if (labels.contains("resource=\"" + resource + "\"")
            && labels.contains("verb=\"" + verb + "\"")
            && (sub == null || labels.contains("subresource=\"" + sub + "\""))) {
          sum += e.getValue() - before.getOrDefault(labels, 0.0);
        }
      }
      return sum;
    }
  }
}
