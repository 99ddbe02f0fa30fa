package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * A superseded version whose chunks are kept (spec.snapshot.keepVersions), so that it can be served
 * again without a rebuild. {@code manifestDigest} is the operator's own record of its manifest: a
 * retained manifest in the cluster that does not match it is never published again.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RetainedVersion {

  @JsonPropertyDescription("The version number it was published as.")
  private Long version;

  @JsonPropertyDescription("Keys it holds.")
  private Long keys;

  @JsonPropertyDescription("When it was published (its manifest's createdAt).")
  private String createdAt;

  @JsonPropertyDescription("sha256 of its serialized snapshot.")
  private String sha256;

  @JsonPropertyDescription("SHA-256 of its manifest as the operator retained it.")
  private String manifestDigest;

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

  public String getCreatedAt() {
    return createdAt;
  }

  public void setCreatedAt(String createdAt) {
    this.createdAt = createdAt;
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
}
