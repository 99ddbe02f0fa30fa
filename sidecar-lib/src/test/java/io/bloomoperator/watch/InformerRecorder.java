package io.bloomoperator.watch;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Sees every manifest informer a watcher creates (through {@link
 * BloomFilterWatcher.Builder#onInformerCreated}), to count restarts and to stop one the way fabric8
 * does when it gives up.
 */
final class InformerRecorder implements Consumer<SharedIndexInformer<ConfigMap>> {

  private final List<SharedIndexInformer<ConfigMap>> created = new CopyOnWriteArrayList<>();

  @Override
  public void accept(SharedIndexInformer<ConfigMap> informer) {
    created.add(informer);
  }

  /** How many informers were started: 1 plus the number of restarts. */
  int starts() {
    return created.size();
  }

  /**
   * Completes the latest informer's {@code stopped()} future exceptionally, as fabric8 does when an
   * informer gives up on a non-410 error, and returns once the watcher has reacted to it by
   * stopping that informer's watch (it schedules the restart in the same step).
   */
  void failLatest(Throwable cause) {
    SharedIndexInformer<ConfigMap> latest = created.get(created.size() - 1);
    latest.stopped().toCompletableFuture().completeExceptionally(cause);
    await().atMost(Duration.ofSeconds(10)).until(() -> !latest.isWatching());
  }
}
