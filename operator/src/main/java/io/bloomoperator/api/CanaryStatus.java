package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * The canary of the filter: the version its share serves beside the stable one ({@code state}
 * Running), or the content of a canary that was halted or aborted (held until the source's content
 * changes). The operator's own record: a canary in the manifest ConfigMap that does not match it is
 * withdrawn, never promoted.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class CanaryStatus {

  /** The share serves the canary; it is judged at every status interval. */
  public static final String RUNNING = "Running";

  /** Readers of the share failed to load it: withdrawn, its content is held. */
  public static final String HALTED = "Halted";

  /** Withdrawn by hand ({@code kubectl bloom abort}): its content is held. */
  public static final String ABORTED = "Aborted";

  @JsonPropertyDescription("Running, Halted or Aborted.")
  private String state;

  @JsonPropertyDescription("The canary's version number.")
  private Long version;

  @JsonPropertyDescription("Keys in the canary.")
  private Long keys;

  @JsonPropertyDescription("sha256 of the canary's serialized snapshot.")
  private String sha256;

  @JsonPropertyDescription("SHA-256 of the canary manifest as the operator wrote it.")
  private String manifestDigest;

  @JsonPropertyDescription("The share it was announced to, in percent.")
  private Integer percent;

  @JsonPropertyDescription("The hold time it was announced with.")
  private String holdFor;

  @JsonPropertyDescription("When it was announced (RFC 3339).")
  private String since;

  @JsonPropertyDescription("Live readers (recent heartbeat) whose pod is in the share.")
  private Integer readers;

  @JsonPropertyDescription("Readers of the share serving the canary.")
  private Integer onCanary;

  @JsonPropertyDescription("Readers of the share failing to load the canary.")
  private Integer failing;

  @JsonPropertyDescription("The LoadFailureReason code of the first failing reader, if any.")
  private String failingReason;

  @JsonPropertyDescription("Change token of the source the canary was built from.")
  private String sourceToken;

  @JsonPropertyDescription("The spec generation the canary was built for.")
  private Long specGeneration;

  @JsonPropertyDescription("When the canary's build finished (RFC 3339).")
  private String builtAt;

  public String getState() {
    return state;
  }

  public void setState(String state) {
    this.state = state;
  }

  public Long getVersion() {
    return version;
  }

  public void setVersion(Long version) {
    this.version = version;
  }

  public Long getKeys() {
    return keys;
  }

  public void setKeys(Long keys) {
    this.keys = keys;
  }

  public String getSha256() {
    return sha256;
  }

  public void setSha256(String sha256) {
    this.sha256 = sha256;
  }

  public String getManifestDigest() {
    return manifestDigest;
  }

  public void setManifestDigest(String manifestDigest) {
    this.manifestDigest = manifestDigest;
  }

  public Integer getPercent() {
    return percent;
  }

  public void setPercent(Integer percent) {
    this.percent = percent;
  }

  public String getHoldFor() {
    return holdFor;
  }

  public void setHoldFor(String holdFor) {
    this.holdFor = holdFor;
  }

  public String getSince() {
    return since;
  }

  public void setSince(String since) {
    this.since = since;
  }

  public Integer getReaders() {
    return readers;
  }

  public void setReaders(Integer readers) {
    this.readers = readers;
  }

  public Integer getOnCanary() {
    return onCanary;
  }

  public void setOnCanary(Integer onCanary) {
    this.onCanary = onCanary;
  }

  public Integer getFailing() {
    return failing;
  }

  public void setFailing(Integer failing) {
    this.failing = failing;
  }

  public String getFailingReason() {
    return failingReason;
  }

  public void setFailingReason(String failingReason) {
    this.failingReason = failingReason;
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

  public String getBuiltAt() {
    return builtAt;
  }

  public void setBuiltAt(String builtAt) {
    this.builtAt = builtAt;
  }
}
