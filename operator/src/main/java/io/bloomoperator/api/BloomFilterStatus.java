package io.bloomoperator.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.List;

/** What the operator observed and published, following the Kubernetes API conventions. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class BloomFilterStatus {

  @JsonPropertyDescription("The metadata.generation this status describes.")
  private Long observedGeneration;

  @JsonPropertyDescription(
      "Ready is True while a verified snapshot of the current spec is "
          + "published; when False its reason says why.")
  private List<Condition> conditions = new ArrayList<>();

  @JsonPropertyDescription("What the operator is doing now: Building, Idle or Failed.")
  private String phase;

  @JsonPropertyDescription("Keys read so far by the build in progress.")
  private Long keysRead;

  @JsonPropertyDescription("Version of the published snapshot; increases with every publish.")
  private Long version;

  @JsonPropertyDescription("Name of the manifest ConfigMap that describes the published version.")
  private String manifest;

  @JsonPropertyDescription("Keys inserted into the published filter (duplicates included).")
  private Long keys;

  @JsonPropertyDescription("Malformed keys skipped by the last build (within maxMalformedKeys).")
  private Long malformedKeys;

  @JsonPropertyDescription("NULL values the last build's source produced (skipped).")
  private Long nullKeys;

  @JsonPropertyDescription(
      "Keys of the last build whose bits were all set already: duplicates, "
          + "plus the few keys that were false positives at insertion time.")
  private Long probableDuplicateKeys;

  @JsonPropertyDescription("Bits in the published filter.")
  private Long numBits;

  @JsonPropertyDescription("Hash functions of the published filter.")
  private Integer numHashFunctions;

  @JsonPropertyDescription("Bit layout of the published filter: Guava or SplitBlock.")
  private String format;

  @JsonPropertyDescription("Expected false-positive probability at the published key count.")
  private Double expectedFpp;

  @JsonPropertyDescription("Serialized snapshot size in bytes.")
  private Long sizeBytes;

  @JsonPropertyDescription("Serialized snapshot size, human readable.")
  private String size;

  @JsonPropertyDescription(
      "Number of chunk ConfigMaps the published manifest names (its base and its deltas).")
  private Integer chunks;

  @JsonPropertyDescription(
      "Version whose whole snapshot the published chain starts from (= version when the published "
          + "version is a whole snapshot).")
  private Long baseVersion;

  @JsonPropertyDescription("Number of deltas after the base in the published chain.")
  private Integer deltas;

  @JsonPropertyDescription(
      "Bytes the last publish wrote: the delta's size, or the whole snapshot's for a new base.")
  private Long lastPublishBytes;

  @JsonPropertyDescription("sha256 of the whole serialized snapshot (hex).")
  private String sha256;

  @JsonPropertyDescription(
      "SHA-256 of manifest.json and manifest.sig as the operator last wrote them: a published "
          + "manifest that does not match is not built on and is replaced by a new version.")
  private String manifestDigest;

  @JsonPropertyDescription(
      "SHA-256 of the build record annotations (source token, spec generation, built-at) as the "
          + "operator last wrote them: a build record that does not match is ignored and the "
          + "filter rebuilt.")
  private String buildRecordDigest;

  @JsonPropertyDescription(
      "Opaque token of the source content the published version was built "
          + "from (e.g. a resourceVersion); an unchanged token skips rebuilds.")
  private String sourceToken;

  @JsonPropertyDescription("The bloomoperator.io/rebuild annotation value last acted on.")
  private String rebuildRequest;

  @JsonPropertyDescription("When the last successful build finished (RFC 3339).")
  private String lastBuildTime;

  @JsonPropertyDescription("How long the last successful build took, in milliseconds.")
  private Long lastBuildDurationMillis;

  @JsonPropertyDescription(
      "The last build the operator started, recorded before its source was read: a build during"
          + " which the operator stopped is backed off after a restart (reason BuildCrashed).")
  private BuildAttempt buildAttempt;

  @JsonPropertyDescription(
      "The newest build that was not published (paused, pinned, or its key count dropped too"
          + " far); absent when the published version is the newest build.")
  private HeldBuild held;

  @JsonPropertyDescription(
      "The change stream of spec.changes: its position, lag, last delta and pending deletions.")
  private StreamStatus stream;

  @JsonPropertyDescription(
      "Superseded versions whose chunks are kept (spec.snapshot.keepVersions), newest first:"
          + " spec.rollout.pinVersion can name them.")
  private List<RetainedVersion> retainedVersions;

  @JsonPropertyDescription(
      "The retained version whose payload the published version serves, while spec.rollout"
          + ".pinVersion is set.")
  private Long pinnedVersion;

  @JsonPropertyDescription("The bloomoperator.io/approve annotation value last acted on.")
  private String approved;

  @JsonPropertyDescription(
      "The canary (spec.rollout.canary): the version a share of the readers serves beside"
          + " `version`, with their counts; or the content of a halted or aborted canary, held"
          + " until the source changes. Absent when there is none.")
  private CanaryStatus canary;

  public CanaryStatus getCanary() {
    return canary;
  }

  public void setCanary(CanaryStatus canary) {
    this.canary = canary;
  }

  public StreamStatus getStream() {
    return stream;
  }

  public void setStream(StreamStatus stream) {
    this.stream = stream;
  }

  public HeldBuild getHeld() {
    return held;
  }

  public void setHeld(HeldBuild held) {
    this.held = held;
  }

  public List<RetainedVersion> getRetainedVersions() {
    return retainedVersions;
  }

  public void setRetainedVersions(List<RetainedVersion> retainedVersions) {
    this.retainedVersions = retainedVersions;
  }

  public Long getPinnedVersion() {
    return pinnedVersion;
  }

  public void setPinnedVersion(Long pinnedVersion) {
    this.pinnedVersion = pinnedVersion;
  }

  public String getApproved() {
    return approved;
  }

  public void setApproved(String approved) {
    this.approved = approved;
  }

  @JsonPropertyDescription(
      "What the readers report they serve (docs/reader-protocol.md); written by the operator's"
          + " reader aggregation, never by a build.")
  private ReaderStatus readers;

  public ReaderStatus getReaders() {
    return readers;
  }

  public void setReaders(ReaderStatus readers) {
    this.readers = readers;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }

  public String getPhase() {
    return phase;
  }

  public void setPhase(String phase) {
    this.phase = phase;
  }

  public Long getKeysRead() {
    return keysRead;
  }

  public void setKeysRead(Long keysRead) {
    this.keysRead = keysRead;
  }

  public Long getVersion() {
    return version;
  }

  public void setVersion(Long version) {
    this.version = version;
  }

  public String getManifest() {
    return manifest;
  }

  public void setManifest(String manifest) {
    this.manifest = manifest;
  }

  public Long getKeys() {
    return keys;
  }

  public void setKeys(Long keys) {
    this.keys = keys;
  }

  public Long getMalformedKeys() {
    return malformedKeys;
  }

  public void setMalformedKeys(Long malformedKeys) {
    this.malformedKeys = malformedKeys;
  }

  public Long getNullKeys() {
    return nullKeys;
  }

  public void setNullKeys(Long nullKeys) {
    this.nullKeys = nullKeys;
  }

  public Long getProbableDuplicateKeys() {
    return probableDuplicateKeys;
  }

  public void setProbableDuplicateKeys(Long probableDuplicateKeys) {
    this.probableDuplicateKeys = probableDuplicateKeys;
  }

  public Long getNumBits() {
    return numBits;
  }

  public void setNumBits(Long numBits) {
    this.numBits = numBits;
  }

  public Integer getNumHashFunctions() {
    return numHashFunctions;
  }

  public void setNumHashFunctions(Integer numHashFunctions) {
    this.numHashFunctions = numHashFunctions;
  }

  public String getFormat() {
    return format;
  }

  public void setFormat(String format) {
    this.format = format;
  }

  public Double getExpectedFpp() {
    return expectedFpp;
  }

  public void setExpectedFpp(Double expectedFpp) {
    this.expectedFpp = expectedFpp;
  }

  public Long getSizeBytes() {
    return sizeBytes;
  }

  public void setSizeBytes(Long sizeBytes) {
    this.sizeBytes = sizeBytes;
  }

  public String getSize() {
    return size;
  }

  public void setSize(String size) {
    this.size = size;
  }

  public Integer getChunks() {
    return chunks;
  }

  public void setChunks(Integer chunks) {
    this.chunks = chunks;
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

  public String getBuildRecordDigest() {
    return buildRecordDigest;
  }

  public void setBuildRecordDigest(String buildRecordDigest) {
    this.buildRecordDigest = buildRecordDigest;
  }

  public String getSourceToken() {
    return sourceToken;
  }

  public void setSourceToken(String sourceToken) {
    this.sourceToken = sourceToken;
  }

  public String getRebuildRequest() {
    return rebuildRequest;
  }

  public void setRebuildRequest(String rebuildRequest) {
    this.rebuildRequest = rebuildRequest;
  }

  public String getLastBuildTime() {
    return lastBuildTime;
  }

  public void setLastBuildTime(String lastBuildTime) {
    this.lastBuildTime = lastBuildTime;
  }

  public Long getLastBuildDurationMillis() {
    return lastBuildDurationMillis;
  }

  public void setLastBuildDurationMillis(Long lastBuildDurationMillis) {
    this.lastBuildDurationMillis = lastBuildDurationMillis;
  }

  public Long getBaseVersion() {
    return baseVersion;
  }

  public void setBaseVersion(Long baseVersion) {
    this.baseVersion = baseVersion;
  }

  public Integer getDeltas() {
    return deltas;
  }

  public void setDeltas(Integer deltas) {
    this.deltas = deltas;
  }

  public Long getLastPublishBytes() {
    return lastPublishBytes;
  }

  public void setLastPublishBytes(Long lastPublishBytes) {
    this.lastPublishBytes = lastPublishBytes;
  }

  public BuildAttempt getBuildAttempt() {
    return buildAttempt;
  }

  public void setBuildAttempt(BuildAttempt buildAttempt) {
    this.buildAttempt = buildAttempt;
  }
}
