package io.bloomoperator.publish;

import java.time.Instant;
import java.util.Optional;

/**
 * The one rule by which a new version's writes are charged before anything is written, for a
 * build's publish and a roll-back alike: its chunks to the budget of where they go, as the store's
 * {@link SnapshotBackend#chargeChunks backend} says (etcd's {@link WriteBudget} for chunk
 * ConfigMaps; the store's stored-bytes and upload budgets, {@link StoreBudget}, for objects), its
 * manifest ConfigMap to etcd's write budget at every write by the store's manifest writer ({@link
 * SnapshotStore#chargingManifestsTo}), whatever the backend.
 */
public final class PublishCharges {

  private final WriteBudget etcd;

  public PublishCharges(WriteBudget etcd) {
    this.etcd = etcd;
  }

  /** The etcd write budget the manifests are charged to as well. */
  public WriteBudget etcd() {
    return etcd;
  }

  /**
   * Charges the chunks of a new version of {@code filter} written through {@code store}.
   *
   * @param etcdCost what they cost etcd as chunk ConfigMaps ({@link PublishPlan#writeCost})
   * @param chunkBytes their bytes, what they add to an object store
   * @return the store bytes reserved for the upload ({@link StoreBudget#reserve}): close it once
   *     the version is written or has failed
   * @throws PublishException {@link WriteBudgetExceeded}, or a store budget's refusal; nothing is
   *     charged to the budget that refused, nothing reserved
   */
  public StoreReservations.Reservation newVersion(
      SnapshotStore store,
      String namespace,
      String filter,
      long etcdCost,
      long chunkBytes,
      Instant now)
      throws PublishException {
    return store.backend().chargeChunks(etcd, namespace, filter, etcdCost, chunkBytes, now);
  }

  /**
   * Why nothing {@code filter} would publish through {@code store} could be written now (its etcd
   * or upload budget is used up), or empty: checked before a build loads the source.
   */
  public Optional<PublishException> exhausted(
      SnapshotStore store, String namespace, String filter, Instant now) {
    Optional<PublishException> spent =
        etcd.exhausted(namespace, filter, now)
            .<PublishException>map(WriteBudgetExceeded::exhausted);
    return spent.or(() -> store.backend().exhausted(filter, now));
  }
}
