package io.bloomoperator.publish;

import io.bloomoperator.reconcile.OperatorSettings;
import io.bloomoperator.snapshot.Manifest;
import io.bloomoperator.snapshot.SnapshotDelta;
import java.util.Map;

/**
 * When a new version is published as a delta on the published chain and when as a whole new base
 * (which also compacts the chain). A delta must be small against the whole payload (or it saves
 * little and costs every cold start a replay), and the chain must stay short and small, because a
 * pod that starts cold, or holds a version no longer in the chain, reads the base plus every delta.
 *
 * @param maxDeltas longest chain; the publish after that writes a new base (0: never deltas)
 * @param maxDeltaPercent largest single delta, in percent of the whole payload
 * @param maxChainPercent largest sum of all deltas of a chain, in percent of the whole payload: a
 *     cold start reads at most (100 + this) percent of one whole snapshot
 */
public record DeltaPolicy(int maxDeltas, int maxDeltaPercent, int maxChainPercent) {

  public static final int DEFAULT_MAX_DELTAS = 16;
  public static final int DEFAULT_MAX_DELTA_PERCENT = 25;
  public static final int DEFAULT_MAX_CHAIN_PERCENT = 50;

  /** Deltas never: every version is a whole snapshot, as before chains existed. */
  public static final DeltaPolicy WHOLE_SNAPSHOTS_ONLY = new DeltaPolicy(0, 0, 0);

  public DeltaPolicy {
    if (maxDeltas < 0 || maxDeltaPercent < 0 || maxChainPercent < 0) {
      throw new IllegalArgumentException("delta limits must not be negative");
    }
    if (maxDeltaPercent > 100 || maxChainPercent > 1000) {
      throw new IllegalArgumentException(
          "a delta of more than 100 % of the whole payload, or a chain of more than 1000 %, "
              + "costs more than it saves");
    }
  }

  /** The defaults. */
  public static DeltaPolicy defaults() {
    return new DeltaPolicy(
        DEFAULT_MAX_DELTAS, DEFAULT_MAX_DELTA_PERCENT, DEFAULT_MAX_CHAIN_PERCENT);
  }

  /**
   * Reads BLOOM_DELTA_MAX_CHAIN (longest chain, 0 switches deltas off), BLOOM_DELTA_MAX_PERCENT and
   * BLOOM_DELTA_CHAIN_MAX_PERCENT.
   *
   * @throws IllegalArgumentException naming the variable that is not valid
   */
  public static DeltaPolicy fromEnvironment(Map<String, String> env) {
    return new DeltaPolicy(
        intSetting(env, "BLOOM_DELTA_MAX_CHAIN", DEFAULT_MAX_DELTAS, 1000),
        intSetting(env, "BLOOM_DELTA_MAX_PERCENT", DEFAULT_MAX_DELTA_PERCENT, 100),
        intSetting(env, "BLOOM_DELTA_CHAIN_MAX_PERCENT", DEFAULT_MAX_CHAIN_PERCENT, 1000));
  }

  /**
   * The largest delta the next version may be written as, on top of {@code published} (which has
   * the new version's geometry), or -1 when it must be a whole new base: deltas are off, the chain
   * is at its longest, or no room is left in it.
   *
   * @param wholeBytes size of the new version's whole payload
   */
  public long deltaBudget(Manifest published, long wholeBytes) {
    if (maxDeltas == 0 || published.deltas().size() >= maxDeltas) {
      return -1;
    }
    long single = wholeBytes / 100 * maxDeltaPercent + wholeBytes % 100 * maxDeltaPercent / 100;
    long chain =
        wholeBytes / 100 * maxChainPercent
            + wholeBytes % 100 * maxChainPercent / 100
            - published.deltaBytes();
    long budget = Math.min(single, chain);
    return budget < SnapshotDelta.HEADER_BYTES ? -1 : budget;
  }

  private static int intSetting(Map<String, String> env, String name, int fallback, int max) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    long value = OperatorSettings.positiveOrZero(env, name, fallback);
    if (value > max) {
      throw new IllegalArgumentException(name + " must be at most " + max + ", got " + raw.trim());
    }
    return (int) value;
  }
}
