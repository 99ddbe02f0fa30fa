package io.bloomoperator.bench;

import io.bloomoperator.OperatorMain;
import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.objectstore.StoreSettings;
import io.bloomoperator.readers.ReaderSettings;
import io.bloomoperator.runtime.RuntimeOptions;
import io.bloomoperator.settings.OperatorSettings;
import io.bloomoperator.testing.KubeCluster;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.ServedLatencies;
import io.bloomoperator.testing.servers.KafkaServer;
import io.bloomoperator.testing.servers.LogicalPostgres;
import io.bloomoperator.testing.servers.PostgresServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Freshness of a change stream (issue 29): the time from a key's produce (acknowledged by the
 * broker) to the moment every one of {@code readers} sidecar-lib readers answers "maybe present"
 * for it. One BloomFilter sized for {@code expected} keys with {@code spec.changes.kafka} and
 * {@code publishEvery}, ConfigMap transport; the operator in this JVM, a real API server and a real
 * Kafka broker (each in its own process); readers share {@link #CLIENTS} API clients. Keys are
 * produced one by one at {@code rate} per second for {@code seconds}; a checker looks at every
 * reader every 10 ms, so figures are at most that much late.
 *
 * <p>With {@code source=postgres} the keys are rows inserted (one committed transaction each) into
 * a table of a real PostgreSQL 15 started with {@code wal_level = logical}, streamed with {@code
 * spec.changes.postgresLogical}: "produce" is then the insert's commit.
 *
 * <pre>
 * java ... io.bloomoperator.bench.StreamFreshnessBenchmark [readers=50] [rate=10] [seconds=60]
 *     [expected=1000000] [publishEvery=1s] [source=kafka|postgres]
 * </pre>
 */
public final class StreamFreshnessBenchmark {

  private static final String NS = "fresh";
  private static final String FILTER = "ids";
  private static final int CLIENTS = 8;

  private StreamFreshnessBenchmark() {}

  public static void main(String[] args) throws Exception {
    int readers = args.length > 0 ? Integer.parseInt(args[0]) : 50;
    int rate = args.length > 1 ? Integer.parseInt(args[1]) : 10;
    int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 60;
    long expected = args.length > 3 ? Long.parseLong(args[3]) : 1_000_000;
    String publishEvery = args.length > 4 ? args[4] : "1s";
    boolean postgres = args.length > 5 && args[5].equals("postgres");

    Source source = postgres ? new PostgresSource() : new KafkaSource();
    KubeCluster cluster = KubeCluster.shared();
    cluster.installCrds(RealKubernetesExtension.repoRoot().resolve("crds"));
    KubernetesClient admin = cluster.newClient();
    admin
        .namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .create();
    Operator operator =
        OperatorMain.start(
            cluster.newClient(),
            OperatorSettings.fromEnvironment(
                Map.of("BLOOM_HTTP_ALLOW", "127.0.0.1/32", "BLOOM_MIN_PUBLISH_INTERVAL", "0s")),
            StoreSettings.fromEnvironment(Map.of()),
            null,
            new RuntimeOptions(0, false, null, "embedded", false),
            ReaderSettings.defaults());
    source.prepare(admin);
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
                %s
                """
                    .formatted(FILTER, NS, expected, source.spec(publishEvery).indent(2)),
                BloomFilter.class))
        .create();
    List<KubernetesClient> clients = new ArrayList<>();
    for (int i = 0; i < CLIENTS; i++) {
      clients.add(cluster.newClient());
    }
    List<LiveBloomFilter<String>> live = new ArrayList<>();
    for (int i = 0; i < readers; i++) {
      live.add(BloomFilterWatcher.watch(clients.get(i % CLIENTS), NS, FILTER, LiveKeyType.STRING));
    }
    long deadline = System.nanoTime() + Duration.ofMinutes(3).toNanos();
    while (!live.stream().allMatch(r -> r.mightContain("seed"))) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("the readers did not load the first version");
      }
      Thread.sleep(50);
    }
    // Wait for the stream to be running: one key through it first (not measured).
    source.produce(0, "warm-up");
    while (!live.stream().allMatch(r -> r.mightContain("warm-up"))) {
      Thread.sleep(20);
    }
    System.out.printf(
        Locale.ROOT,
        "%d readers, %d keys/s for %d s, filter of %,d expected keys (%s), publishEvery %s, %s%n",
        readers,
        rate,
        seconds,
        expected,
        "ConfigMaps",
        publishEvery,
        postgres ? "postgresLogical" : "kafka");

    ServedLatencies served =
        new ServedLatencies(key -> live.stream().allMatch(r -> r.mightContain(key)));
    long periodNanos = 1_000_000_000L / rate;
    long start = System.nanoTime();
    int produced = 0;
    while (System.nanoTime() - start < Duration.ofSeconds(seconds).toNanos()) {
      String key = "key-" + produced;
      source.produce(produced, key);
      served.produced(key);
      produced++;
      long next = start + produced * periodNanos;
      long sleep = next - System.nanoTime();
      if (sleep > 0) {
        Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
      }
    }
    long drain = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (served.pending() > 0 && System.nanoTime() < drain) {
      Thread.sleep(50);
    }
    served.close();
    System.out.printf(
        Locale.ROOT,
        "produced %d keys, served by all %d readers: %d, never: %d%n",
        produced,
        readers,
        served.sorted().size(),
        served.pending());
    System.out.printf(
        Locale.ROOT, "produce (acked) -> served by all readers: %s%n", served.summary());
    BloomFilter after = admin.resources(BloomFilter.class).inNamespace(NS).withName(FILTER).get();
    System.out.printf(
        Locale.ROOT,
        "versions published: %d; status.stream: %s%n",
        after.getStatus().getVersion(),
        Serialization.asJson(after.getStatus().getStream()));
    live.forEach(LiveBloomFilter::close);
    operator.stop();
    System.exit(0);
  }

  /** Where the keys come from: a Kafka topic, or rows of a PostgreSQL table. */
  private interface Source {
    /** Creates what the filter reads (and what it needs in its namespace). */
    void prepare(KubernetesClient admin) throws Exception;

    /** The filter's {@code source} and {@code changes}, as YAML under {@code spec}. */
    String spec(String publishEvery);

    /** Produces {@code key}, acknowledged (Kafka) or committed (PostgreSQL) on return. */
    void produce(int index, String key) throws Exception;
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
    public void produce(int index, String key) {
      kafka.produce(topic, index % 3, null, key);
    }
  }

  private static final class PostgresSource implements Source {
    private final PostgresServer pg = LogicalPostgres.shared();
    private java.sql.Connection writer;
    private java.sql.PreparedStatement insert;

    @Override
    public void prepare(KubernetesClient admin) throws Exception {
      pg.execute(
          "CREATE TABLE fresh_ids (id text PRIMARY KEY)",
          "INSERT INTO fresh_ids VALUES ('seed')",
          "GRANT SELECT ON fresh_ids TO " + LogicalPostgres.ROLE);
      pg.executeAsSuperuser("CREATE PUBLICATION fresh_ids FOR TABLE fresh_ids (id)");
      LogicalPostgres.replicationSecret(admin, NS, "pg-repl");
      writer = pg.connect();
      insert = writer.prepareStatement("INSERT INTO fresh_ids VALUES (?)");
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
    public void produce(int index, String key) throws Exception {
      insert.setString(1, key);
      insert.executeUpdate();
    }
  }
}
