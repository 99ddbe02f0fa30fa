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
 * @param maxStreamDeltas longest chain a change stream's publishes may grow ({@link #forStream});
 *     at most {@code maxDeltas} has no effect
 */
public record DeltaPolicy(
    int maxDeltas, int maxDeltaPercent, int maxChainPercent, int maxStreamDeltas) {

  // 32: a cold start then reads the base plus at most 32 deltas, measured at 1.9x the time and
  // 1.18x the bytes of one whole snapshot (docs/benchmarks.md); running pods never pay for a
  // compaction, only the operator's one whole write per 33 refreshes.
  public static final int DEFAULT_MAX_DELTAS = 32;
  public static final int DEFAULT_MAX_DELTA_PERCENT = 25;
  public static final int DEFAULT_MAX_CHAIN_PERCENT = 50;

  // 512: the ski-rental length (below) of a ~59 MB payload (about 50M keys at 1 %); a cold start
  // then GETs at most 512 small delta chunks besides the base. Kept well under what one manifest
  // ConfigMap (1 MiB) can
  // list next to a 1B-key base's chunk list (~219 KB): 512 entries are ~230 KB.
  public static final int DEFAULT_MAX_STREAM_DELTAS = 512;

  /**
   * What one delta's entry adds to every later manifest write while it is in the chain: its
   * version, sizes, payload digest and one chunk reference, pretty-printed and escaped as a
   * ConfigMap value (DeltaPolicyTest measures it).
   */
  static final long DELTA_ENTRY_BYTES = 450;

  /** Deltas never: every version is a whole snapshot, as before chains existed. */
  public static final DeltaPolicy WHOLE_SNAPSHOTS_ONLY = new DeltaPolicy(0, 0, 0);

  /** A policy whose stream publishes compact like builds do beyond the default stream length. */
  public DeltaPolicy(int maxDeltas, int maxDeltaPercent, int maxChainPercent) {
    this(
        maxDeltas,
        maxDeltaPercent,
        maxChainPercent,
        maxDeltas == 0 ? 0 : Math.max(maxDeltas, DEFAULT_MAX_STREAM_DELTAS));
  }

  public DeltaPolicy {
    if (maxDeltas < 0 || maxDeltaPercent < 0 || maxChainPercent < 0 || maxStreamDeltas < 0) {
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
        DEFAULT_MAX_DELTAS,
        DEFAULT_MAX_DELTA_PERCENT,
        DEFAULT_MAX_CHAIN_PERCENT,
        DEFAULT_MAX_STREAM_DELTAS);
  }

  /**
   * Reads BLOOM_DELTA_MAX_CHAIN (longest chain, 0 switches deltas off), BLOOM_DELTA_MAX_PERCENT,
   * BLOOM_DELTA_CHAIN_MAX_PERCENT and BLOOM_STREAM_DELTA_MAX_CHAIN.
   *
   * @throws IllegalArgumentException naming the variable that is not valid
   */
  public static DeltaPolicy fromEnvironment(Map<String, String> env) {
    return new DeltaPolicy(
        intSetting(env, "BLOOM_DELTA_MAX_CHAIN", DEFAULT_MAX_DELTAS, 1000),
        intSetting(env, "BLOOM_DELTA_MAX_PERCENT", DEFAULT_MAX_DELTA_PERCENT, 100),
        intSetting(env, "BLOOM_DELTA_CHAIN_MAX_PERCENT", DEFAULT_MAX_CHAIN_PERCENT, 1000),
        intSetting(env, "BLOOM_STREAM_DELTA_MAX_CHAIN", DEFAULT_MAX_STREAM_DELTAS, 1000));
  }

  /**
   * The policy of a change stream's publish of a version whose whole payload is {@code wholeBytes}.
   * A stream publishes every {@code publishEvery} (1-2 s), so a chain of {@code maxDeltas} (32)
   * would write a whole new base every half minute: at 100M keys 120 MB, a hundred times what the
   * deltas themselves write. A longer chain instead makes every manifest write longer (each delta
   * in the chain is one more entry of {@link #DELTA_ENTRY_BYTES}). The stream's chain is compacted
   * when what its entries have cost in manifest writes since the base reaches what one whole base
   * costs: a chain of L deltas has cost {@code DELTA_ENTRY_BYTES * L * (L + 1) / 2}, so L grows as
   * the square root of the payload (the ski-rental rule: never more than twice the writes of the
   * best length in hindsight). It is at least {@code maxDeltas} and at most {@code
   * maxStreamDeltas}; the chain's byte bound ({@code maxChainPercent}) holds as for builds, so a
   * cold start still reads at most (100 + that) percent of one snapshot.
   */
  public DeltaPolicy forStream(long wholeBytes) {
    if (!enabled() || maxStreamDeltas <= maxDeltas) {
      return this;
    }
    return new DeltaPolicy(
        (int) Math.max(maxDeltas, Math.min(maxStreamDeltas, streamChainLength(wholeBytes))),
        maxDeltaPercent,
        maxChainPercent,
        maxStreamDeltas);
  }

  /** The largest L with {@code DELTA_ENTRY_BYTES * L * (L + 1) / 2 <= wholeBytes}. */
  static long streamChainLength(long wholeBytes) {
    double ratio = 8.0 * Math.max(0, wholeBytes) / DELTA_ENTRY_BYTES;
    long length = (long) ((Math.sqrt(1 + ratio) - 1) / 2);
    // Floating point may be one off either way near a square: settle it with exact arithmetic.
    while (length > 0 && DELTA_ENTRY_BYTES * length * (length + 1) / 2 > wholeBytes) {
      length--;
    }
    while (DELTA_ENTRY_BYTES * (length + 1) * (length + 2) / 2 <= wholeBytes) {
      length++;
    }
    return length;
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
