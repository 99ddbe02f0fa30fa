package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Size;
import io.fabric8.generator.annotation.ValidationRule;

/** Snapshot tuning. Defaults suit almost everyone. */
public class SnapshotSpec {

  /** ConfigMaps are limited to 1 MiB of decoded data; this leaves room for the object itself. */
  public static final int MAX_CHUNK_BYTES = 1_000_000;

  public static final int DEFAULT_CHUNK_BYTES = MAX_CHUNK_BYTES;
  public static final String DEFAULT_RETAIN = "2m";

  /** Longer grace periods would only keep superseded chunks in etcd. */
  public static final java.time.Duration MAX_RETAIN = java.time.Duration.ofHours(1);

  /** Each retained version holds chunks in etcd: a handful is enough to undo a bad refresh. */
  public static final int MAX_KEEP_VERSIONS = 10;

  @Min(1024)
  @Max(MAX_CHUNK_BYTES)
  @JsonPropertyDescription("Bytes per chunk ConfigMap, 1024..1000000 (default 1000000).")
  private Integer chunkSizeBytes;

  @Pattern(BloomFilterSpec.DURATION_PATTERN)
  @Size(max = 32)
  @ValidationRule(value = "duration(self) <= duration('1h')", message = "must be at most 1h")
  @JsonPropertyDescription(
      "How long the chunks of a superseded version are kept so that readers "
          + "still fetching them can finish (default 2m, at most 1h).")
  private String retainPreviousFor;

  @Pattern("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
  @JsonPropertyDescription(
      "Name of a BloomStore (defined by the cluster administrator) to keep the chunks in instead"
          + " of ConfigMaps; the manifest stays a ConfigMap. Unset: ConfigMaps.")
  private String store;

  @Min(0)
  @Max(MAX_KEEP_VERSIONS)
  @JsonPropertyDescription(
      "How many superseded versions keep their chunks so that spec.rollout.pinVersion can serve"
          + " them again without a rebuild (0..10, default 0). Counted against the namespace's"
          + " snapshot budget.")
  private Integer keepVersions;

  public Integer getKeepVersions() {
    return keepVersions;
  }

  public void setKeepVersions(Integer keepVersions) {
    this.keepVersions = keepVersions;
  }

  public Integer getChunkSizeBytes() {
    return chunkSizeBytes;
  }

  public void setChunkSizeBytes(Integer chunkSizeBytes) {
    this.chunkSizeBytes = chunkSizeBytes;
  }

  public String getStore() {
    return store;
  }

  public void setStore(String store) {
    this.store = store;
  }

  public String getRetainPreviousFor() {
    return retainPreviousFor;
  }

  public void setRetainPreviousFor(String retainPreviousFor) {
    this.retainPreviousFor = retainPreviousFor;
  }
}
