package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.api.RebuildRequest;
import io.bloomoperator.rollout.Canaries;
import io.bloomoperator.rollout.RolloutGate;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Objects;

/**
 * The update filter of the controller: reconcile on spec changes (generation) and on a new rebuild
 * request ({@link RebuildRequest}), approval ({@link RolloutGate}) or canary promote/abort ({@link
 * Canaries}), not on the operator's own status writes.
 */
public final class ReconcileTriggers implements OnUpdateFilter<BloomFilter> {

  @Override
  public boolean accept(BloomFilter newResource, BloomFilter oldResource) {
    return !Objects.equals(
            newResource.getMetadata().getGeneration(), oldResource.getMetadata().getGeneration())
        || !Objects.equals(RebuildRequest.of(newResource), RebuildRequest.of(oldResource))
        || !Objects.equals(RolloutGate.approval(newResource), RolloutGate.approval(oldResource))
        || !Objects.equals(Canaries.request(newResource), Canaries.request(oldResource))
        // A deletion: the store-objects finalizer has work to do.
        || newResource.isMarkedForDeletion() != oldResource.isMarkedForDeletion();
  }
}
