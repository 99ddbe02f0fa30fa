package io.bloomoperator.testing.cluster;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Fills the etcd of a {@link RestartableCluster} started with a small quota, the way other tenants
 * of a cluster do: ConfigMaps of random (incompressible) bytes in a namespace of their own. It
 * frees space the way an administrator does: delete, compact, defragment, disarm the alarm.
 */
public final class EtcdFiller implements AutoCloseable {

  private static final int MAX_FILLER_BYTES = 100 * 1024;
  private static final int MIN_FILLER_BYTES = 4 * 1024;

  private final RestartableCluster cluster;
  private final long quotaBytes;
  private final String namespace;
  private final KubernetesClient client;
  private final Random random = new Random(5);
  private final List<String> fillers = new ArrayList<>();
  private int created;

  /**
   * @param quotaBytes the quota the cluster's etcd was started with
   * @param namespace created here; holds the fillers
   */
  public EtcdFiller(RestartableCluster cluster, long quotaBytes, String namespace) {
    this.cluster = cluster;
    this.quotaBytes = quotaBytes;
    this.namespace = namespace;
    Config config = cluster.clientConfig(0);
    // A refused write fails at once instead of after fabric8's ~20 s of retries of a 500.
    config.setRequestRetryBackoffLimit(0);
    this.client = new KubernetesClientBuilder().withConfig(config).build();
    client
        .namespaces()
        .resource(
            new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
        .create();
  }

  /** Writes until etcd refuses a write: its NOSPACE alarm is raised. Returns the fillers added. */
  public int fillUntilRefused() {
    int before = fillers.size();
    for (int i = 0; i < 100_000; i++) {
      if (!add(MAX_FILLER_BYTES)) {
        return fillers.size() - before;
      }
    }
    throw new IllegalStateException("etcd never refused a write");
  }

  /**
   * Writes until at most {@code gapBytes} is left below the quota (etcd refuses a write that would
   * take its database size beyond it). The database grows by somewhat more than what is written
   * (bbolt copies and splits pages), so what is left may end up well below {@code gapBytes}.
   */
  public void fillUntilGap(long gapBytes) {
    int maxStep = MAX_FILLER_BYTES;
    for (int i = 0; i < 100_000; i++) {
      long left = gapBytes();
      if (left <= gapBytes) {
        return;
      }
      // Small steps near the end: a write can grow the database by more than its size (bbolt
      // copies and splits pages), so a big last step could overshoot the gap.
      int size = (int) Math.max(MIN_FILLER_BYTES, Math.min(maxStep, (left - gapBytes) / 4));
      if (!add(size)) {
        // Overshot anyway (etcd refused with more than the gap apparently left; seen in CI with
        // 776 KiB "left"): take the last filler back, free the space and approach in smaller steps.
        if (maxStep == MIN_FILLER_BYTES) {
          throw new IllegalStateException(
              "etcd refused a " + size + "-byte write with " + left + " bytes left");
        }
        freeSpace(1);
        maxStep = Math.max(MIN_FILLER_BYTES, maxStep / 2);
      }
    }
    throw new IllegalStateException("etcd's database does not grow");
  }

  /** What is left below the quota now. */
  public long gapBytes() {
    return quotaBytes - cluster.etcdDbSize();
  }

  /**
   * Deletes the last {@code count} fillers (all: {@code Integer.MAX_VALUE}), then compacts,
   * defragments and disarms etcd, as an administrator does.
   */
  public void freeSpace(int count) {
    while (count-- > 0 && !fillers.isEmpty()) {
      client
          .configMaps()
          .inNamespace(namespace)
          .withName(fillers.remove(fillers.size() - 1))
          .delete();
    }
    cluster.compactEtcd();
    cluster.defragmentEtcd();
    cluster.disarmEtcdSpaceAlarm();
  }

  /** Fillers currently stored. */
  public int fillers() {
    return fillers.size();
  }

  /**
   * Makes sure a write of {@code bytes} still fits, since the gap etcd reports is only an estimate
   * (CI saw a write refused with 776 KiB "left"): writes a probe of that size, and while it is
   * refused frees one filler at a time. The probe is deleted and its space reclaimed again.
   */
  public void ensureRoomFor(int bytes) {
    for (int i = 0; i < 50; i++) {
      String probe = "probe-" + created++;
      if (create(probe, bytes)) {
        client.configMaps().inNamespace(namespace).withName(probe).delete();
        freeSpace(0);
        return;
      }
      freeSpace(1);
    }
    throw new IllegalStateException("no room for " + bytes + " bytes after freeing 50 fillers");
  }

  private boolean add(int bytes) {
    String name = "filler-" + created++;
    if (create(name, bytes)) {
      fillers.add(name);
      return true;
    }
    return false;
  }

  private boolean create(String name, int bytes) {
    byte[] data = new byte[bytes];
    random.nextBytes(data);
    try {
      client
          .configMaps()
          .inNamespace(namespace)
          .resource(
              new ConfigMapBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .endMetadata()
                  .withBinaryData(Map.of("data", Base64.getEncoder().encodeToString(data)))
                  .build())
          .create();
      return true;
    } catch (KubernetesClientException e) {
      if (e.getMessage() != null && e.getMessage().contains("database space exceeded")) {
        return false;
      }
      throw e;
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
