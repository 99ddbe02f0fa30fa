package io.bloomoperator.examples.cacheguard;

import io.bloomoperator.examples.cacheguard.LookupResult.Outcome;
import java.sql.SQLException;
import java.util.Optional;
import java.util.function.LongPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cache-penetration guard: Bloom filter, then cache, then database.
 *
 * <ol>
 *   <li>The filter says "definitely absent" → not found; neither Redis nor the database is asked.
 *       This is what stops floods of made-up IDs.
 *   <li>Redis has the product, or a "not found" marker → that answer.
 *   <li>The database: a row is cached with the product TTL; no row (the filter's false positive, or
 *       a deleted product) is cached as "not found" with a short TTL, so the same ID does not reach
 *       the database again for a while.
 * </ol>
 *
 * <p>A cache that cannot be reached is skipped rather than failing the request: the filter still
 * keeps made-up IDs away from the database. Thread-safe if its collaborators are.
 *
 * <p>Every "maybe present" answer whose truth becomes known (a cached product or "not found"
 * marker, a database row or none) is reported to {@link FilterOutcomes}; answers whose look-up
 * failed are not, which leaves the rest an unbiased sample (failures do not depend on whether the
 * product exists).
 */
public final class ProductLookup {

  private static final Logger LOG = LoggerFactory.getLogger(ProductLookup.class);

  private final LongPredicate mightExist;
  private final ProductCache cache;
  private final ProductRepository repository;
  private final GuardStats stats;
  private final FilterOutcomes outcomes;

  /**
   * @param mightExist the Bloom filter's {@code mightContain}; false must mean "definitely absent"
   * @param cache the cache in front of the database
   * @param repository the database
   * @param stats counters to update
   * @param outcomes told whether each maybe-present ID exists, when that is known
   */
  public ProductLookup(
      LongPredicate mightExist,
      ProductCache cache,
      ProductRepository repository,
      GuardStats stats,
      FilterOutcomes outcomes) {
    this.mightExist = mightExist;
    this.cache = cache;
    this.repository = repository;
    this.stats = stats;
    this.outcomes = outcomes;
  }

  /**
   * Looks one product up.
   *
   * @throws SQLException if the look-up reached the database and the database failed
   */
  public LookupResult lookup(long id) throws SQLException {
    stats.countLookup();
    if (!mightExist.test(id)) {
      stats.countFilterRejection();
      return LookupResult.notFound(Outcome.FILTER_REJECTED);
    }
    LookupResult cached = fromCache(id);
    if (cached != null) {
      return cached;
    }
    return fromDatabase(id);
  }

  /** The cached answer, or null to go on to the database (miss, or cache unavailable). */
  private LookupResult fromCache(long id) {
    ProductCache.Entry entry;
    try {
      entry = cache.get(id);
    } catch (RuntimeException e) {
      stats.countCacheError();
      LOG.warn("cache read for product {} failed, asking the database: {}", id, e.toString());
      return null;
    }
    if (entry instanceof ProductCache.Found found) {
      stats.countCacheHit();
      outcomes.record(id, true);
      return LookupResult.found(Outcome.CACHE_HIT, found.json());
    }
    if (entry instanceof ProductCache.NotFound) {
      stats.countCacheNotFoundHit();
      outcomes.record(id, false);
      return LookupResult.notFound(Outcome.CACHE_NOT_FOUND);
    }
    stats.countCacheMiss();
    return null;
  }

  private LookupResult fromDatabase(long id) throws SQLException {
    stats.countDbQuery();
    Optional<Product> product;
    try {
      product = repository.findById(id);
    } catch (SQLException e) {
      stats.countDbError();
      throw e;
    }
    if (product.isEmpty()) {
      stats.countDbNotFound();
      outcomes.record(id, false);
      cacheQuietly(id, null);
      return LookupResult.notFound(Outcome.DB_NOT_FOUND);
    }
    stats.countDbFound();
    outcomes.record(id, true);
    String json = Json.write(product.get());
    cacheQuietly(id, json);
    return LookupResult.found(Outcome.DB_FOUND, json);
  }

  /** Caches a product (or "not found" when json is null); a failure only costs a later query. */
  private void cacheQuietly(long id, String json) {
    try {
      if (json == null) {
        cache.putNotFound(id);
      } else {
        cache.putFound(id, json);
      }
    } catch (RuntimeException e) {
      stats.countCacheError();
      LOG.warn("cache write for product {} failed: {}", id, e.toString());
    }
  }
}
