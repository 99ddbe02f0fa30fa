package io.bloomoperator.publish;

import io.bloomoperator.snapshot.ChunkStore;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where a filter's chunks live and what writing them there costs: the one seam between the publish
 * code and a transport. {@link ConfigMapBackend} (the default: chunk ConfigMaps in etcd) and the
 * object store's backend ({@code io.bloomoperator.backend.ObjectStoreBackend}) implement it; the
 * manifest is a ConfigMap with either. Nothing outside the implementations and the factory that
 * picks one ({@code io.bloomoperator.backend.SnapshotBackends}) tells them apart.
 */
public interface SnapshotBackend {

  /** The store new chunks are written to and the published ones read from. */
  ChunkStore chunks();

  /**
   * The object store manifests name as their chunks' place ({@code Manifest.store}); null: chunk
   * ConfigMaps beside the manifest.
   */
  String location();

  /**
   * Where the filter's chunks were before they moved here: cleaned up like the chunks of replaced
   * versions, and kept only while a named or retained version needs them.
   */
  List<ChunkStore> former();

  /** This backend also cleaning up {@code left} (chunk stores the filter no longer uses). */
  SnapshotBackend leaving(List<ChunkStore> left);

  /**
   * This backend with every chunk ConfigMap it writes stamped {@value
   * ManifestWriter#ANNOTATION_PUBLISHED_BY} = {@code stamp} (null: no stamp).
   */
  SnapshotBackend stampedAs(String stamp);

  /**
   * Charges the chunks of a new version before any is written, to the budget of where they go:
   * etcd's write budget {@code etcd} for chunk ConfigMaps, the store's stored-bytes and upload
   * budgets for objects.
   *
   * @param etcdCost what the chunks cost etcd as ConfigMaps ({@link PublishPlan#writeCost})
   * @param chunkBytes their bytes
   * @return what is reserved until the version is written or has failed (close it then)
   * @throws PublishException the refusal of the budget that has no room; nothing is charged to it
   */
  StoreReservations.Reservation chargeChunks(
      WriteBudget etcd,
      String namespace,
      String filter,
      long etcdCost,
      long chunkBytes,
      Instant now)
      throws PublishException;

  /**
   * Why no chunk of {@code filter} could be written here now beyond etcd's write budget (an object
   * store's upload budget is used up), or empty.
   */
  Optional<PublishException> exhausted(String filter, Instant now);

  /**
   * The namespace budget a new version's plan is checked against: {@code etcd}, the namespace's
   * share of etcd, when the chunks go there; unlimited when they go elsewhere (the store's own
   * budget applies to them when they are charged).
   */
  PublishPlan.Budget namespaceBudget(PublishPlan.Budget etcd);

  /** The largest snapshot a build for this backend may produce. */
  SizeLimit sizeLimit();

  /**
   * The largest snapshot in bytes, and the operator setting that sets it (named in the refusal).
   */
  record SizeLimit(long bytes, String setting) {

    /** No bound of the backend's own (a store built for tools and tests). */
    public static final SizeLimit NONE = new SizeLimit(Long.MAX_VALUE, "none");
  }
}
