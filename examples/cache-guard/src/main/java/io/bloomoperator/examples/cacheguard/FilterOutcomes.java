package io.bloomoperator.examples.cacheguard;

/**
 * Where {@link ProductLookup} reports, for an ID the filter answered "maybe present", whether the
 * product really exists: {@code LiveBloomFilter.recordOutcome}, from which sidecar-lib estimates
 * the false-positive rate the filter actually has.
 */
@FunctionalInterface
public interface FilterOutcomes {

  /** The store (Redis or PostgreSQL) said {@code id} exists ({@code found}) or does not. */
  void record(long id, boolean found);
}
