package io.bloomoperator.publish;

import io.bloomoperator.api.BloomFilter;
import io.bloomoperator.snapshot.ChunkStore;
import io.bloomoperator.snapshot.ConfigMapChunkStore;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The default backend: chunk ConfigMaps in the filter's namespace, owned by the filter, charged to
 * etcd's write budget and to the namespace's share of etcd.
 */
public final class ConfigMapBackend implements SnapshotBackend {

  private final KubernetesClient client;
  private final BloomFilter owner;
  private final String stamp;
  private final ConfigMapChunkStore chunks;
  private final List<ChunkStore> former;
  private final SizeLimit sizeLimit;

  private ConfigMapBackend(
      KubernetesClient client,
      BloomFilter owner,
      String stamp,
      List<ChunkStore> former,
      SizeLimit sizeLimit) {
    this.client = client;
    this.owner = owner;
    this.stamp = stamp;
    this.chunks =
        ConfigMapChunkStore.writer(
            client,
            owner.getMetadata().getNamespace(),
            owner.getMetadata().getName(),
            ManifestComposer.ownerReference(owner),
            stamp == null ? Map.of() : Map.of(ManifestWriter.ANNOTATION_PUBLISHED_BY, stamp));
    this.former = former;
    this.sizeLimit = sizeLimit;
  }

  /** {@code owner}'s chunk ConfigMaps, unstamped, with no size limit of their own. */
  public static ConfigMapBackend of(KubernetesClient client, BloomFilter owner) {
    return new ConfigMapBackend(client, owner, null, List.of(), SizeLimit.NONE);
  }

  /** This backend with builds bounded by {@code limit}. */
  public ConfigMapBackend limitedTo(SizeLimit limit) {
    return new ConfigMapBackend(client, owner, stamp, former, limit);
  }

  @Override
  public ChunkStore chunks() {
    return chunks;
  }

  @Override
  public String location() {
    return null;
  }

  @Override
  public List<ChunkStore> former() {
    return former;
  }

  @Override
  public SnapshotBackend leaving(List<ChunkStore> left) {
    if (left.isEmpty()) {
      return this;
    }
    List<ChunkStore> all = new ArrayList<>(former);
    all.addAll(left);
    return new ConfigMapBackend(client, owner, stamp, List.copyOf(all), sizeLimit);
  }

  @Override
  public ConfigMapBackend stampedAs(String stamp) {
    return new ConfigMapBackend(client, owner, stamp, former, sizeLimit);
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
    Optional<WriteBudget.Refusal> refused = etcd.charge(namespace, filter, etcdCost, now);
    if (refused.isPresent()) {
      throw WriteBudgetExceeded.of(refused.get(), etcdCost);
    }
    return StoreReservations.Reservation.NONE;
  }

  @Override
  public Optional<PublishException> exhausted(String filter, Instant now) {
    return Optional.empty();
  }

  @Override
  public PublishPlan.Budget namespaceBudget(PublishPlan.Budget etcd) {
    return etcd;
  }

  @Override
  public SizeLimit sizeLimit() {
    return sizeLimit;
  }
}
