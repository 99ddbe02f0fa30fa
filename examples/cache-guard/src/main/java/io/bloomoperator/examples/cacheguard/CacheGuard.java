package io.bloomoperator.examples.cacheguard;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.bloomoperator.watch.BeforeFirstSnapshot;
import io.bloomoperator.watch.BloomFilterWatcher;
import io.bloomoperator.watch.LiveBloomFilter;
import io.bloomoperator.watch.LiveKeyType;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import redis.clients.jedis.RedisClient;

/**
 * The running service: the live product filter, the Redis and database clients, and the HTTP
 * server, wired together. {@link #close()} stops them in reverse order.
 */
public final class CacheGuard implements AutoCloseable {

  /**
   * PostgreSQL {@code application_name} of the service's connections (visible in pg_stat_activity).
   */
  public static final String APPLICATION_NAME = "cache-guard";

  private static final Logger LOG = LoggerFactory.getLogger(CacheGuard.class);

  private final LiveBloomFilter<Long> filter;
  private final RedisClient redis;
  private final HikariDataSource database;
  private final GuardStats stats;
  private final CacheGuardServer server;

  private CacheGuard(
      LiveBloomFilter<Long> filter,
      RedisClient redis,
      HikariDataSource database,
      GuardStats stats,
      CacheGuardServer server) {
    this.filter = filter;
    this.redis = redis;
    this.database = database;
    this.stats = stats;
    this.server = server;
  }

  /**
   * Starts following the filter and serving HTTP. Returns at once: {@code /readyz} answers 503
   * until the first filter snapshot has loaded.
   *
   * @param client Kubernetes client for the filter's snapshot ConfigMaps (owned by the caller)
   */
  public static CacheGuard start(CacheGuardConfig config, KubernetesClient client) {
    // Fail-open before the first snapshot: unready pods get no traffic anyway, and a direct
    // request then still gets a correct (if unguarded) answer rather than a false 404.
    LiveBloomFilter<Long> filter =
        BloomFilterWatcher.builder(
                client, config.filterNamespace(), config.filterName(), LiveKeyType.LONG)
            .beforeFirstSnapshot(BeforeFirstSnapshot.FAIL_OPEN)
            .listener(new FilterUpdateLogger())
            .start();
    RedisClient redis = null;
    HikariDataSource database = null;
    try {
      redis = RedisClient.create(config.redisUrl());
      database = dataSource(config);
      GuardStats stats = new GuardStats();
      ProductLookup lookup =
          new ProductLookup(
              filter::mightContain,
              new RedisProductCache(redis, config.productTtl(), config.notFoundTtl()),
              new JdbcProductRepository(database),
              stats,
              filter::recordOutcome); // feeds the filter's observed false-positive rate
      CacheGuardServer server =
          CacheGuardServer.start(config.port(), config.threads(), lookup, stats, filter);
      LOG.info("cache-guard serving on :{} with {}", server.port(), config);
      return new CacheGuard(filter, redis, database, stats, server);
    } catch (IOException | RuntimeException e) {
      filter.close();
      if (database != null) {
        database.close();
      }
      if (redis != null) {
        redis.close();
      }
      if (e instanceof IOException io) {
        throw new UncheckedIOException("cannot start the HTTP server", io);
      }
      throw (RuntimeException) e;
    }
  }

  private static HikariDataSource dataSource(CacheGuardConfig config) {
    HikariConfig hikari = new HikariConfig();
    hikari.setPoolName(APPLICATION_NAME);
    hikari.setJdbcUrl(config.jdbcUrl());
    hikari.setUsername(config.jdbcUser());
    hikari.setPassword(config.jdbcPassword());
    // One connection per HTTP worker: a worker never waits for another's connection.
    hikari.setMaximumPoolSize(config.threads());
    hikari.setMinimumIdle(1);
    hikari.setReadOnly(true);
    hikari.addDataSourceProperty("ApplicationName", APPLICATION_NAME);
    return new HikariDataSource(hikari);
  }

  /** The HTTP port actually bound. */
  public int port() {
    return server.port();
  }

  /** The look-up counters (also on {@code /stats}). */
  public GuardStats stats() {
    return stats;
  }

  /** The live product filter. */
  public LiveBloomFilter<Long> filter() {
    return filter;
  }

  /** Stops serving, then closes the filter watch, the database pool and the Redis client. */
  @Override
  public void close() {
    server.close();
    filter.close();
    database.close();
    redis.close();
  }
}
