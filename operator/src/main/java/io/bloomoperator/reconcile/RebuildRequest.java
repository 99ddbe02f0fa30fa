package io.bloomoperator.reconcile;

import io.bloomoperator.api.BloomFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.util.Objects;

/**
 * On-demand rebuilds: setting the annotation {@value #ANNOTATION} to a new value (e.g. a timestamp)
 * makes the operator rebuild from the source even when the source says it is unchanged. The value
 * last acted on is kept in {@code status.rebuildRequest}.
 *
 * <p>Also the update filter of the controller: reconcile on spec changes (generation) and on a new
 * rebuild request, approval ({@link RolloutGate}) or canary promote/abort ({@link CanaryRollout}),
 * not on the operator's own status writes.
 */
public final class RebuildRequest implements OnUpdateFilter<BloomFilter> {

  public static final String ANNOTATION = "bloomoperator.io/rebuild";

  /** The annotation's value, or null. */
  public static String of(BloomFilter filter) {
    var annotations = filter.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(ANNOTATION);
  }

  /** True when the resource carries a rebuild request that has not been acted on yet. */
  public static boolean pending(BloomFilter filter) {
    String requested = of(filter);
    return requested != null
        && (filter.getStatus() == null
            || !requested.equals(filter.getStatus().getRebuildRequest()));
  }

  @Override
  public boolean accept(BloomFilter newResource, BloomFilter oldResource) {
    return !Objects.equals(
            newResource.getMetadata().getGeneration(), oldResource.getMetadata().getGeneration())
        || !Objects.equals(of(newResource), of(oldResource))
        || !Objects.equals(RolloutGate.approval(newResource), RolloutGate.approval(oldResource))
        || !Objects.equals(CanaryRollout.request(newResource), CanaryRollout.request(oldResource))
        // A deletion: the store-objects finalizer has work to do.
        || newResource.isMarkedForDeletion() != oldResource.isMarkedForDeletion();
  }
}
