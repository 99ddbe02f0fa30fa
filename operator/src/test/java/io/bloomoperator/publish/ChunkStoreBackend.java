package io.bloomoperator.publish;

import io.bloomoperator.snapshot.ChunkStore;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A backend for tests of the publish code: chunks in any {@link ChunkStore} under a location name,
 * charged to nothing, no size limit, no former place.
 */
final class ChunkStoreBackend implements SnapshotBackend {

  private final ChunkStore chunks;
  private final String location;

  ChunkStoreBackend(ChunkStore chunks, String location) {
    this.chunks = chunks;
    this.location = location;
  }

  @Override
  public ChunkStore chunks() {
    return chunks;
  }

  @Override
  public String location() {
    return location;
  }

  @Override
  public List<ChunkStore> former() {
    return List.of();
  }

  @Override
  public SnapshotBackend leaving(List<ChunkStore> left) {
    return this;
  }

  @Override
  public SnapshotBackend stampedAs(String stamp) {
    return this;
  }

  @Override
  public StoreReservations.Reservation chargeChunks(
      WriteBudget etcd,
      String namespace,
      String filter,
      long etcdCost,
      long chunkBytes,
      Instant now) {
    return StoreReservations.Reservation.NONE;
  }

  @Override
  public Optional<PublishException> exhausted(String filter, Instant now) {
    return Optional.empty();
  }

  @Override
  public PublishPlan.Budget namespaceBudget(PublishPlan.Budget etcd) {
    return PublishPlan.Budget.unlimited();
  }

  @Override
  public SizeLimit sizeLimit() {
    return SizeLimit.NONE;
  }
}
