package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/**
 * How new builds reach readers: held while paused or pinned, or when their key count dropped more
 * than the author allows. A held build is recorded in {@code status.held}; its chunks are not
 * written (no etcd bytes, no namespace budget) and the build is repeated from the source when it is
 * released.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RolloutSpec {

  /** Whole percent: a finer guard would trip on normal churn. */
  public static final int MAX_DROP_PERCENT = 100;

  @JsonPropertyDescription(
      "Hold new builds: they still run and are recorded in status.held, readers keep the published"
          + " version. Setting it back to false publishes the source's content as it is then.")
  private Boolean paused;

  @Min(1)
  @JsonPropertyDescription(
      "Serve the payload of this retained version (status.retainedVersions, kept by"
          + " spec.snapshot.keepVersions) without a rebuild: the operator publishes it as a new"
          + " version number, so readers load it within seconds. New builds are held while it is"
          + " set. Remove it to publish the source's content again.")
  private Long pinVersion;

  @Min(1)
  @Max(MAX_DROP_PERCENT)
  @JsonPropertyDescription(
      "Hold a new build whose key count is more than this many percent below the published"
          + " version's (1..100), instead of publishing it (reason KeyCountDropped). Approve it with"
          + " `kubectl bloom approve` (annotation bloomoperator.io/approve set to status.held.sha256).")
  private Integer maxKeyCountDropPercent;

  @JsonPropertyDescription(
      "Send each new version first to a share of the readers (canary, status.canary), and to every"
          + " reader once the share served it for holdFor without a failure to load it; a failure"
          + " halts it (reason CanaryHalted) and the stable version keeps serving. Promote or abort"
          + " by hand with `kubectl bloom promote|abort`.")
  private CanarySpec canary;

  public CanarySpec getCanary() {
    return canary;
  }

  public void setCanary(CanarySpec canary) {
    this.canary = canary;
  }

  public Boolean getPaused() {
    return paused;
  }

  public void setPaused(Boolean paused) {
    this.paused = paused;
  }

  public Long getPinVersion() {
    return pinVersion;
  }

  public void setPinVersion(Long pinVersion) {
    this.pinVersion = pinVersion;
  }

  public Integer getMaxKeyCountDropPercent() {
    return maxKeyCountDropPercent;
  }

  public void setMaxKeyCountDropPercent(Integer maxKeyCountDropPercent) {
    this.maxKeyCountDropPercent = maxKeyCountDropPercent;
  }
}
