package io.bloomoperator.examples.cacheguard;

import java.time.Duration;
import redis.clients.jedis.UnifiedJedis;

/**
 * {@link ProductCache} in Redis: key {@code product:<id>} holds the product's JSON document, or
 * {@link #NOT_FOUND_MARKER} for an ID the database does not have. Both are written with SETEX, so
 * every entry expires on its own.
 */
public final class RedisProductCache implements ProductCache {

  /** Key prefix; one namespace for products in a Redis that may be shared. */
  public static final String KEY_PREFIX = "product:";

  /** Value of a cached "not found": a JSON document never equals it (it starts with '{'). */
  public static final String NOT_FOUND_MARKER = "NOT_FOUND";

  private final UnifiedJedis redis;
  private final long productTtlSeconds;
  private final long notFoundTtlSeconds;

  /**
   * @param redis a thread-safe, pooled client (owned by the caller)
   * @param productTtl how long a product document is served from the cache
   * @param notFoundTtl how long a "not found" is remembered; short, so a product inserted meanwhile
   *     shows up soon even if the filter already let its ID through
   */
  public RedisProductCache(UnifiedJedis redis, Duration productTtl, Duration notFoundTtl) {
    this.redis = redis;
    this.productTtlSeconds = wholeSeconds(productTtl, "productTtl");
    this.notFoundTtlSeconds = wholeSeconds(notFoundTtl, "notFoundTtl");
  }

  /** The Redis key of a product. */
  public static String key(long id) {
    return KEY_PREFIX + id;
  }

  @Override
  public Entry get(long id) {
    String value = redis.get(key(id));
    if (value == null) {
      return new Miss();
    }
    return NOT_FOUND_MARKER.equals(value) ? new NotFound() : new Found(value);
  }

  @Override
  public void putFound(long id, String json) {
    redis.setex(key(id), productTtlSeconds, json);
  }

  @Override
  public void putNotFound(long id) {
    redis.setex(key(id), notFoundTtlSeconds, NOT_FOUND_MARKER);
  }

  private static long wholeSeconds(Duration ttl, String what) {
    // SETEX takes whole seconds; a sub-second TTL would round to 0, which Redis rejects.
    if (ttl.toSeconds() < 1) {
      throw new IllegalArgumentException(what + " must be at least 1s, got " + ttl);
    }
    return ttl.toSeconds();
  }
}
