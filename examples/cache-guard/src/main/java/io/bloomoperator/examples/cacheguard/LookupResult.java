package io.bloomoperator.examples.cacheguard;

/**
 * The answer to one product look-up and which layer gave it.
 *
 * @param outcome where the answer came from
 * @param json the product document when {@link Outcome#found()}, otherwise null
 */
public record LookupResult(Outcome outcome, String json) {

  /** Which layer answered, in the order they are asked. */
  public enum Outcome {
    /** The Bloom filter says the ID definitely does not exist: 404, nothing else asked. */
    FILTER_REJECTED("filter", false),
    /** Redis had the product document. */
    CACHE_HIT("cache", true),
    /** Redis had a "not found" marker. */
    CACHE_NOT_FOUND("cache", false),
    /** The database had the row (now cached). */
    DB_FOUND("database", true),
    /** The database had no row (a "not found" marker is now cached). */
    DB_NOT_FOUND("database", false);

    private final String layer;
    private final boolean found;

    Outcome(String layer, boolean found) {
      this.layer = layer;
      this.found = found;
    }

    /** {@code filter}, {@code cache} or {@code database}: the X-Served-By response header. */
    public String layer() {
      return layer;
    }

    /** Whether the product exists (200) or not (404). */
    public boolean found() {
      return found;
    }
  }

  static LookupResult notFound(Outcome outcome) {
    return new LookupResult(outcome, null);
  }

  static LookupResult found(Outcome outcome, String json) {
    return new LookupResult(outcome, json);
  }
}
