package io.bloomoperator.status;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.BloomFilterStatus;
import io.bloomoperator.api.BuildAttempt;
import io.bloomoperator.api.CanaryStatus;
import io.bloomoperator.api.HeldBuild;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.assemble.FilterBuilder;
import io.bloomoperator.metrics.BuildMetrics;
import io.bloomoperator.publish.PublishedSnapshot;
import io.bloomoperator.publish.RetainedVersions;
import io.bloomoperator.publish.VersionNumbering;
import io.bloomoperator.run.StatusDraft;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.time.Instant;

/**
 * The status one reconcile will write, filled in by its steps: a copy of the status it started
 * from, never the cached resource. {@link StatusReport} writes it once, with the run's outcome.
 */
public final class DraftStatus implements StatusDraft {

  private final BloomFilter filter;
  private final BuildMetrics metrics;
  private final Instant now;
  private final BloomFilterStatus status;
  private long seenVersion;

  DraftStatus(BloomFilter filter, BuildMetrics metrics, Instant now) {
    this.filter = filter;
    this.metrics = metrics;
    this.now = now;
    this.status =
        filter.getStatus() == null
            ? new BloomFilterStatus()
            : Serialization.clone(filter.getStatus());
    status.setObservedGeneration(filter.getMetadata().getGeneration());
    // Not ours to write: the reader aggregation (readers.ReaderRollouts) owns it, and this copy
    // may be older than what it wrote since.
    status.setReaders(null);
  }

  /** The status as it will be written. */
  BloomFilterStatus status() {
    return status;
  }

  @Override
  public void published(PublishedSnapshot current) {
    PublishedFields.write(status, filter.getMetadata().getName(), current);
    metrics.snapshot(filter, current.manifest(), current.publishedAt());
  }

  @Override
  public void built(FilterBuilder.Result built) {
    status.setRebuildRequest(RebuildRequest.of(filter));
    status.setKeysRead(built.keys());
    status.setMalformedKeys(built.malformed());
    status.setNullKeys(built.nulls());
    status.setProbableDuplicateKeys(built.probableDuplicates());
    status.setLastBuildTime(now.toString());
    status.setLastBuildDurationMillis(built.took().toMillis());
  }

  @Override
  public BuildAttempt buildStarting() {
    return BuildAttempts.starting(status, now);
  }

  /**
   * The last build's record, found unfinished after a restart: {@code crashes} in a row, no build
   * before {@code retryAfter}. The record is finished, so it counts only once.
   */
  public void crashRecorded(int crashes, Instant retryAfter) {
    BuildAttempts.crashed(status, now, crashes, retryAfter);
  }

  @Override
  public long lastKnownVersion() {
    return Math.max(seenVersion, ownVersion());
  }

  /**
   * The highest version the operator's own record (the status, its canary too) reports; 0: none.
   */
  private long ownVersion() {
    long own = status.getVersion() == null ? 0 : status.getVersion();
    // A canary's share may serve its version: the next one goes above it, whatever became of it.
    var canary = status.getCanary();
    return canary == null || canary.getVersion() == null ? own : Math.max(own, canary.getVersion());
  }

  @Override
  public void canary(CanaryStatus canary) {
    status.setCanary(canary);
  }

  @Override
  public CanaryStatus canary() {
    return status.getCanary();
  }

  @Override
  public void sawVersion(long version) {
    // Anyone who may write a ConfigMap or Lease writes these numbers: one far above the own record
    // would move every later version out of the range readers and stores accept.
    if (VersionNumbering.moves(ownVersion(), version)) {
      seenVersion = Math.max(seenVersion, version);
    }
  }

  @Override
  public void stream(io.bloomoperator.api.StreamStatus stream) {
    status.setStream(stream);
  }

  @Override
  public io.bloomoperator.api.StreamStatus stream() {
    return status.getStream();
  }

  /** Whether the condition {@code type} is False for the generation this status is written for. */
  public boolean problemOfThisGeneration(String type) {
    return status.getConditions().stream()
        .anyMatch(
            c ->
                type.equals(c.getType())
                    && "False".equals(c.getStatus())
                    && java.util.Objects.equals(
                        c.getObservedGeneration(), filter.getMetadata().getGeneration()));
  }

  /**
   * Sets the condition {@code type} to False with {@code reason} and {@code message} (its
   * transition time kept while it stays False), or removes it when {@code message} is null: for
   * conditions that only ever report a problem beside Ready.
   *
   * @return whether the condition turned False now (it was absent or not False before)
   */
  public boolean problem(String type, String reason, String message) {
    java.util.Optional<io.fabric8.kubernetes.api.model.Condition> was =
        status.getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
    status.getConditions().removeIf(c -> type.equals(c.getType()));
    if (message == null) {
      return false;
    }
    boolean turned = was.map(c -> !"False".equals(c.getStatus())).orElse(true);
    status
        .getConditions()
        .add(
            new io.fabric8.kubernetes.api.model.ConditionBuilder()
                .withType(type)
                .withStatus("False")
                .withReason(reason)
                .withMessage(message)
                .withObservedGeneration(filter.getMetadata().getGeneration())
                .withLastTransitionTime(
                    turned
                        ? now.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString()
                        : was.get().getLastTransitionTime())
                .build());
    return turned;
  }

  @Override
  public void held(HeldBuild held) {
    status.setHeld(held);
  }

  @Override
  public HeldBuild held() {
    return status.getHeld();
  }

  @Override
  public void retained(RetainedVersions retained) {
    status.setRetainedVersions(retained.manifests().isEmpty() ? null : retained.records());
  }

  @Override
  public void pinned(Long version) {
    status.setPinnedVersion(version);
  }

  @Override
  public void approved(String approval) {
    status.setApproved(approval);
  }
}
