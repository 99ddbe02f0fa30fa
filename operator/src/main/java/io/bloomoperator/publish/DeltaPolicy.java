package io.bloomoperator.publish;

import io.bloomoperator.env.EnvNumbers;
import io.bloomoperator.snapshot.Manifest;
import java.util.Map;

/**
 * When a new version is published as a delta on the published chain, when the chain is compacted,
 * and when a whole new snapshot is written. A delta must be small against the whole payload (or it
 * saves little and costs every cold start a replay), and the chain must stay short and small,
 * because a pod that starts cold, or holds a version no longer in the chain, reads the base plus
 * every delta. Compaction makes the published version the new base, so running pods (which hold it)
 * still fetch only the new delta; only the operator writes the whole payload again.
 *
 * @param maxDeltas longest chain; the publish after that writes a new base (0: never deltas)
 * @param maxDeltaPercent largest single delta, in percent of the whole payload
 * @param maxChainPercent largest sum of all deltas of a chain, in percent of the whole payload: a
 *     cold start reads at most (100 + this) percent of one whole snapshot
 */
public record DeltaPolicy(int maxDeltas, int maxDeltaPercent, int maxChainPercent) {

  // 32: a cold start then reads the base plus at most 32 deltas, measured at 1.9x the time and
  // 1.18x the bytes of one whole snapshot (docs/benchmarks.md); running pods never pay for a
  // compaction, only the operator's one whole write per 33 refreshes.
  public static final int DEFAULT_MAX_DELTAS = 32;
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

  /** Whether deltas are published at all. */
  public boolean enabled() {
    return maxDeltas > 0;
  }

  /**
   * The largest delta worth publishing for a new version whose whole payload is {@code wholeBytes},
   * or -1 when deltas are off: beyond it, a new whole base costs readers little more.
   */
  public long maxDeltaBytes(long wholeBytes) {
    return enabled() ? percentOf(wholeBytes, maxDeltaPercent) : -1;
  }

  /**
   * Whether a delta of {@code deltaBytes} may be appended to the chain {@code published} heads; if
   * not, the chain is compacted: the published version becomes the new base (readers already hold
   * it, so they still fetch only the delta) and the delta follows it.
   *
   * @param wholeBytes size of the new version's whole payload
   */
  public boolean chainHasRoom(Manifest published, long deltaBytes, long wholeBytes) {
    return published.deltas().size() < maxDeltas
        && published.deltaBytes() + deltaBytes <= percentOf(wholeBytes, maxChainPercent);
  }

  private static long percentOf(long bytes, int percent) {
    return bytes / 100 * percent + bytes % 100 * percent / 100;
  }

  private static int intSetting(Map<String, String> env, String name, int fallback, int max) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return fallback;
    }
    long value = EnvNumbers.positiveOrZero(env, name, fallback);
    if (value > max) {
      throw new IllegalArgumentException(name + " must be at most " + max + ", got " + raw.trim());
    }
    return (int) value;
  }
}
