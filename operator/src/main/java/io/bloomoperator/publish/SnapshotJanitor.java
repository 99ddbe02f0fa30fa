package io.bloomoperator.publish;

import io.bloomoperator.snapshot.ChunkStore.Part;
import io.bloomoperator.snapshot.Manifest;
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
 *
 * <p>What the published (or announced canary) manifest names is kept in every store the clean-up
 * touches, former ones included: a store's name says nothing about where its objects are, and two
 * BloomStores may share one location.
 */
public final class SnapshotJanitor {

  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(SnapshotJanitor.class);

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
      throws IOException, PublishException {
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
      throws IOException, PublishException {
    if (snapshot == null || snapshot.manifest() == null) {
      store.chunks().deleteExcept(Set.of());
      cleanFormer(store, Set.of(), null);
      return new Cleaned(snapshot, Optional.empty());
    }
    Optional<Instant> until = snapshot.retainedUntil(retainPrevious);
    Optional<Instant> running = until.filter(now::isBefore);
    List<Long> retained = running.isPresent() ? snapshot.previousVersions() : List.of();
    Set<Part> keep = new LinkedHashSet<>(PublishPlan.keep(snapshot.manifest(), retained));
    Set<Part> retainedForRollback =
        RetainedVersions.of(snapshot.configMap()).first(keepVersions).parts();
    keep.addAll(retainedForRollback);
    // The canary's share reads these; an edited canary can only keep more of the filter's chunks.
    Manifest canary = SnapshotStore.canaryOf(snapshot);
    if (canary != null) {
      keep.addAll(Part.of(canary));
    }
    store.chunks().deleteExcept(keep, snapshot.manifest());
    // Former stores keep what the current one keeps: the published version's and the canary's
    // parts too. A filter that really moved has none of them there (its publish in the new store
    // is a new version); a "former" store that is another name of the current store's location
    // (or a chunk store the published manifest still reads) holds exactly the objects readers load.
    boolean formerCleaned = cleanFormer(store, keep, snapshot.manifest());
    // Forgotten only once the former stores are clean: the manifest is the only record of them.
    PublishedSnapshot state =
        until.isPresent() && running.isEmpty() && formerCleaned
            ? store.apply(PublishPlan.forget(snapshot.manifest()), snapshot, null, null).state()
            : snapshot;
    return new Cleaned(state, running.map(u -> Duration.between(now, u)));
  }

  /**
   * Deletes from each former chunk store all but {@code keep}; one that fails (an object store that
   * is down) does not hold up the filter, it is tried again at the next clean.
   *
   * @return whether every former store was cleaned
   */
  private static boolean cleanFormer(
      SnapshotStore store, Set<Part> keep, io.bloomoperator.snapshot.Manifest published) {
    boolean all = true;
    for (var former : store.backend().former()) {
      try {
        former.deleteExcept(keep, published);
      } catch (IOException e) {
        LOG.warn("former chunks not deleted yet: {}", e.getMessage());
        all = false;
      }
    }
    return all;
  }
}
