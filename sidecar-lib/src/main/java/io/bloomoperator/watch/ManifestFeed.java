package io.bloomoperator.watch;

import io.fabric8.kubernetes.api.model.ConfigMap;
import java.util.function.Consumer;

/**
 * Where a {@link WatchLoop} learns of its filter's manifest: pushed changes (the watch) and a
 * direct read (the resync poll). {@link ManifestInformer} in production; a test feeds events by
 * hand.
 */
interface ManifestFeed {

  /**
   * Starts delivering events, asynchronously (an unreachable API server must not block the caller);
   * both callbacks run on the watcher thread.
   *
   * @param onChanged the manifest ConfigMap, when it is added or updated
   * @param onDeleted when the manifest ConfigMap is deleted
   */
  void start(Consumer<ConfigMap> onChanged, Runnable onDeleted);

  /**
   * Reads the manifest ConfigMap now (on the watcher thread), or null if there is none.
   *
   * @throws io.fabric8.kubernetes.client.KubernetesClientException if the API server does not
   *     answer
   */
  ConfigMap read();

  /** Stops delivering events for good. Called on the watcher thread. */
  void close();
}
