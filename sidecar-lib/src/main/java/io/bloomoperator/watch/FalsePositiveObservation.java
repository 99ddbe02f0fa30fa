package io.bloomoperator.watch;

/**
 * What the application reported about one served version through {@link
 * LiveBloomFilter#recordOutcome}, and the false-positive rate estimated from it. Counts start at
 * zero when the version is swapped in, so a stale or undersized version shows up on its own.
 *
 * <p><b>The estimator.</b> The false-positive rate is FP / (FP + TN) over lookups of absent keys.
 * Of the {@code lookups} of this version, {@code definitelyAbsent()} = lookups - maybePresent were
 * answered "definitely absent": a Bloom filter has no false negatives, so all of them are true
 * negatives. The false positives hide among the {@code maybePresent} answers; the application
 * reports the store's verdict for some or all of them ({@code truePositives} found, {@code
 * falsePositives} not found). With S = truePositives + falsePositives reports, the false positives
 * among all maybe-present answers are estimated as FP^ = maybePresent * falsePositives / S, and
 *
 * <pre>
 *   rate = FP^ / (definitelyAbsent + FP^)
 * </pre>
 *
 * When every maybe-present answer is reported (S = maybePresent), this is exactly falsePositives /
 * (definitelyAbsent + falsePositives). The estimate is unbiased only if the reported answers are a
 * sample chosen independently of the outcome (all of them, every n-th, a random share), and it is a
 * rate over lookups, not over distinct keys: an absent key looked up ten times counts ten times,
 * which is the load that reaches the store. A key deleted from the store after the version was
 * built counts as a false positive: that is the staleness the rate is meant to show.
 *
 * @param version the served version the counts belong to
 * @param lookups lookups answered by this version
 * @param maybePresent of those, answered "maybe present"
 * @param truePositives reported maybe-present answers whose key the store had
 * @param falsePositives reported maybe-present answers whose key the store did not have
 */
public record FalsePositiveObservation(
    long version, long lookups, long maybePresent, long truePositives, long falsePositives) {

  /** Lookups answered "definitely absent": all true negatives. */
  public long definitelyAbsent() {
    return Math.max(0, lookups - maybePresent);
  }

  /** Maybe-present answers the application reported an outcome for. */
  public long reported() {
    return truePositives + falsePositives;
  }

  /**
   * The estimated false-positive rate (see the class comment), or NaN while it is unknown: there
   * were maybe-present answers but no outcome was reported, or no absent key was looked up at all.
   * Zero when every answer was "definitely absent" (no maybe-present answer, no false positive).
   */
  public double rate() {
    long reported = reported();
    long maybe = Math.max(0, maybePresent);
    if (maybe > 0 && reported == 0) {
      return Double.NaN;
    }
    double falsePositivesEstimate = maybe == 0 ? 0 : (double) maybe * falsePositives / reported;
    double absentLookups = definitelyAbsent() + falsePositivesEstimate;
    return absentLookups == 0 ? Double.NaN : falsePositivesEstimate / absentLookups;
  }
}
