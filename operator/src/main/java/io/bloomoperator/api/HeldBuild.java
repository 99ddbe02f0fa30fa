package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * A build the operator finished and did not publish (paused, pinned, or its key count dropped too
 * far). Only figures, never content: what an approval names and what a status reader compares.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class HeldBuild {

  @JsonPropertyDescription("Why it is held: RolloutPaused, RolloutPinned or KeyCountDropped.")
  private String reason;

  @JsonPropertyDescription("Keys in the held build (duplicates included).")
  private Long keys;

  @JsonPropertyDescription("Keys of the published version it was compared with.")
  private Long publishedKeys;

  @JsonPropertyDescription(
      "sha256 of the held build's serialized snapshot: the value bloomoperator.io/approve names.")
  private String sha256;

  @JsonPropertyDescription("When the held build finished (RFC 3339).")
  private String builtAt;

  @JsonPropertyDescription("The source token the held build read, if the source has one.")
  private String sourceToken;

  @JsonPropertyDescription("The metadata.generation the held build was made for.")
  private Long specGeneration;

  public String getReason() {
    return reason;
  }

  public void setReason(String reason) {
    this.reason = reason;
  }

  public Long getKeys() {
    return keys;
  }

  public void setKeys(Long keys) {
    this.keys = keys;
  }

  public Long getPublishedKeys() {
    return publishedKeys;
  }

  public void setPublishedKeys(Long publishedKeys) {
    this.publishedKeys = publishedKeys;
  }

  public String getSha256() {
    return sha256;
  }

  public void setSha256(String sha256) {
    this.sha256 = sha256;
  }

  public String getBuiltAt() {
    return builtAt;
  }

  public void setBuiltAt(String builtAt) {
    this.builtAt = builtAt;
  }

  public String getSourceToken() {
    return sourceToken;
  }

  public void setSourceToken(String sourceToken) {
    this.sourceToken = sourceToken;
  }

  public Long getSpecGeneration() {
    return specGeneration;
  }

  public void setSpecGeneration(Long specGeneration) {
    this.specGeneration = specGeneration;
  }
}
