package io.bloomoperator.reconcile;

import io.bloomoperator.snapshot.SnapshotNames;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Sums the data of every chunk ConfigMap the API server accepted, as a watch sees them: what the
 * operator wrote to etcd, deleted chunks included (etcd keeps them in its history until the API
 * server compacts it).
 */
public final class ChunkWrites implements Watcher<ConfigMap> {

  /**
   * Counts the chunks written in {@code namespace} from now on: the watch starts at the current
   * resourceVersion (a watch without one would first replay every existing object as ADDED).
   */
  public static Watch watch(KubernetesClient client, String namespace, ChunkWrites writes) {
    String now =
        client
            .configMaps()
            .inNamespace(namespace)
            .list(new ListOptionsBuilder().withLimit(1L).build())
            .getMetadata()
            .getResourceVersion();
    return client.configMaps().inNamespace(namespace).withResourceVersion(now).watch(writes);
  }

  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong chunks = new AtomicLong();

  /** Chunk data bytes seen so far. */
  public long bytes() {
    return bytes.get();
  }

  /** Chunk ConfigMaps seen so far. */
  public long chunks() {
    return chunks.get();
  }

  @Override
  public void eventReceived(Action action, ConfigMap cm) {
    var labels = cm.getMetadata().getLabels();
    if (action == Action.ADDED
        && labels != null
        && SnapshotNames.ROLE_CHUNK.equals(labels.get(SnapshotNames.LABEL_ROLE))
        && cm.getBinaryData() != null) {
      chunks.incrementAndGet();
      cm.getBinaryData()
          .values()
          .forEach(b64 -> bytes.addAndGet(Base64.getDecoder().decode(b64).length));
    }
  }

  @Override
  public void onClose(WatcherException cause) {}
}
