package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Objects;

/**
 * The operator's record of the last build it started for a filter, written to the status before the
 * source is read. A build whose record has no later finish, started by an operator process that is
 * gone, made the operator die (out of memory, killed): it is retried only after a backoff.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BuildAttempt {

  @JsonPropertyDescription("When the last build started (RFC 3339), before its source was read.")
  private String startedAt;

  @JsonPropertyDescription(
      "When the last build ended, successfully or not (RFC 3339); earlier than startedAt while a"
          + " build runs, or when the operator stopped during it.")
  private String finishedAt;

  @JsonPropertyDescription(
      "Builds in a row during which the operator stopped (crashed, was killed); 0 after a build"
          + " that ended.")
  private Integer crashes;

  @JsonPropertyDescription(
      "After a build during which the operator stopped: no build starts before this time"
          + " (RFC 3339).")
  private String retryAfter;

  public String getStartedAt() {
    return startedAt;
  }

  public void setStartedAt(String startedAt) {
    this.startedAt = startedAt;
  }

  public String getFinishedAt() {
    return finishedAt;
  }

  public void setFinishedAt(String finishedAt) {
    this.finishedAt = finishedAt;
  }

  public Integer getCrashes() {
    return crashes;
  }

  public void setCrashes(Integer crashes) {
    this.crashes = crashes;
  }

  public String getRetryAfter() {
    return retryAfter;
  }

  public void setRetryAfter(String retryAfter) {
    this.retryAfter = retryAfter;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BuildAttempt other
        && Objects.equals(startedAt, other.startedAt)
        && Objects.equals(finishedAt, other.finishedAt)
        && Objects.equals(crashes, other.crashes)
        && Objects.equals(retryAfter, other.retryAfter);
  }

  @Override
  public int hashCode() {
    return Objects.hash(startedAt, finishedAt, crashes, retryAfter);
  }
}
