package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.bloomoperator.snapshot.FilterFormat;
import io.bloomoperator.snapshot.KeyType;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** What a user asks for: the key source, the accuracy, and how the snapshot is refreshed. */
@ValidationRule(
    value =
        "!has(self.splitBlockSize) || self.splitBlockSize == 'Fit'"
            + " || (has(self.format) && self.format == 'SplitBlock')",
    message = "splitBlockSize PowerOfTwo applies to format SplitBlock only")
@ValidationRule(
    value =
        "!has(self.changes) || !has(self.changes.postgresLogical) || (has(self.source.jdbc)"
            + " && self.source.jdbc.url.startsWith('jdbc:postgresql:'))",
    message = "changes.postgresLogical needs a jdbc source with a jdbc:postgresql: URL")
public class BloomFilterSpec {

  /** Go-style durations as Kubernetes users write them: 30s, 10m, 1h30m, 500ms. */
  public static final String DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";

  /**
   * Below this a filter costs more bits per key (about 43 at 1e-9) than most key sets are worth;
   * smaller targets are almost always a typo.
   */
  public static final double MIN_FALSE_POSITIVE_RATE = 1e-9;

  /** Far above what a ConfigMap snapshot can carry at any rate; the byte limits bind first. */
  public static final long MAX_EXPECTED_INSERTIONS = 2_000_000_000L;

  /** The shortest refreshInterval admitted: each check is at least one request to the source. */
  public static final String MIN_REFRESH_INTERVAL = "10s";

  @Required
  // The exclusive minimum of 0 is not redundant: the API server compares an integer value (0)
  // with a truncated integer minimum, so `minimum: 1e-9` alone would admit 0.
  @Min(value = 0, inclusive = false)
  @Max(value = 1, inclusive = false)
  @ValidationRule(value = "self >= 1e-9", message = "must be at least 1e-9")
  @JsonPropertyDescription(
      "Target false-positive probability, 1e-9 <= p < 1 (e.g. 0.01). The "
          + "published filter's expected false-positive rate at the actual key count never exceeds "
          + "it.")
  private Double falsePositiveRate;

  @Min(1)
  @Max(MAX_EXPECTED_INSERTIONS)
  @JsonPropertyDescription(
      "Expected number of keys, at most 2000000000. Optional: when the "
          + "source holds more keys, or when it is not given, the filter is sized from the actual key "
          + "count. The operator's byte limits (BLOOM_MAX_SNAPSHOT_BYTES) still apply.")
  private Long expectedInsertions;

  @Default("String")
  @JsonPropertyDescription(
      "How keys are hashed: String (UTF-8, like Guava's "
          + "Funnels.stringFunnel(UTF_8)) or Long (like Funnels.longFunnel()).")
  private KeyType keyType = KeyType.STRING;

  @Default("Guava")
  @JsonPropertyDescription(
      "Bit layout of the published filter. Guava (default): byte for byte what Guava's "
          + "BloomFilter.writeTo writes (murmur3_128 hashing, k bits anywhere in the array). "
          + "SplitBlock: Apache Parquet's split-block Bloom filter (XXH64 hashing, one 32-byte block "
          + "per key), so a lookup touches one cache line and answers several times faster; it "
          + "needs more bits for the same false-positive rate (+10-25 % from 0.1 to 0.001, +38 % "
          + "at 1e-4, about twice as many at 1e-6), and readers in other languages that read "
          + "Parquet Bloom filters can read its bits. Readers older than this field refuse "
          + "SplitBlock snapshots (and keep serving what they have); changing it publishes a new "
          + "whole snapshot.")
  private FilterFormat format = FilterFormat.GUAVA;

  @Default("Fit")
  @JsonPropertyDescription(
      "SplitBlock only: how many 32-byte blocks the filter has. Fit (default): what the keys need "
          + "at falsePositiveRate. PowerOfTwo: that count rounded up to a power of two, at most "
          + "128 MiB, for readers of Parquet Bloom filters that accept only such bitsets (Arrow "
          + "C++, so pyarrow and Velox); up to twice the bytes of Fit, and a filter that would need "
          + "more than 128 MiB is not built (FilterTooLarge).")
  private SplitBlockSize splitBlockSize = SplitBlockSize.FIT;

  @Required
  @JsonPropertyDescription("Where the keys come from: exactly one source kind.")
  private SourceSpec source;

  @Pattern(DURATION_PATTERN)
  @Size(max = 32)
  @ValidationRule(
      value = "duration(self) >= duration('" + MIN_REFRESH_INTERVAL + "')",
      message = "must be at least " + MIN_REFRESH_INTERVAL)
  @JsonPropertyDescription(
      "How often the source is checked (e.g. 30s, 10m, 1h; at least 10s). A "
          + "ConfigMap or Secret source is rebuilt only when it changed; a source that cannot tell is "
          + "rebuilt every interval. Default: 1m for ConfigMap, Secret, HTTP and JDBC sources; inline "
          + "keys change with the resource itself.")
  private String refreshInterval;

  @JsonPropertyDescription("Snapshot tuning: chunk size and how long superseded versions are kept.")
  private SnapshotSpec snapshot;

  @JsonPropertyDescription(
      "Rollout controls: pause, pin a retained version, hold a build whose key count dropped.")
  private RolloutSpec rollout;

  @JsonPropertyDescription(
      "A change stream applied between full builds: new keys are published as deltas within"
          + " seconds (docs/changes.md).")
  private ChangesSpec changes;

  @Min(0)
  @JsonPropertyDescription(
      "How many malformed keys (lines that are not keys of keyType) a build "
          + "tolerates; above it the build fails and the last snapshot stays. Default 0: any "
          + "malformed key fails the build, so a filter never silently lacks keys.")
  private Long maxMalformedKeys;

  public Double getFalsePositiveRate() {
    return falsePositiveRate;
  }

  public void setFalsePositiveRate(Double falsePositiveRate) {
    this.falsePositiveRate = falsePositiveRate;
  }

  public Long getExpectedInsertions() {
    return expectedInsertions;
  }

  public void setExpectedInsertions(Long expectedInsertions) {
    this.expectedInsertions = expectedInsertions;
  }

  public KeyType getKeyType() {
    return keyType;
  }

  public void setKeyType(KeyType keyType) {
    this.keyType = keyType;
  }

  public FilterFormat getFormat() {
    return format;
  }

  public void setFormat(FilterFormat format) {
    this.format = format;
  }

  public SplitBlockSize getSplitBlockSize() {
    return splitBlockSize;
  }

  public void setSplitBlockSize(SplitBlockSize splitBlockSize) {
    this.splitBlockSize = splitBlockSize;
  }

  public SourceSpec getSource() {
    return source;
  }

  public void setSource(SourceSpec source) {
    this.source = source;
  }

  public String getRefreshInterval() {
    return refreshInterval;
  }

  public void setRefreshInterval(String refreshInterval) {
    this.refreshInterval = refreshInterval;
  }

  public Long getMaxMalformedKeys() {
    return maxMalformedKeys;
  }

  public void setMaxMalformedKeys(Long maxMalformedKeys) {
    this.maxMalformedKeys = maxMalformedKeys;
  }

  public SnapshotSpec getSnapshot() {
    return snapshot;
  }

  public void setSnapshot(SnapshotSpec snapshot) {
    this.snapshot = snapshot;
  }

  public ChangesSpec getChanges() {
    return changes;
  }

  public void setChanges(ChangesSpec changes) {
    this.changes = changes;
  }

  public RolloutSpec getRollout() {
    return rollout;
  }

  public void setRollout(RolloutSpec rollout) {
    this.rollout = rollout;
  }
}
