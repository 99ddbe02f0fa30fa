package io.bloomoperator.examples.cacheguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.bloomoperator.testing.RealKubernetes;
import io.bloomoperator.testing.RealKubernetesExtension;
import io.bloomoperator.testing.TestNamespace;
import io.bloomoperator.testing.operator.InProcessOperator;
import io.bloomoperator.testing.servers.PostgresServer;
import io.bloomoperator.testing.servers.RedisServer;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.FalsePositiveObservation;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import redis.clients.jedis.RedisClient;

/**
 * cache-guard end to end: a real API server with the operator in-process publishing the filter, a
 * real Redis and a real PostgreSQL, the service on a free port, and HTTP requests from outside.
 *
 * <p>The database side is not taken from the service's own counters alone: PostgreSQL's statistics
 * ({@code pg_stat_user_tables}: index + sequential scans of {@code products}) must account for
 * exactly the queries the test expects, and the expected number of filter false positives comes
 * from the test's own {@link LiveBloomFilter} on the same snapshot.
 */
@RealKubernetes(crdDirs = "crds")
class CacheGuardIntegrationTest {

  private static final int PRODUCTS = 10_000;
  private static final int ABSENT_LOOKUPS = 1_000;
  private static final int PRESENT_LOOKUPS = 50;
  private static final String FILTER = "products";
  private static final String ID_LIST = "products-ids";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Builds and publishes the filter the service watches. */
  @RegisterExtension static final InProcessOperator OPERATOR = InProcessOperator.withDefaults();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private int port;

  @Test
  void keepsAbsentIdsFromTheDatabaseAndPicksUpNewProductsWithoutRestart(
      KubernetesClient client, TestNamespace ns) throws Exception {
    PostgresServer pg = PostgresServer.shared();
    String schema = ns.name().replace('-', '_');
    pg.execute(
        "create schema " + schema,
        "create table "
            + schema
            + ".products (id bigint primary key, name text not null,"
            + " price numeric(10, 2) not null)",
        "insert into "
            + schema
            + ".products select g, 'Product ' || g, (g % 1000) + 0.99"
            + " from generate_series(1, "
            + PRODUCTS
            + ") g",
        "analyze " + schema + ".products");
    RedisServer redisServer = RedisServer.shared();
    try (RedisClient redis = RedisClient.create(URI.create(redisServer.url()))) {
      redis.flushDB();

      // The service starts before the filter exists: not ready until the operator publishes.
      CacheGuardConfig config =
          new CacheGuardConfig(
              ns.name(),
              FILTER,
              URI.create(redisServer.url()),
              pg.url() + "?currentSchema=" + schema,
              PostgresServer.USER,
              PostgresServer.PASSWORD,
              0,
              8,
              Duration.ofMinutes(10),
              Duration.ofSeconds(30));
      CacheGuard guard = CacheGuard.start(config, client);
      boolean guardClosed = false;
      try (LiveBloomFilter<Long> referee =
          BloomFilterWatcher.watch(client, ns.name(), FILTER, LiveKeyType.LONG)) {
        port = guard.port();
        assertThat(get("/healthz").statusCode()).isEqualTo(200);
        assertThat(get("/readyz").statusCode()).isEqualTo(503);

        applyExampleFilter(client, ns.name(), LongStream.rangeClosed(1, PRODUCTS).boxed().toList());
        await().atMost(Duration.ofSeconds(30)).until(() -> get("/readyz").statusCode() == 200);
        long v1 = filterVersion();
        assertThat(v1).isPositive();
        assertThat(stats().path("filter").path("keys").asLong()).isEqualTo(PRODUCTS);
        assertThat(referee.awaitReady(Duration.ofSeconds(30))).isTrue();
        await().atMost(Duration.ofSeconds(10)).until(() -> referee.currentVersion() == v1);
        long pgScansBefore = productScans(pg, schema);

        // 1. Absent IDs: the filter answers; only its false positives reach the database.
        Random random = new Random(20240611L);
        Set<Long> absent = new LinkedHashSet<>();
        while (absent.size() < ABSENT_LOOKUPS) {
          absent.add(PRODUCTS + 1 + (random.nextLong() & Long.MAX_VALUE) % 1_000_000_000_000L);
        }
        List<Long> expectedFalsePositives = absent.stream().filter(referee::mightContain).toList();
        Map<String, Long> absentLayers = new java.util.TreeMap<>();
        for (long id : absent) {
          HttpResponse<String> response = get("/products/" + id);
          assertThat(response.statusCode()).as("GET /products/%d", id).isEqualTo(404);
          absentLayers.merge(
              response.headers().firstValue(ProductHandler.SERVED_BY).orElse("?"), 1L, Long::sum);
        }
        int fp = expectedFalsePositives.size();
        assertThat(fp)
            .as("false positives among %d absent IDs at fpp 0.01", ABSENT_LOOKUPS)
            .isLessThanOrEqualTo(30);
        assertThat(absentLayers).containsEntry("filter", (long) ABSENT_LOOKUPS - fp);
        assertThat(absentLayers.getOrDefault("database", 0L)).isEqualTo(fp);
        assertThat(guard.stats().filterRejections()).isEqualTo(ABSENT_LOOKUPS - fp);
        assertThat(guard.stats().dbQueries()).isEqualTo(fp);
        // The service reported each database "no row" to the filter: its observed false-positive
        // rate over these absent IDs is exactly fp / ABSENT_LOOKUPS (see FalsePositiveObservation).
        FalsePositiveObservation observed = guard.filter().observedFalsePositives();
        assertThat(observed.version()).isEqualTo(v1);
        assertThat(observed.lookups()).isEqualTo(ABSENT_LOOKUPS);
        assertThat(observed.falsePositives()).isEqualTo(fp);
        assertThat(observed.truePositives()).isZero();
        assertThat(observed.rate()).isEqualTo((double) fp / ABSENT_LOOKUPS);
        assertThat(stats().path("filter").path("observedFalsePositiveRate").asDouble())
            .isEqualTo((double) fp / ABSENT_LOOKUPS);

        // A false positive reaches the database once, then its "not found" comes from Redis.
        long falsePositive =
            LongStream.iterate(PRODUCTS + 1, id -> id + 1)
                .filter(id -> referee.mightContain(id) && !absent.contains(id))
                .findFirst()
                .orElseThrow();
        assertThat(servedBy(get("/products/" + falsePositive), 404)).isEqualTo("database");
        assertThat(servedBy(get("/products/" + falsePositive), 404)).isEqualTo("cache");
        assertThat(redis.ttl(RedisProductCache.key(falsePositive))).isBetween(1L, 30L);
        long dbQueriesAfterAbsent = fp + 1;
        assertThat(guard.stats().dbQueries()).isEqualTo(dbQueriesAfterAbsent);

        // 2. Present IDs: the database once, then Redis.
        long redisHitsBeforePresent = redisKeyspaceHits(redis);
        List<Long> present =
            random.longs(1, PRODUCTS + 1).distinct().limit(PRESENT_LOOKUPS).boxed().toList();
        for (long id : present) {
          HttpResponse<String> first = get("/products/" + id);
          assertThat(servedBy(first, 200)).isEqualTo("database");
          JsonNode product = JSON.readTree(first.body());
          assertThat(product.path("id").asLong()).isEqualTo(id);
          assertThat(product.path("name").asText()).isEqualTo("Product " + id);
          assertThat(product.path("price").decimalValue())
              .isEqualByComparingTo(
                  java.math.BigDecimal.valueOf(id % 1000).add(new java.math.BigDecimal("0.99")));
          HttpResponse<String> second = get("/products/" + id);
          assertThat(servedBy(second, 200)).isEqualTo("cache");
          assertThat(second.body()).isEqualTo(first.body());
        }
        assertThat(guard.stats().dbQueries()).isEqualTo(dbQueriesAfterAbsent + PRESENT_LOOKUPS);
        assertThat(redisKeyspaceHits(redis) - redisHitsBeforePresent)
            .as("Redis' own count of cache hits")
            .isEqualTo(PRESENT_LOOKUPS);
        // (TTL reads count as keyspace hits too, so they come after the count.)
        for (long id : present) {
          assertThat(redis.ttl(RedisProductCache.key(id))).isBetween(1L, 600L);
        }
        assertThat(stats().path("cacheHits").asLong()).isEqualTo(PRESENT_LOOKUPS);

        // 3. A new product: 404 from the filter until the operator publishes a version with it,
        //    then served without restarting the service.
        long newId =
            absent.stream().filter(id -> !referee.mightContain(id)).findFirst().orElseThrow();
        assertThat(servedBy(get("/products/" + newId), 404)).isEqualTo("filter");
        pg.execute("insert into " + schema + ".products values (" + newId + ", 'Brand new', 1.00)");
        List<Long> ids = new ArrayList<>(LongStream.rangeClosed(1, PRODUCTS).boxed().toList());
        ids.add(newId);
        client.configMaps().inNamespace(ns.name()).resource(idList(ids)).update();
        await().atMost(Duration.ofSeconds(60)).until(() -> filterVersion() > v1);
        assertThat(guard.port()).as("same service instance").isEqualTo(port);
        long redisHitsBeforeNew = redisKeyspaceHits(redis);
        HttpResponse<String> fresh = get("/products/" + newId);
        assertThat(servedBy(fresh, 200)).isEqualTo("database");
        assertThat(JSON.readTree(fresh.body()).path("name").asText()).isEqualTo("Brand new");
        assertThat(servedBy(get("/products/" + newId), 200)).isEqualTo("cache");
        assertThat(redisKeyspaceHits(redis) - redisHitsBeforeNew).isEqualTo(1);
        long expectedQueries = dbQueriesAfterAbsent + PRESENT_LOOKUPS + 1;
        assertThat(guard.stats().dbQueries()).isEqualTo(expectedQueries);
        assertThat(stats().path("filter").path("version").asLong()).isGreaterThan(v1);

        // PostgreSQL's own account. Statistics reach pg_stat_* when a backend flushes them, at
        // the latest when it exits: close the pool, wait for its sessions to end, then require
        // the count to hold still at exactly the expected number.
        guard.close();
        guardClosed = true;
        await().atMost(Duration.ofSeconds(15)).until(() -> serviceSessions(pg) == 0);
        await()
            .atMost(Duration.ofSeconds(15))
            .during(Duration.ofSeconds(1))
            .untilAsserted(
                () ->
                    assertThat(productScans(pg, schema) - pgScansBefore)
                        .as(
                            "scans of products counted by PostgreSQL (%d false positives + 1 known"
                                + " + %d present + 1 new)",
                            fp, PRESENT_LOOKUPS)
                        .isEqualTo(expectedQueries));
      } finally {
        if (!guardClosed) {
          guard.close();
        }
      }
    }
  }

  @Test
  void exampleManifestsAreValidBloomFilters(KubernetesClient client, TestNamespace ns)
      throws IOException {
    // Both examples (the jdbc source and the ConfigMap variant) pass the installed CRD's schema.
    Path dir = RealKubernetesExtension.repoRoot().resolve("examples/cache-guard");
    for (String file : List.of("bloomfilter.yaml", "bloomfilter-configmap.yaml")) {
      try (InputStream in = Files.newInputStream(dir.resolve(file))) {
        List<HasMetadata> items = client.load(in).items();
        assertThat(items).extracting(HasMetadata::getKind).contains("BloomFilter");
        for (HasMetadata item : items) {
          HasMetadata created = client.resource(item).inNamespace(ns.name()).dryRun().create();
          assertThat(created.getMetadata().getName())
              .as(file)
              .isEqualTo(item.getMetadata().getName());
          // Unknown fields would be pruned silently: every field sent must come back unchanged.
          // The server may add defaults (spec.format), so this is containment, not equality.
          assertKept(
              asMap(client, item).get("spec"), asMap(client, created).get("spec"), file + " spec");
        }
      }
    }
  }

  private static void assertKept(Object sent, Object returned, String path) {
    if (sent instanceof Map<?, ?> sentMap && returned instanceof Map<?, ?> returnedMap) {
      sentMap.forEach(
          (key, value) -> {
            assertThat(returnedMap.containsKey(key))
                .as("%s.%s kept (not pruned)", path, key)
                .isTrue();
            assertKept(value, returnedMap.get(key), path + "." + key);
          });
    } else {
      assertThat(returned).as(path).isEqualTo(sent);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> asMap(KubernetesClient client, HasMetadata resource) {
    return client.getKubernetesSerialization().convertValue(resource, Map.class);
  }

  /**
   * Applies examples/cache-guard/bloomfilter-configmap.yaml as written (its refreshInterval, 10s,
   * is the shortest the CRD admits) with these IDs.
   */
  private static void applyExampleFilter(KubernetesClient client, String namespace, List<Long> ids)
      throws IOException {
    Path file =
        RealKubernetesExtension.repoRoot()
            .resolve("examples/cache-guard/bloomfilter-configmap.yaml");
    for (HasMetadata item :
        client.load(new ByteArrayInputStream(Files.readAllBytes(file))).items()) {
      client
          .resource(item instanceof ConfigMap ? idList(ids) : item)
          .inNamespace(namespace)
          .create();
    }
  }

  private static ConfigMap idList(List<Long> ids) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName(ID_LIST)
        .endMetadata()
        .addToData(
            "ids.txt",
            ids.stream().map(String::valueOf).collect(Collectors.joining("\n", "", "\n")))
        .build();
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(10))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String servedBy(HttpResponse<String> response, int expectedStatus) {
    assertThat(response.statusCode())
        .as("%s: %s", response.uri(), response.body())
        .isEqualTo(expectedStatus);
    return response.headers().firstValue(ProductHandler.SERVED_BY).orElse("?");
  }

  private JsonNode stats() throws IOException, InterruptedException {
    HttpResponse<String> response = get("/stats");
    assertThat(response.statusCode()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private long filterVersion() throws IOException, InterruptedException {
    return stats().path("filter").path("version").asLong();
  }

  /** Index plus sequential scans of the products table, as PostgreSQL counts them. */
  private static long productScans(PostgresServer pg, String schema) throws SQLException {
    return queryLong(
        pg,
        "select coalesce(idx_scan, 0) + coalesce(seq_scan, 0)"
            + " from pg_stat_user_tables where schemaname = '"
            + schema
            + "' and relname = 'products'");
  }

  private static long serviceSessions(PostgresServer pg) throws SQLException {
    return queryLong(
        pg,
        "select count(*) from pg_stat_activity where application_name = '"
            + CacheGuard.APPLICATION_NAME
            + "'");
  }

  private static long queryLong(PostgresServer pg, String sql) throws SQLException {
    // A new connection per reading: statistics are read once per transaction and then cached.
    try (Connection c = pg.connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long redisKeyspaceHits(RedisClient redis) {
    return redis
        .info("stats")
        .lines()
        .filter(l -> l.startsWith("keyspace_hits:"))
        .mapToLong(l -> Long.parseLong(l.substring("keyspace_hits:".length()).strip()))
        .findFirst()
        .orElseThrow();
  }
}
