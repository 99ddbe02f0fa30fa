package io.bloomoperator.backend;

import io.bloomoperator.publish.PublishException;
import io.bloomoperator.publish.PublishPlan;
import io.bloomoperator.publish.SnapshotBackend;
import io.bloomoperator.publish.StoreBudget;
import io.bloomoperator.publish.StoreReservations;
import io.bloomoperator.publish.WriteBudget;
import io.bloomoperator.snapshot.ChunkStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Chunks as objects in an administrator's S3-compatible store: charged to the namespace's
 * stored-bytes and upload budgets in that store instead of etcd's, bounded by the store's snapshot
 * limit. The filter's chunk ConfigMaps from before it moved here are a former place, cleaned up
 * like chunks of replaced versions.
 */
final class ObjectStoreBackend implements SnapshotBackend {

  private final ChunkStore chunks;
  private final String storeName;
  private final StoreBudget budget;
  private final SnapshotBackend configMaps;
  private final List<ChunkStore> left;
  private final SizeLimit sizeLimit;

  /**
   * @param chunks the filter's chunks in the store
   * @param storeName the BloomStore's name, which manifests record
   * @param budget the namespace's budgets in the store
   * @param configMaps where the chunks were as ConfigMaps (a former place)
   */
  ObjectStoreBackend(
      ChunkStore chunks,
      String storeName,
      StoreBudget budget,
      SnapshotBackend configMaps,
      List<ChunkStore> left,
      SizeLimit sizeLimit) {
    this.chunks = chunks;
    this.storeName = storeName;
    this.budget = budget;
    this.configMaps = configMaps;
    this.left = left;
    this.sizeLimit = sizeLimit;
  }

  @Override
  public ChunkStore chunks() {
    return chunks;
  }

  @Override
  public String location() {
    return storeName;
  }

  @Override
  public List<ChunkStore> former() {
    List<ChunkStore> all = new ArrayList<>();
    all.add(configMaps.chunks());
    all.addAll(left);
    return List.copyOf(all);
  }

  @Override
  public SnapshotBackend leaving(List<ChunkStore> more) {
    if (more.isEmpty()) {
      return this;
    }
    List<ChunkStore> all = new ArrayList<>(left);
    all.addAll(more);
    return new ObjectStoreBackend(
        chunks, storeName, budget, configMaps, List.copyOf(all), sizeLimit);
  }

  @Override
  public SnapshotBackend stampedAs(String stamp) {
    return new ObjectStoreBackend(
        chunks, storeName, budget, configMaps.stampedAs(stamp), left, sizeLimit);
  }

  @Override
  public StoreReservations.Reservation chargeChunks(
      WriteBudget etcd,
      String namespace,
      String filter,
      long etcdCost,
      long chunkBytes,
      Instant now)
      throws PublishException {
    StoreReservations.Reservation reserved = budget.reserve(chunkBytes);
    try {
      budget.chargeUpload(filter, chunkBytes, now);
    } catch (PublishException e) {
      reserved.close();
      throw e;
    }
    return reserved;
  }

  @Override
  public Optional<PublishException> exhausted(String filter, Instant now) {
    return budget.uploadsExhausted(filter, now);
  }

  @Override
  public PublishPlan.Budget namespaceBudget(PublishPlan.Budget etcd) {
    return PublishPlan.Budget.unlimited();
  }

  @Override
  public SizeLimit sizeLimit() {
    return sizeLimit;
  }
}
