package io.bloomoperator.api;

import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import java.time.Duration;

/**
 * A BloomFilter's spec with defaults applied and durations parsed: what the operator works with.
 * Bounds the CRD enforces are checked again here, for resources admitted by an older CRD.
 *
 * @param refresh how often the source is checked, or null (inline keys change with the resource)
 * @param maxMalformedKeys the spec's tolerance, or null for the operator's default
 * @param format the bit layout to build
 * @param splitBlockSize how a split-block filter's block count is chosen
 */
public record ResolvedSpec(
    KeyType keyType,
    double falsePositiveRate,
    Long expectedInsertions,
    Duration refresh,
    int chunkSize,
    Duration retainPrevious,
    Long maxMalformedKeys,
    FilterFormat format,
    SplitBlockSize splitBlockSize) {

  /**
   * How often a source outside the resource is checked when no refreshInterval is given: such
   * sources are not watched, a check is one cheap request, and it rebuilds only on a change.
   */
  public static final Duration DEFAULT_SOURCE_CHECK = Duration.ofMinutes(1);

  /**
   * @param minRefresh the operator's shortest refresh interval
   * @throws IllegalArgumentException naming the field that is missing or out of bounds
   */
  public static ResolvedSpec of(BloomFilterSpec spec, Duration minRefresh) {
    if (spec == null || spec.getFalsePositiveRate() == null) {
      throw new IllegalArgumentException("spec.falsePositiveRate is required");
    }
    double p = spec.getFalsePositiveRate();
    if (!(p >= BloomFilterSpec.MIN_FALSE_POSITIVE_RATE && p < 1)) {
      throw new IllegalArgumentException(
          "spec.falsePositiveRate must be in ["
              + BloomFilterSpec.MIN_FALSE_POSITIVE_RATE
              + ", 1), got "
              + p);
    }
    if (spec.getExpectedInsertions() != null
        && spec.getExpectedInsertions() > BloomFilterSpec.MAX_EXPECTED_INSERTIONS) {
      throw new IllegalArgumentException(
          "spec.expectedInsertions must be at most " + BloomFilterSpec.MAX_EXPECTED_INSERTIONS);
    }
    SnapshotSpec snapshot = spec.getSnapshot() == null ? new SnapshotSpec() : spec.getSnapshot();
    int chunkSize =
        snapshot.getChunkSizeBytes() == null
            ? SnapshotSpec.DEFAULT_CHUNK_BYTES
            : snapshot.getChunkSizeBytes();
    if (chunkSize < 1024 || chunkSize > SnapshotSpec.MAX_CHUNK_BYTES) {
      throw new IllegalArgumentException(
          "spec.snapshot.chunkSizeBytes must be in 1024.." + SnapshotSpec.MAX_CHUNK_BYTES);
    }
    Duration refresh;
    if (spec.getRefreshInterval() != null) {
      refresh = Durations.parse(spec.getRefreshInterval());
      if (refresh.compareTo(minRefresh) < 0) {
        throw new IllegalArgumentException(
            "spec.refreshInterval "
                + spec.getRefreshInterval()
                + " is below the operator's minimum of "
                + Durations.format(minRefresh)
                + " (BLOOM_MIN_REFRESH_INTERVAL)");
      }
    } else if (spec.getSource() != null && spec.getSource().getInline() == null) {
      refresh = DEFAULT_SOURCE_CHECK;
    } else {
      refresh = null;
    }
    Duration retain =
        Durations.parse(
            snapshot.getRetainPreviousFor() == null
                ? SnapshotSpec.DEFAULT_RETAIN
                : snapshot.getRetainPreviousFor());
    if (retain.compareTo(SnapshotSpec.MAX_RETAIN) > 0) {
      throw new IllegalArgumentException(
          "spec.snapshot.retainPreviousFor must be at most "
              + Durations.format(SnapshotSpec.MAX_RETAIN));
    }
    return new ResolvedSpec(
        spec.getKeyType() == null ? KeyType.STRING : spec.getKeyType(),
        p,
        spec.getExpectedInsertions(),
        refresh,
        chunkSize,
        retain,
        spec.getMaxMalformedKeys(),
        spec.getFormat() == null ? FilterFormat.GUAVA : spec.getFormat(),
        spec.getSplitBlockSize() == null ? SplitBlockSize.FIT : spec.getSplitBlockSize());
  }
}
