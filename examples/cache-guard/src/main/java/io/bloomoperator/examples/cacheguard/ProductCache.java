package io.bloomoperator.examples.cacheguard;

/**
 * The cache in front of the database. It remembers both products (as their JSON document) and "no
 * such product" answers, so an ID that got past the Bloom filter (a false positive or a deleted
 * row) reaches the database once per not-found TTL rather than on every request.
 */
public interface ProductCache {

  /** What the cache knows about one ID. */
  sealed interface Entry permits Miss, Found, NotFound {}

  /** Nothing cached: ask the database. */
  record Miss() implements Entry {}

  /** A cached product document. */
  record Found(String json) implements Entry {}

  /** A cached "the database has no such row". */
  record NotFound() implements Entry {}

  /**
   * Looks {@code id} up.
   *
   * @throws RuntimeException if the cache cannot be reached (callers fall back to the database)
   */
  Entry get(long id);

  /** Caches a product document under the product TTL. */
  void putFound(long id, String json);

  /** Caches a "not found" marker under the (short) not-found TTL. */
  void putNotFound(long id);
}
