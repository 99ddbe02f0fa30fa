package io.bloomoperator.examples.cacheguard;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counters of where product look-ups were answered, shown on {@code /stats}. Thread-safe; {@link
 * LongAdder}s because every request thread increments them.
 */
public final class GuardStats {

  private final LongAdder lookups = new LongAdder();
  private final LongAdder filterRejections = new LongAdder();
  private final LongAdder cacheHits = new LongAdder();
  private final LongAdder cacheNotFoundHits = new LongAdder();
  private final LongAdder cacheMisses = new LongAdder();
  private final LongAdder cacheErrors = new LongAdder();
  private final LongAdder dbQueries = new LongAdder();
  private final LongAdder dbFound = new LongAdder();
  private final LongAdder dbNotFound = new LongAdder();
  private final LongAdder dbErrors = new LongAdder();

  void countLookup() {
    lookups.increment();
  }

  void countFilterRejection() {
    filterRejections.increment();
  }

  void countCacheHit() {
    cacheHits.increment();
  }

  void countCacheNotFoundHit() {
    cacheNotFoundHits.increment();
  }

  void countCacheMiss() {
    cacheMisses.increment();
  }

  void countCacheError() {
    cacheErrors.increment();
  }

  void countDbQuery() {
    dbQueries.increment();
  }

  void countDbFound() {
    dbFound.increment();
  }

  void countDbNotFound() {
    dbNotFound.increment();
  }

  void countDbError() {
    dbErrors.increment();
  }

  /** Look-ups of well-formed IDs. */
  public long lookups() {
    return lookups.sum();
  }

  /** Look-ups answered 404 by the Bloom filter alone (no Redis, no database). */
  public long filterRejections() {
    return filterRejections.sum();
  }

  /** Look-ups answered from a cached product document. */
  public long cacheHits() {
    return cacheHits.sum();
  }

  /** Look-ups answered 404 from a cached "not found" marker. */
  public long cacheNotFoundHits() {
    return cacheNotFoundHits.sum();
  }

  /** Look-ups that found nothing in the cache. */
  public long cacheMisses() {
    return cacheMisses.sum();
  }

  /** Failed cache reads or writes (the look-up went on to the database). */
  public long cacheErrors() {
    return cacheErrors.sum();
  }

  /** Queries sent to the database (including failed ones). */
  public long dbQueries() {
    return dbQueries.sum();
  }

  /** Database queries that found the product. */
  public long dbFound() {
    return dbFound.sum();
  }

  /** Database queries that found no row: filter false positives or deleted products. */
  public long dbNotFound() {
    return dbNotFound.sum();
  }

  /** Database queries that failed. */
  public long dbErrors() {
    return dbErrors.sum();
  }

  /** All counters by name, in a stable order, for the JSON of {@code /stats}. */
  public Map<String, Long> asMap() {
    Map<String, Long> map = new LinkedHashMap<>();
    map.put("lookups", lookups());
    map.put("filterRejections", filterRejections());
    map.put("cacheHits", cacheHits());
    map.put("cacheNotFoundHits", cacheNotFoundHits());
    map.put("cacheMisses", cacheMisses());
    map.put("cacheErrors", cacheErrors());
    map.put("dbQueries", dbQueries());
    map.put("dbFound", dbFound());
    map.put("dbNotFound", dbNotFound());
    map.put("dbErrors", dbErrors());
    return map;
  }
}
