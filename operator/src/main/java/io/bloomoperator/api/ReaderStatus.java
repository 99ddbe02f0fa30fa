package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What the filter's readers report they serve (docs/reader-protocol.md), counted by the operator
 * from the reader reports of live pods in the filter's namespace. Counts and codes only.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ReaderStatus {

  @JsonPropertyDescription("The published version the counts compare with.")
  private Long version;

  @JsonPropertyDescription("Readers that report, from live pods of the namespace.")
  private Integer total;

  @JsonPropertyDescription("Readers serving the published version (with a recent heartbeat).")
  private Integer current;

  @JsonPropertyDescription("Readers without a heartbeat within the bound they declared.")
  private Integer stale;

  @JsonPropertyDescription("Readers failing to load a newer version than the one they serve.")
  private Integer failing;

  @JsonPropertyDescription("current/total, for kubectl get.")
  private String serving;

  @JsonPropertyDescription(
      "Readers (with a recent heartbeat) on another version than the published one, by version,"
          + " newest first, at most 10 versions.")
  private List<ReaderCount> otherVersions = new ArrayList<>();

  @JsonPropertyDescription("Failing readers by LoadFailureReason code.")
  private List<ReaderCount> failingReasons = new ArrayList<>();

  @JsonPropertyDescription("When the rollout of the published version started (RFC 3339).")
  private String rolloutStartedAt;

  @JsonPropertyDescription(
      "When every reader with a recent heartbeat served the published version (RFC 3339).")
  private String rolloutCompletedAt;

  @JsonPropertyDescription(
      "True once the rollout of the published version stalled: readers failing to load it, or"
          + " not complete within BLOOM_ROLLOUT_STALL_AFTER.")
  private Boolean rolloutStalled;

  public Long getVersion() {
    return version;
  }

  public void setVersion(Long version) {
    this.version = version;
  }

  public Integer getTotal() {
    return total;
  }

  public void setTotal(Integer total) {
    this.total = total;
  }

  public Integer getCurrent() {
    return current;
  }

  public void setCurrent(Integer current) {
    this.current = current;
  }

  public Integer getStale() {
    return stale;
  }

  public void setStale(Integer stale) {
    this.stale = stale;
  }

  public Integer getFailing() {
    return failing;
  }

  public void setFailing(Integer failing) {
    this.failing = failing;
  }

  public String getServing() {
    return serving;
  }

  public void setServing(String serving) {
    this.serving = serving;
  }

  public List<ReaderCount> getOtherVersions() {
    return otherVersions;
  }

  public void setOtherVersions(List<ReaderCount> otherVersions) {
    this.otherVersions = otherVersions;
  }

  public List<ReaderCount> getFailingReasons() {
    return failingReasons;
  }

  public void setFailingReasons(List<ReaderCount> failingReasons) {
    this.failingReasons = failingReasons;
  }

  public String getRolloutStartedAt() {
    return rolloutStartedAt;
  }

  public void setRolloutStartedAt(String rolloutStartedAt) {
    this.rolloutStartedAt = rolloutStartedAt;
  }

  public String getRolloutCompletedAt() {
    return rolloutCompletedAt;
  }

  public void setRolloutCompletedAt(String rolloutCompletedAt) {
    this.rolloutCompletedAt = rolloutCompletedAt;
  }

  public Boolean getRolloutStalled() {
    return rolloutStalled;
  }

  public void setRolloutStalled(Boolean rolloutStalled) {
    this.rolloutStalled = rolloutStalled;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ReaderStatus other
        && Objects.equals(version, other.version)
        && Objects.equals(total, other.total)
        && Objects.equals(current, other.current)
        && Objects.equals(stale, other.stale)
        && Objects.equals(failing, other.failing)
        && Objects.equals(serving, other.serving)
        && Objects.equals(otherVersions, other.otherVersions)
        && Objects.equals(failingReasons, other.failingReasons)
        && Objects.equals(rolloutStartedAt, other.rolloutStartedAt)
        && Objects.equals(rolloutCompletedAt, other.rolloutCompletedAt)
        && Objects.equals(rolloutStalled, other.rolloutStalled);
  }

  @Override
  public int hashCode() {
    return Objects.hash(version, total, current, stale, failing, serving);
  }
}
