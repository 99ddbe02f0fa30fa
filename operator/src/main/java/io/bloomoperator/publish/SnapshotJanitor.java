package io.bloomoperator.publish;

import io.bloomoperator.snapshot.ChunkStore.Part;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Deletes chunks that no reader needs: every chunk except those the published manifest names and,
 * for their grace period, those of the versions it retains. That also removes chunks left by a
 * failed publish or an operator that died mid-publish, because their version is never the published
 * one. Deletes go through the filter's {@link io.bloomoperator.snapshot.ChunkStore}, which touches
 * only chunks the filter owns; when the grace period is over, the manifest forgets the retained
 * versions through the store's one manifest writer.
 */
public final class SnapshotJanitor {

  private SnapshotJanitor() {}

  /**
   * What a clean did.
   *
   * @param state the published state afterwards (the manifest as rewritten when the retained
   *     versions were forgotten)
   * @param graceLeft how long until the retained versions' grace period ends, while it is running
   */
  public record Cleaned(PublishedSnapshot state, Optional<Duration> graceLeft) {}

  /**
   * @param snapshot the published state as {@link OwnManifests} trusts it (null: no manifest
   *     ConfigMap, so every chunk of the filter goes; without a manifest: the same)
   */
  public static Cleaned clean(
      SnapshotStore store, PublishedSnapshot snapshot, Duration retainPrevious, Instant now)
      throws IOException {
    return clean(store, snapshot, retainPrevious, 0, now);
  }

  /**
   * As {@link #clean(SnapshotStore, PublishedSnapshot, Duration, Instant)}, also keeping the chunks
   * of the first {@code keepVersions} versions the manifest ConfigMap retains ({@link
   * RetainedVersions}); those beyond (keepVersions was lowered) lose their chunks.
   */
  public static Cleaned clean(
      SnapshotStore store,
      PublishedSnapshot snapshot,
      Duration retainPrevious,
      int keepVersions,
      Instant now)
      throws IOException {
    if (snapshot == null || snapshot.manifest() == null) {
      store.chunks().deleteExcept(Set.of());
      return new Cleaned(snapshot, Optional.empty());
    }
    Optional<Instant> until = snapshot.retainedUntil(retainPrevious);
    Optional<Instant> running = until.filter(now::isBefore);
    PublishedSnapshot state =
        until.isPresent() && running.isEmpty() ? store.forgetPrevious(snapshot) : snapshot;
    List<Long> retained = running.isPresent() ? snapshot.previousVersions() : List.of();
    Set<Part> keep = new LinkedHashSet<>(PublishPlan.keep(snapshot.manifest(), retained));
    keep.addAll(RetainedVersions.of(snapshot.configMap()).first(keepVersions).parts());
    store.chunks().deleteExcept(keep);
    return new Cleaned(state, running.map(u -> Duration.between(now, u)));
  }
}
