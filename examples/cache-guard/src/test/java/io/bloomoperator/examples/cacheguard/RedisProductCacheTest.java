package io.bloomoperator.examples.cacheguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bloomoperator.testing.servers.RedisServer;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

/** The cache's Redis encoding and TTLs, on a real redis-server. */
class RedisProductCacheTest {

  private final RedisClient redis = RedisClient.create(URI.create(RedisServer.shared().url()));
  private final RedisProductCache cache =
      new RedisProductCache(redis, Duration.ofMinutes(10), Duration.ofSeconds(30));

  @AfterEach
  void close() {
    redis.close();
  }

  @Test
  void storesDocumentsAndNotFoundMarkersWithTheirTtls() {
    long id = System.nanoTime(); // a key no other test uses on the shared server
    assertThat(cache.get(id)).isEqualTo(new ProductCache.Miss());

    cache.putFound(id, "{\"id\":" + id + "}");
    assertThat(cache.get(id)).isEqualTo(new ProductCache.Found("{\"id\":" + id + "}"));
    assertThat(redis.ttl("product:" + id)).isBetween(590L, 600L);

    cache.putNotFound(id + 1);
    assertThat(cache.get(id + 1)).isEqualTo(new ProductCache.NotFound());
    assertThat(redis.get("product:" + (id + 1))).isEqualTo("NOT_FOUND");
    assertThat(redis.ttl("product:" + (id + 1))).isBetween(20L, 30L);
  }

  @Test
  void subSecondTtlIsRejected() {
    assertThatThrownBy(
            () -> new RedisProductCache(redis, Duration.ofMinutes(1), Duration.ofMillis(500)))
        .hasMessageContaining("notFoundTtl");
  }
}
